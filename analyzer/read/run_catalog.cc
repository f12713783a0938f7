#include "analyzer/read/run_catalog.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace iotap::analyzer {

namespace {

// The header packet sits in the first frame, which is small: the first of
// these prefixes that holds it is read (the first is usually enough, and
// every complete frame in the prefix gets decoded, so it is kept short).
constexpr size_t kHeadBytes[] = {32 * 1024, 256 * 1024};

class HeaderCatcher : public TraceVisitor {
 public:
  void OnProcess(const ProcessTrace& p) override {
    header = p.header();
    found = true;
  }
  bool Satisfied() const override { return found; }
  ProcessHeader header;
  bool found = false;
};

absl::StatusOr<ProcessHeader> ReadHeader(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot open: ", std::strerror(errno)));
  }
  std::string head;
  absl::Status s;
  for (size_t prefix : kHeadBytes) {
    size_t got = head.size();
    head.resize(prefix);
    ssize_t n = 0;
    while (got < head.size() && (n = read(fd, head.data() + got, head.size() - got)) > 0) {
      got += static_cast<size_t>(n);
    }
    bool whole_file = got < head.size();
    head.resize(got);
    HeaderCatcher catcher;
    std::vector<ReadIssue> ignored;  // the prefix is cut on purpose
    s = ReadTraceBytes(path, head, &catcher, &ignored);
    if (catcher.found) {
      close(fd);
      return catcher.header;
    }
    if (whole_file) break;
  }
  close(fd);
  return s.ok() ? absl::DataLossError("no process header") : s;
}

// The latest monotonic time in the last readable frame of `path`: clock
// snapshots, the end record and event ends. Reads a little of the file's
// tail, more if no whole frame fits.
class LatestTime : public TraceVisitor {
 public:
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    for (const Event& e : b.events) latest = std::max(latest, e.end_ns);
  }
  void OnPacket(const ProcessTrace& p, const Packet& packet) override {
    if (packet.has_clock()) {
      latest = std::max(latest, static_cast<int64_t>(packet.clock().monotonic_ns()));
      last_clock = packet.clock();
    }
    if (packet.has_end()) {
      latest = std::max(latest, static_cast<int64_t>(packet.end().monotonic_ns()));
      // The end record reads both clocks too.
      if (packet.end().realtime_ns() > 0) {
        last_clock.emplace();
        last_clock->set_monotonic_ns(packet.end().monotonic_ns());
        last_clock->set_realtime_ns(packet.end().realtime_ns());
      }
    }
  }
  int64_t latest = 0;
  std::optional<ClockSnapshot> last_clock;
};

struct Tail {
  int64_t latest_monotonic_ns = 0;
  std::optional<ClockSnapshot> last_clock;
};

Tail ReadTail(const std::string& path) {
  Tail out;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  off_t size = lseek(fd, 0, SEEK_END);
  int64_t latest = 0;
  for (off_t window : {off_t{64} << 10, off_t{1} << 20, off_t{8} << 20}) {
    off_t start = std::max<off_t>(0, size - window);
    std::string tail(static_cast<size_t>(size - start), '\0');
    if (pread(fd, tail.data(), tail.size(), start) != static_cast<ssize_t>(tail.size())) break;
    // The last frame start that decodes to something.
    for (size_t at = tail.size() >= 4 ? tail.size() - 4 : 0;; --at) {
      if (static_cast<unsigned char>(tail[at]) == 0x28 && static_cast<unsigned char>(tail[at + 1]) == 0xb5 &&
          static_cast<unsigned char>(tail[at + 2]) == 0x2f && static_cast<unsigned char>(tail[at + 3]) == 0xfd) {
        LatestTime visitor;
        std::vector<ReadIssue> ignored;
        // A tail cut mid-frame or a false frame start is expected here; what
        // decoded is in the visitor either way.
        ReadTraceBytes(path, tail.substr(at), &visitor, &ignored).IgnoreError();
        if (visitor.latest > 0) {
          latest = visitor.latest;
          out.last_clock = visitor.last_clock;
          break;
        }
      }
      if (at == 0) break;
    }
    if (latest > 0 || start == 0) break;
  }
  close(fd);
  out.latest_monotonic_ns = latest;
  return out;
}

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool IsPython(const CatalogEntry& e) {
  return absl::StartsWith(Basename(e.header.executable()), "python");
}

std::string Argv(const CatalogEntry& e) { return absl::StrJoin(e.header.argv(), " "); }

}  // namespace

void ClassifyProcesses(RunCatalog* catalog) {
  std::vector<CatalogEntry>& es = catalog->entries;
  std::sort(es.begin(), es.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
    return a.start_unix_ns != b.start_unix_ns ? a.start_unix_ns < b.start_unix_ns
                                              : a.header.pid() < b.header.pid();
  });
  // Images of one process (same host and pid) in start order; the last image
  // of a pid started before a child is that child's parent.
  std::map<std::pair<std::string, int>, std::vector<int>> images;
  std::set<std::string> hosts;
  for (int i = 0; i < static_cast<int>(es.size()); ++i) {
    images[{es[i].header.hostname(), es[i].header.pid()}].push_back(i);
    hosts.insert(es[i].header.hostname());
  }
  catalog->hosts.assign(hosts.begin(), hosts.end());
  for (auto& [key, list] : images) {
    for (size_t k = 0; k + 1 < list.size(); ++k) es[list[k]].replaced_by_exec = true;
  }
  for (int i = 0; i < static_cast<int>(es.size()); ++i) {
    auto it = images.find({es[i].header.hostname(), es[i].header.ppid()});
    if (it == images.end()) continue;
    for (int candidate : it->second) {
      if (candidate != i && es[candidate].start_unix_ns <= es[i].start_unix_ns) {
        es[i].parent = candidate;
      }
    }
  }
  // Roles, parents first (entries are in start order, parents start first).
  for (CatalogEntry& e : es) {
    std::string argv = Argv(e);
    const CatalogEntry* parent = e.parent >= 0 ? &es[e.parent] : nullptr;
    bool forked = e.header.origin() == ProcessHeader::ORIGIN_FORK;
    if (absl::StrContains(argv, "multiprocessing.resource_tracker") ||
        absl::StrContains(argv, "multiprocessing.forkserver") || e.replaced_by_exec) {
      e.role = report::HELPER;
    } else if (IsPython(e) && absl::StrContains(argv, "multiprocessing.spawn")) {
      e.role = report::LOADER;
    } else if (forked && IsPython(e) && parent != nullptr && IsPython(*parent)) {
      e.role = report::LOADER;
    } else if (IsPython(e) || e.header.rank() >= 0) {
      e.role = report::TRAINER;
    } else {
      e.role = report::HELPER;
    }
  }
  bool any_trainer = std::any_of(es.begin(), es.end(), [](const CatalogEntry& e) {
    return e.role == report::TRAINER;
  });
  if (!any_trainer) {
    // A job that is not Python (dd, tar, a C++ trainer): its first process
    // that did not only exec something else is what the user ran.
    for (CatalogEntry& e : es) {
      if (e.parent < 0 && !e.replaced_by_exec) {
        e.role = report::TRAINER;
        break;
      }
    }
  }
  for (const CatalogEntry& e : es) catalog->end_unix_ns = std::max(catalog->end_unix_ns, e.end_unix_ns);
  for (CatalogEntry& e : es) {
    if (e.role != report::LOADER) continue;
    for (int a = e.parent; a >= 0; a = es[a].parent) {
      if (es[a].role == report::TRAINER) {
        e.trainer = a;
        break;
      }
    }
  }
  catalog->start_unix_ns = es.empty() ? 0 : es.front().start_unix_ns;
}

RunCatalog CatalogTraceFiles(const std::vector<std::string>& files, int threads) {
  // Each file's header and tail, read in parallel into its own slot; the
  // catalog is then assembled in the files' order, as one thread would.
  std::vector<absl::StatusOr<ProcessHeader>> headers(files.size());
  std::vector<Tail> tails(files.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < files.size(); i = next++) {
      headers[i] = ReadHeader(files[i]);
      if (headers[i].ok()) tails[i] = ReadTail(files[i]);
    }
  };
  threads = std::max(1, std::min<int>(threads, static_cast<int>(files.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  RunCatalog catalog;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    const absl::StatusOr<ProcessHeader>& header = headers[i];
    if (!header.ok()) {
      catalog.issues.push_back(
          ReadIssue{path, 0, 0, false, std::string(header.status().message())});
      continue;
    }
    CatalogEntry e;
    e.path = path;
    e.header = *header;
    e.start_unix_ns = static_cast<int64_t>(header->start_realtime_ns());
    const Tail& t = tails[i];
    int64_t tail = t.latest_monotonic_ns;
    e.end_unix_ns = tail > 0 ? tail - static_cast<int64_t>(header->start_monotonic_ns()) + e.start_unix_ns
                             : e.start_unix_ns;
    if (t.last_clock.has_value() && t.last_clock->realtime_ns() > 0) {
      // The wall clock runs with the monotonic one (NTP slews both); only a
      // step (settimeofday, an NTP step) moves one against the other.
      e.wall_clock_step_ns =
          (static_cast<int64_t>(t.last_clock->realtime_ns()) - e.start_unix_ns) -
          (static_cast<int64_t>(t.last_clock->monotonic_ns()) -
           static_cast<int64_t>(header->start_monotonic_ns()));
    }
    catalog.entries.push_back(std::move(e));
  }
  ClassifyProcesses(&catalog);
  return catalog;
}

}  // namespace iotap::analyzer
