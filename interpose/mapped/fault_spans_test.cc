#include "interpose/mapped/fault_spans.h"

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
  PageSpan s = NominalSpan(37, 512);
  EXPECT_EQ(s.first, 32u);
  EXPECT_EQ(s.end, 48u);
  EXPECT_FALSE(s.measured);
  s = NominalSpan(37, 40);
  EXPECT_EQ(s.end, 40u);
}

}  // namespace
}  // namespace iotap::interpose
