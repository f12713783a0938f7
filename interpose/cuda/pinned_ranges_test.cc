#include "interpose/cuda/pinned_ranges.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

class PinnedRangesTest : public ::testing::Test {
 protected:
  void SetUp() override { PinnedResetForTesting(); }
  void TearDown() override { PinnedResetForTesting(); }
};

TEST_F(PinnedRangesTest, EmptyTableSaysPageable) {
  EXPECT_EQ(PinnedLookup(0x1000), HostMemory::kPageable);
  EXPECT_EQ(PinnedLookup(0), HostMemory::kPageable);
}

TEST_F(PinnedRangesTest, BoundsAreHalfOpen) {
  PinnedAdd(0x10000, 0x1000);
  EXPECT_EQ(PinnedLookup(0xffff), HostMemory::kPageable);
  EXPECT_EQ(PinnedLookup(0x10000), HostMemory::kPinned);
  EXPECT_EQ(PinnedLookup(0x10fff), HostMemory::kPinned);
  EXPECT_EQ(PinnedLookup(0x11000), HostMemory::kPageable);
}

TEST_F(PinnedRangesTest, ManyRangesInAnyOrder) {
  // Every other 4 KiB page of 1000, added from both ends towards the middle.
  for (int i = 0; i < 500; ++i) {
    PinnedAdd(0x100000 + 2 * i * 0x1000, 0x1000);
    PinnedAdd(0x100000 + 2 * (999 - i) * 0x1000, 0x1000);
  }
  for (int i = 0; i < 1000; ++i) {
    uintptr_t page = 0x100000 + 2 * i * 0x1000;
    EXPECT_EQ(PinnedLookup(page + 17), HostMemory::kPinned) << i;
    EXPECT_EQ(PinnedLookup(page + 0x1000), HostMemory::kPageable) << i;
  }
}

TEST_F(PinnedRangesTest, RemoveReturnsTheSizeOnlyForAStart) {
  PinnedAdd(0x20000, 0x3000);
  EXPECT_EQ(PinnedRemove(0x21000), 0u);  // inside, not the start
  EXPECT_EQ(PinnedLookup(0x21000), HostMemory::kPinned);
  EXPECT_EQ(PinnedRemove(0x20000), 0x3000u);
  EXPECT_EQ(PinnedLookup(0x21000), HostMemory::kPageable);
  EXPECT_EQ(PinnedRemove(0x20000), 0u);
}

TEST_F(PinnedRangesTest, OverlappingAddReplacesStaleRanges) {
  PinnedAdd(0x30000, 0x1000);
  PinnedAdd(0x32000, 0x1000);
  PinnedAdd(0x40000, 0x1000);
  // Covers the first two (freed behind the shim's back) but not the third.
  PinnedAdd(0x30800, 0x2000);
  EXPECT_EQ(PinnedLookup(0x30000), HostMemory::kPageable);
  EXPECT_EQ(PinnedLookup(0x30800), HostMemory::kPinned);
  EXPECT_EQ(PinnedLookup(0x327ff), HostMemory::kPinned);
  EXPECT_EQ(PinnedLookup(0x32800), HostMemory::kPageable);
  EXPECT_EQ(PinnedLookup(0x40000), HostMemory::kPinned);
  EXPECT_EQ(PinnedRemove(0x30000), 0u);
  EXPECT_EQ(PinnedRemove(0x32000), 0u);
  EXPECT_EQ(PinnedRemove(0x30800), 0x2000u);
  EXPECT_EQ(PinnedRemove(0x40000), 0x1000u);
}

TEST_F(PinnedRangesTest, OverflowMakesMissesUnknown) {
  for (uint32_t i = 0; i < kMaxPinnedRanges; ++i) PinnedAdd(0x1000000 + i * 0x100, 0x80);
  EXPECT_EQ(PinnedLookup(0x10), HostMemory::kPageable);
  PinnedAdd(0x10, 0x10);  // no room
  EXPECT_EQ(PinnedLookup(0x10), HostMemory::kUnknown);
  EXPECT_EQ(PinnedLookup(0x1000000), HostMemory::kPinned);
  EXPECT_EQ(PinnedLookup(0x1000080), HostMemory::kUnknown);
}

TEST_F(PinnedRangesTest, ReadersNeverSeeATornTable) {
  // Stable ranges at even pages; a writer adds and removes ranges at odd
  // pages all around them, shifting the array under the readers.
  constexpr int kStable = 256;
  for (int i = 0; i < kStable; ++i) PinnedAdd(0x1000000 + 2 * i * 0x1000, 0x1000);
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::thread writer([&] {
    for (int round = 0; round < 2000; ++round) {
      int i = (round * 37) % kStable;
      uintptr_t odd = 0x1000000 + (2 * i + 1) * 0x1000;
      PinnedAdd(odd, 0x1000);
      PinnedRemove(odd);
    }
    stop = true;
  });
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed) || n < 1000) {
        int i = static_cast<int>((n * 7 + r) % kStable);
        HostMemory m = PinnedLookup(0x1000000 + 2 * i * 0x1000 + 5);
        // kUnknown only if a writer kept the table busy for 64 attempts.
        if (m == HostMemory::kPageable) ++wrong;
        HostMemory off = PinnedLookup(0x900000 + i);
        if (off == HostMemory::kPinned) ++wrong;
        ++n;
      }
    });
  }
  writer.join();
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace iotap::interpose
