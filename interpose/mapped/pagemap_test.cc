#include "interpose/mapped/pagemap.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

constexpr size_t kPage = 4096;
constexpr uint32_t kPages = 512;

// 512 pages of fresh anonymous memory (no huge pages, so each page written
// is mapped alone), of which the pages `pattern` says are written.
class TouchedPages {
 public:
  explicit TouchedPages(const std::vector<bool>& pattern) {
    base_ = static_cast<char*>(
        mmap(nullptr, kPages * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) {
      base_ = nullptr;
      return;
    }
    madvise(base_, kPages * kPage, MADV_NOHUGEPAGE);
    for (uint32_t i = 0; i < pattern.size(); ++i) {
      if (pattern[i]) base_[i * kPage] = 1;
    }
  }
  ~TouchedPages() {
    if (base_ != nullptr) munmap(base_, kPages * kPage);
  }
  uint64_t first_page() const { return reinterpret_cast<uintptr_t>(base_) / kPage; }
  bool ok() const { return base_ != nullptr; }

 private:
  char* base_ = nullptr;
};

// Every fourth page, a run of 40, and the last page: more runs (130) than
// one PAGEMAP_SCAN call returns, so the scan is asked again where it
// stopped.
std::vector<bool> Pattern() {
  std::vector<bool> p(kPages, false);
  for (uint32_t i = 0; i < 400; i += 4) p[i] = true;
  for (uint32_t i = 420; i < 460; ++i) p[i] = true;
  for (uint32_t i = 470; i < 510; i += 2) p[i] = true;
  p[kPages - 1] = true;
  return p;
}

std::vector<bool> Present(uint64_t first_page, uint32_t n, PagemapMethod* method) {
  int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  bool present[kPages];
  bool ok = ReadPresentPages(fd, first_page, n, present, method);
  close(fd);
  EXPECT_TRUE(ok);
  return std::vector<bool>(present, present + n);
}

class PagemapTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(pages_.ok()); }
  const std::vector<bool> pattern_ = Pattern();
  const TouchedPages pages_{pattern_};
};

TEST_F(PagemapTest, ReadingTheEntriesFindsTheTouchedPages) {
  PagemapMethod method = PagemapMethod::kRead;
  EXPECT_EQ(Present(pages_.first_page(), kPages, &method), pattern_);
  EXPECT_EQ(method, PagemapMethod::kRead);
}

// The scan answers what the read does, over the whole range and over parts
// that start and end inside runs. Linux before 6.7 has no PAGEMAP_SCAN: the
// method falls back to reading, and answers the same.
TEST_F(PagemapTest, ScanningAnswersAsReadingDoes) {
  PagemapMethod method = PagemapMethod::kScan;
  EXPECT_EQ(Present(pages_.first_page(), kPages, &method), pattern_);
  for (auto [first, n] : {std::pair<uint32_t, uint32_t>{425, 30}, {3, 9}, {398, 30}, {511, 1}}) {
    std::vector<bool> want(pattern_.begin() + first, pattern_.begin() + first + n);
    EXPECT_EQ(Present(pages_.first_page() + first, n, &method), want) << first << " " << n;
  }
  // Linux 6.7 and later must have scanned.
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) == 0 && sscanf(u.release, "%d.%d", &major, &minor) == 2 &&
      (major > 6 || (major == 6 && minor >= 7))) {
    EXPECT_EQ(method, PagemapMethod::kScan) << u.release;
  }
}

// A descriptor that cannot scan (here /dev/zero: ENOTTY, as a kernel before
// 6.7 answers, or EPERM from a seccomp profile) switches the method to
// reading for good; /dev/zero reads as entries of no page present.
TEST(PagemapRangeTest, ADescriptorThatCannotScanIsReadFromThenOn) {
  int fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  PagemapMethod method = PagemapMethod::kScan;
  bool present[8];
  memset(present, 1, sizeof(present));
  EXPECT_TRUE(ReadPresentPages(fd, 1000, 8, present, &method));
  EXPECT_EQ(method, PagemapMethod::kRead);
  for (bool p : present) EXPECT_FALSE(p);
  close(fd);
}

TEST(PagemapRangeTest, RefusesAnEmptyOrOversizedRange) {
  PagemapMethod method = PagemapMethod::kScan;
  bool present[kPages + 1];
  EXPECT_FALSE(ReadPresentPages(-1, 0, 0, present, &method));
  EXPECT_FALSE(ReadPresentPages(-1, 0, kPages + 1, present, &method));
}

}  // namespace
}  // namespace iotap::interpose
