#include "interpose/mapped/fault_spans.h"

#include <algorithm>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

std::vector<bool> Present(uint32_t n, std::vector<std::pair<uint32_t, uint32_t>> runs) {
  std::vector<bool> p(n, false);
  for (auto [first, end] : runs) {
    for (uint32_t i = first; i < end; ++i) p[i] = true;
  }
  return p;
}

// One look, at a region no earlier look saw (`credited`: the region's
// credits, kept from look to look).
std::vector<PageSpan> Share(const std::vector<bool>& present, std::vector<uint32_t> pages,
                            bool* credited = nullptr, std::vector<uint32_t> pending = {}) {
  bool flat[512];
  bool fresh[512] = {};
  for (size_t i = 0; i < present.size(); ++i) flat[i] = present[i];
  std::vector<PageSpan> spans(pages.size());
  ShareSpans(flat, credited != nullptr ? credited : fresh, static_cast<uint32_t>(present.size()),
             pages.data(), pages.size(), pending.data(), pending.size(), spans.data());
  return spans;
}

uint32_t Pages(const std::vector<PageSpan>& spans) {
  uint32_t n = 0;
  for (const PageSpan& s : spans) n += s.end - s.first;
  return n;
}

void ExpectSpan(const PageSpan& s, uint32_t first, uint32_t end, bool measured) {
  EXPECT_EQ(s.first, first);
  EXPECT_EQ(s.end, end);
  EXPECT_EQ(s.measured, measured);
}

// A sequential scan: each fault mapped the pages up to the next one.
TEST(FaultSpansTest, RunIsSharedUpToTheNextFault) {
  auto spans = Share(Present(512, {{0, 64}}), {0, 16, 32, 48});
  ASSERT_EQ(spans.size(), 4u);
  ExpectSpan(spans[0], 0, 16, true);
  ExpectSpan(spans[1], 16, 32, true);
  ExpectSpan(spans[2], 32, 48, true);
  ExpectSpan(spans[3], 48, 64, true);
}

// Fault-around maps pages before the faulting one too: the first fault of a
// run takes the run from its start.
TEST(FaultSpansTest, FirstFaultTakesTheRunFromItsStart) {
  auto spans = Share(Present(512, {{16, 32}, {100, 101}}), {20, 100});
  ExpectSpan(spans[0], 16, 32, true);
  ExpectSpan(spans[1], 100, 101, true);
}

TEST(FaultSpansTest, PageNotMappedIsThatPageUnmeasured) {
  auto spans = Share(Present(64, {{0, 8}}), {3, 40});
  ExpectSpan(spans[0], 0, 8, true);
  ExpectSpan(spans[1], 40, 41, false);
}

TEST(FaultSpansTest, RepeatedPageGetsThatPageAlone) {
  auto spans = Share(Present(64, {{0, 32}}), {4, 4, 20});
  ExpectSpan(spans[0], 0, 20, true);
  ExpectSpan(spans[1], 4, 5, true);
  ExpectSpan(spans[2], 20, 32, true);
}

TEST(FaultSpansTest, RunsToTheRegionsEnds) {
  auto spans = Share(Present(10, {{0, 10}}), {9});
  ExpectSpan(spans[0], 0, 10, true);
}

// A scan drained while it runs: the second look finds the first look's
// pages still mapped and gives them to no one again, so the spans of both
// looks add up to the pages mapped.
TEST(FaultSpansTest, LaterLookGivesOutOnlyPagesNoEarlierLookGave) {
  bool credited[512] = {};
  auto first = Share(Present(512, {{0, 48}}), {0, 16}, credited);
  ExpectSpan(first[0], 0, 16, true);
  ExpectSpan(first[1], 16, 48, true);
  auto second = Share(Present(512, {{0, 96}}), {48, 64, 80}, credited);
  ExpectSpan(second[0], 48, 64, true);
  ExpectSpan(second[1], 64, 80, true);
  ExpectSpan(second[2], 80, 96, true);
  EXPECT_EQ(Pages(first) + Pages(second), 96u);
}

// The last fault of a look is held for its major sample: the look stops the
// fault before it at the held fault's page, and the next look, where it is
// written, gives it the rest.
TEST(FaultSpansTest, HeldFaultKeepsItsPagesForTheNextLook) {
  bool credited[512] = {};
  auto first = Share(Present(512, {{0, 48}}), {0, 16}, credited, {32});
  ExpectSpan(first[0], 0, 16, true);
  ExpectSpan(first[1], 16, 32, true);
  auto second = Share(Present(512, {{0, 64}}), {32, 48}, credited);
  ExpectSpan(second[0], 32, 48, true);
  ExpectSpan(second[1], 48, 64, true);
  EXPECT_EQ(Pages(first) + Pages(second), 64u);
}

// Faults the thread took while the writer read its buffers, or another
// thread's not yet drained, mapped pages on both sides of a written fault:
// the written one gets only the pages from its own up to the next pending
// fault, and the pending ones get theirs later, each counted once.
TEST(FaultSpansTest, PendingFaultsOnBothSidesBoundTheSpan) {
  bool credited[512] = {};
  auto first = Share(Present(512, {{0, 128}}), {40}, credited, {90, 8, 200});
  ExpectSpan(first[0], 40, 90, true);
  auto second = Share(Present(512, {{0, 128}}), {8, 90}, credited);
  ExpectSpan(second[0], 0, 40, true);
  ExpectSpan(second[1], 90, 128, true);
  EXPECT_EQ(Pages(first) + Pages(second), 128u);
}

// Without anything pending (a sequential scan written whole), a fault whose
// page an earlier look gave out still gets an empty span, never a page twice.
TEST(FaultSpansTest, FaultWhosePageWasGivenOutGetsAnEmptySpan) {
  bool credited[512] = {};
  auto first = Share(Present(512, {{0, 48}}), {0, 16}, credited);
  ExpectSpan(first[1], 16, 48, true);
  auto second = Share(Present(512, {{0, 64}}), {32, 48}, credited);
  ExpectSpan(second[0], 32, 32, true);
  ExpectSpan(second[1], 48, 64, true);
  EXPECT_EQ(Pages(first) + Pages(second), 64u);
}

// Pages reclaimed between two looks are credited no longer: the fault that
// maps them again counts them, a re-read of the file.
TEST(FaultSpansTest, PagesUnmappedSinceTheLastLookCountAgain) {
  bool credited[512] = {};
  Share(Present(512, {{0, 32}}), {0}, credited);
  Share(Present(512, {{16, 32}}), {}, credited);  // pages 0-15 reclaimed
  auto again = Share(Present(512, {{0, 32}}), {4}, credited);
  ExpectSpan(again[0], 0, 16, true);
}

TEST(FaultSpansTest, NominalWindowIsTheAligned64KiBClipped) {
  PageSpan s = NominalSpan(37, 512, 0);
  EXPECT_EQ(s.first, 32u);
  EXPECT_EQ(s.end, 48u);
  EXPECT_FALSE(s.measured);
  s = NominalSpan(37, 40, 0);
  EXPECT_EQ(s.end, 40u);
}

TEST(FaultSpansTest, NominalWindowIsAlignedInThePageTableNotTheRegion) {
  // A mapping that starts at page 5 of its page table: its page 37 is the
  // table's page 42, whose window is the table's 32 to 48.
  PageSpan s = NominalSpan(37, 507, 5);
  EXPECT_EQ(s.first, 27u);
  EXPECT_EQ(s.end, 43u);
  // The first window is cut at the mapping's start (the kernel's too).
  s = NominalSpan(2, 507, 5);
  EXPECT_EQ(s.first, 0u);
  EXPECT_EQ(s.end, 11u);
}

TEST(FaultSpansTest, MarkWindowsAddsEachFaultsWindowToWhatWasMapped) {
  bool present[64] = {};
  present[3] = true;                      // credited at an earlier look
  const uint32_t pages[] = {40, 20, 70};  // 70: past the region, ignored
  MarkWindows(pages, 3, 64, 0, present);
  for (uint32_t i = 0; i < 64; ++i) {
    EXPECT_EQ(present[i], i == 3 || (i >= 16 && i < 32) || (i >= 32 && i < 48)) << i;
  }
  // Aligned in the page table: from a region starting at its page 2.
  bool shifted[64] = {};
  MarkWindows(pages, 2, 64, 2, shifted);
  for (uint32_t i = 0; i < 64; ++i) {
    EXPECT_EQ(shifted[i], (i >= 30 && i < 46) || (i >= 14 && i < 30)) << i;
  }
}

// A reader of a warm sample of 40 pages from page 21 on: the kernel maps
// each fault's window whole, so the look finds the windows of its faults
// (pages 21, 32, 48) mapped, and nothing else. The estimate from the
// windows gives the look's spans, at this look and at the next (the sample
// read on, with the credits of the first).
TEST(FaultSpansTest, WindowsEstimateTheSpansOfAWarmRead) {
  bool look_credits[512] = {};
  bool estimate_credits[512] = {};
  auto both = [&](const std::vector<uint32_t>& faults,
                  std::vector<std::pair<uint32_t, uint32_t>> mapped) {
    std::vector<PageSpan> looked = Share(Present(512, mapped), faults, look_credits);
    bool estimated[512];
    for (int i = 0; i < 512; ++i) estimated[i] = estimate_credits[i];
    MarkWindows(faults.data(), faults.size(), 512, 0, estimated);
    std::vector<PageSpan> spans(faults.size());
    ShareSpans(estimated, estimate_credits, 512, faults.data(), faults.size(), nullptr, 0,
               spans.data());
    ASSERT_EQ(looked.size(), spans.size());
    for (size_t i = 0; i < spans.size(); ++i) {
      EXPECT_EQ(spans[i].first, looked[i].first) << i;
      EXPECT_EQ(spans[i].end, looked[i].end) << i;
    }
  };
  both({21, 32}, {{16, 48}});
  both({48}, {{16, 64}});
  for (int i = 0; i < 512; ++i) EXPECT_EQ(look_credits[i], estimate_credits[i]) << i;
}

TEST(FaultSpansTest, LookRangeIsTheFaultsWindowsAndAPageEitherSide) {
  LookRange r = FaultsLookRange(37, 90, 512);
  EXPECT_EQ(r.first, 31u);  // the window of page 37 starts at 32
  EXPECT_EQ(r.end, 97u);    // that of page 90 ends at 96
  r = FaultsLookRange(5, 5, 512);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.end, 17u);
  r = FaultsLookRange(500, 505, 510);  // the region's part in the mapping
  EXPECT_EQ(r.first, 495u);
  EXPECT_EQ(r.end, 510u);
}

TEST(FaultSpansTest, ARunMayLeaveOnlyThroughAFreePageAtAnEnd) {
  bool present[512] = {};
  bool credited[512] = {};
  const LookRange r{16, 112};
  EXPECT_FALSE(RunMayLeave(present, credited, r, 512));
  present[16] = true;  // mapped, given to no fault
  EXPECT_TRUE(RunMayLeave(present, credited, r, 512));
  EXPECT_TRUE(RunMayLeave(present, nullptr, r, 512));
  credited[16] = true;  // given to an earlier fault: a run stops there
  EXPECT_FALSE(RunMayLeave(present, credited, r, 512));
  present[111] = true;
  EXPECT_TRUE(RunMayLeave(present, credited, r, 512));
  // The region's own ends are no way out.
  EXPECT_FALSE(RunMayLeave(present, nullptr, LookRange{0, 1}, 1));
}

// Whatever is mapped and credited, spans shared out over the look range
// alone, widened until no run may leave it, are those over the whole
// region, and so are the credits inside it: random regions of up to 512
// pages, runs of mapped pages, earlier credits, faults in a cluster,
// pending faults.
TEST(FaultSpansTest, SpansOverTheLookRangeAreThoseOverTheRegion) {
  std::mt19937 rng(20261128);
  int partial = 0, widened = 0;
  for (int round = 0; round < 3000; ++round) {
    const uint32_t n = 64 + rng() % 449;
    bool present[512] = {};
    bool credited[512] = {};
    for (uint32_t i = 0; i < n;) {  // runs of mapped and unmapped pages
      uint32_t len = 1 + rng() % 40;
      bool mapped = rng() % 2 == 0;
      for (uint32_t k = i; k < std::min<uint32_t>(n, i + len); ++k) {
        present[k] = mapped;
        credited[k] = mapped && rng() % 3 == 0;
      }
      i += len;
    }
    const uint32_t center = rng() % n;
    std::vector<uint32_t> faults(1 + rng() % 6);
    for (uint32_t& f : faults) f = std::min<uint32_t>(n - 1, center + rng() % 40);
    std::sort(faults.begin(), faults.end());
    std::vector<uint32_t> pending;
    for (int k = rng() % 3; k > 0; --k) pending.push_back(rng() % n);
    LookRange range = FaultsLookRange(faults.front(), faults.back(), n);
    const LookRange first_range = range;
    uint32_t read_pages = range.end - range.first;
    ASSERT_TRUE(WidenLook(present, credited, &range, n, [&](uint32_t first, uint32_t end) {
      EXPECT_TRUE(end <= first_range.first || first >= first_range.end);  // read once
      read_pages += end - first;
      return true;
    }));
    EXPECT_EQ(read_pages, range.end - range.first);
    EXPECT_FALSE(RunMayLeave(present, credited, range, n));
    if (range.first != first_range.first || range.end != first_range.end) {
      ++widened;
    } else {
      ++partial;
    }
    bool whole_credits[512];
    std::copy(credited, credited + 512, whole_credits);
    std::vector<PageSpan> expected(faults.size());
    ShareSpans(present, whole_credits, n, faults.data(), faults.size(), pending.data(),
               pending.size(), expected.data());
    std::vector<uint32_t> local_faults;
    for (uint32_t f : faults) local_faults.push_back(f - range.first);
    std::vector<uint32_t> local_pending;
    for (uint32_t p : pending) {
      if (p >= range.first && p < range.end) local_pending.push_back(p - range.first);
    }
    std::vector<PageSpan> got(faults.size());
    ShareSpans(present + range.first, credited + range.first, range.end - range.first,
               local_faults.data(), local_faults.size(), local_pending.data(), local_pending.size(),
               got.data());
    for (size_t j = 0; j < faults.size(); ++j) {
      SCOPED_TRACE(::testing::Message() << "round " << round << ", fault " << j);
      EXPECT_EQ(got[j].first + range.first, expected[j].first);
      EXPECT_EQ(got[j].end + range.first, expected[j].end);
      EXPECT_EQ(got[j].measured, expected[j].measured);
    }
    for (uint32_t i = range.first; i < range.end; ++i) {
      ASSERT_EQ(credited[i], whole_credits[i]) << "round " << round << ", page " << i;
    }
  }
  // Both ways are taken often, so that the comparison means something.
  EXPECT_GT(partial, 1000);
  EXPECT_GT(widened, 300);
}

}  // namespace
}  // namespace iotap::interpose
