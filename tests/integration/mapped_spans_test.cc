// Mapped reads' spans against ground truth, by a real program
// (programs/mapped_samples.c) reading samples of a warm file through its
// mapping at random, a DataLoader worker's pattern. Where the file is cached
// in single pages, each fault maps its 64 KiB window, aligned in the address
// space (not in the file): the pages the kernel mapped are known from the
// samples the program printed and its mapping's address, and the spans of
// the faults must be exactly those pages, each given to one fault, one fault
// per window. Where it is cached in large folios, which a fault maps whole,
// the spans must still cover every page read, none twice. Every span is
// looked at (none estimated) while the mapping lasts.

#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "iotap/report.pb.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kFilePages = 16384;  // 64 MiB: 32 page tables of 2 MiB

// A file of known bytes, locked in the page cache while the test runs (by
// a mapping of the test's own, mlock'ed): this VM's kernel pages out memory
// it finds cold (DAMON's pageout), a few pages here and there, and a page
// read again from storage is a fault of its own. Written whole, ext4 on
// Linux 6.16 and later caches the file in large folios (2 MiB here), which
// a fault maps whole; evicted and read back a page at a time without
// readahead (POSIX_FADV_RANDOM), in single pages, which a fault maps by its
// window.
class CachedFile {
 public:
  // The pages of `fd` (kFilePages long) in the page cache (mincore).
  static uint64_t Cached(int fd) {
    void* map = mmap(nullptr, kFilePages * kPage, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) return kFilePages;
    std::vector<unsigned char> in(kFilePages);
    uint64_t n = kFilePages;
    if (mincore(map, kFilePages * kPage, in.data()) == 0) {
      n = 0;
      for (unsigned char c : in) n += c & 1;
    }
    munmap(map, kFilePages * kPage);
    return n;
  }

  CachedFile(const TempDir& dir, bool single_pages) : path_(dir.Sub("samples.bin")) {
    std::string bytes(kFilePages * kPage, '\0');
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
    WriteFile(path_, bytes);
    int fd = open(path_.c_str(), O_RDONLY);
    EXPECT_GE(fd, 0) << path_;
    if (single_pages) {
      // Every page out first: a large folio of the write left in the cache
      // (DONTNEED passes over folios it finds busy) is mapped whole.
      EXPECT_EQ(fdatasync(fd), 0);
      for (int i = 0; i < 50 && Cached(fd) > 0; ++i) {
        EXPECT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
        if (Cached(fd) > 0) usleep(10000);
      }
      EXPECT_EQ(Cached(fd), 0u) << path_ << " stays in the page cache";
      EXPECT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
      char page[kPage];
      for (uint64_t p = 0; p < kFilePages; ++p) {
        if (pread(fd, page, kPage, static_cast<off_t>(p * kPage)) != static_cast<ssize_t>(kPage)) {
          ADD_FAILURE() << path_ << ": short read at page " << p;
          break;
        }
      }
    }
    lock_ = mmap(nullptr, kFilePages * kPage, PROT_READ, MAP_SHARED, fd, 0);
    EXPECT_NE(lock_, MAP_FAILED) << path_;
    if (lock_ != MAP_FAILED && mlock(lock_, kFilePages * kPage) != 0) {
      lock_error_ = strerror(errno);
    }
    close(fd);
  }
  ~CachedFile() {
    if (lock_ != MAP_FAILED) munmap(lock_, kFilePages * kPage);
  }
  const std::string& path() const { return path_; }
  // Why the file could not be locked in the page cache ("" if it is).
  const std::string& lock_error() const { return lock_error_; }

 private:
  std::string path_;
  void* lock_ = MAP_FAILED;
  std::string lock_error_;
};

struct Printed {
  uint64_t map = 0;
  std::vector<uint64_t> samples;
  long sum = -1;
};

Printed Parse(const std::string& out) {
  Printed p;
  std::istringstream in(out);
  for (std::string word; in >> word;) {
    if (word == "map") in >> p.map;
    if (word == "sample") {
      uint64_t first = 0;
      in >> first;
      p.samples.push_back(first);
    }
    if (word == "sum") in >> p.sum;
  }
  return p;
}

// What a run of mapped_samples must show: the pages it read, and where the
// kernel maps by windows (a file cached in single pages), the pages it
// mapped (the 64 KiB windows holding the pages read, aligned in the
// address space), one fault per window.
struct Expected {
  std::set<uint64_t> read;     // file pages
  std::set<uint64_t> mapped;   // file pages
  std::set<uint64_t> windows;  // each window's first file page (clipped)
  long sum = 0;
};

Expected Truth(const Printed& p, uint64_t sample_pages) {
  constexpr uint64_t kWindowPages = 16;
  Expected e;
  const uint64_t map_page = p.map / kPage;
  for (uint64_t first : p.samples) {
    for (uint64_t q = first; q < first + sample_pages; ++q) {
      e.sum += static_cast<long>((q * kPage) % 251);
      e.read.insert(q);
      uint64_t v = map_page + q;
      uint64_t lo = v - v % kWindowPages, hi = lo + kWindowPages;
      lo = lo < map_page ? map_page : lo;
      hi = hi > map_page + kFilePages ? map_page + kFilePages : hi;
      e.windows.insert(lo - map_page);
      for (uint64_t w = lo; w < hi; ++w) e.mapped.insert(w - map_page);
    }
  }
  return e;
}

// The faults within 32 pages of file page `page`: "fault page: span pages
// [first, end), flags", for a failure's message.
std::string Near(const std::vector<const LoadedEvent*>& faults, uint64_t page) {
  std::string out;
  for (const LoadedEvent* e : faults) {
    const uint64_t at = e->aux / kPage;
    if (at + 32 < page || at > page + 32) continue;
    absl::StrAppend(&out, " ", at, ": [", e->offset / kPage, ", ", (e->offset + e->result) / kPage,
                    ")", (e->flags & FLAG_INCOMPLETE) ? " estimated" : "", ";");
  }
  return out;
}

// The fault samples the kernel dropped, as the process's last FaultSampling
// packet says.
uint64_t LostFaults(const LoadedProcess& p) {
  uint64_t lost = 0;
  for (const Packet& packet : p.packets) {
    if (packet.has_fault_sampling()) lost = packet.fault_sampling().lost_faults();
  }
  return lost;
}

struct Case {
  const char* name;
  uint64_t samples;
  uint64_t sample_pages;
  bool single_pages;  // the file cached in single pages (CachedFile)
};

class MappedSpansTest : public ::testing::TestWithParam<Case> {};

TEST_P(MappedSpansTest, SpansAreThePagesTheKernelMappedEachGivenOnce) {
  const Case& c = GetParam();
  TempDir dir;
  CachedFile cached(dir, c.single_pages);
  const std::string& data = cached.path();
  if (!cached.lock_error().empty()) {
    // (Root, as CI runs, may lock it; others need RLIMIT_MEMLOCK of 64 MiB.)
    GTEST_SKIP() << "mlock of " << data << " refused (" << cached.lock_error()
                 << "): pages the kernel reclaims would fault again";
  }
  std::string trace = dir.Sub("trace");
  std::vector<std::string> argv = {TestProgram("mapped_samples"), data, std::to_string(c.samples),
                                   std::to_string(c.sample_pages), "1000"};
  RunResult r = RunPreloaded(argv, trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Printed printed = Parse(r.out);
  ASSERT_EQ(printed.samples.size(), c.samples) << r.out;
  const Expected truth = Truth(printed, c.sample_pages);
  EXPECT_EQ(printed.sum, truth.sum);

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  std::vector<const LoadedEvent*> faults = run.processes[0].On(data, OP_MAPPED_READ);
  std::map<uint64_t, int> given;  // file page: spans holding it
  std::set<uint64_t> faulted_windows;
  uint64_t estimated = 0, span_bytes = 0;
  for (const LoadedEvent* e : faults) {
    ASSERT_EQ(e->flags & FLAG_MAJOR_FAULT, 0u) << "the file is in the page cache";
    if (e->flags & FLAG_INCOMPLETE) ++estimated;
    span_bytes += static_cast<uint64_t>(e->result);
    for (int64_t at = e->offset; at < e->offset + e->result; at += kPage) ++given[at / kPage];
    const uint64_t page = e->aux / kPage;
    auto window = truth.windows.upper_bound(page);
    ASSERT_NE(window, truth.windows.begin()) << "page " << page;
    faulted_windows.insert(*std::prev(window));
  }
  // Whatever the kernel mapped, each page read is in a span, and no page is
  // given to two faults.
  std::set<uint64_t> spanned;
  for (const auto& [page, n] : given) {
    EXPECT_EQ(n, 1) << "page " << page;
    EXPECT_LT(page, kFilePages);
    spanned.insert(page);
  }
  std::vector<uint64_t> unspanned;
  std::set_difference(truth.read.begin(), truth.read.end(), spanned.begin(), spanned.end(),
                      std::back_inserter(unspanned));
  EXPECT_TRUE(unspanned.empty()) << unspanned.size() << " pages read in no span; the faults near "
                                 << "the first: "
                                 << Near(faults, unspanned.empty() ? 0 : unspanned[0]) << "; "
                                 << LostFaults(run.processes[0]) << " faults lost";
  if (c.single_pages) {
    // One fault per window, and the spans are exactly the windows.
    EXPECT_EQ(faults.size(), truth.windows.size());
    EXPECT_EQ(faulted_windows, truth.windows);
    EXPECT_EQ(spanned, truth.mapped);
  }
  EXPECT_EQ(estimated, 0u);

  // The report's figures of the file are the trace's.
  RunResult json = RunProgram({IotapBinary(), "report", trace, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  report::Report report;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.out, &report).ok());
  ASSERT_EQ(report.mapped_reads().files_size(), 1);
  EXPECT_EQ(report.mapped_reads().files(0).faults(), static_cast<double>(faults.size()));
  EXPECT_EQ(report.mapped_reads().files(0).estimated_spans(), static_cast<double>(estimated));
  EXPECT_EQ(report.mapped_reads().span_bytes(), static_cast<double>(span_bytes));
}

INSTANTIATE_TEST_SUITE_P(Readers, MappedSpansTest,
                         ::testing::Values(Case{"SinglePages", 600, 48, true},
                                           Case{"LargeFolios", 600, 48, false}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace iotap::testing
