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

std::vector<PageSpan> Share(const std::vector<bool>& present, std::vector<uint32_t> pages) {
  bool flat[512];
  for (size_t i = 0; i < present.size(); ++i) flat[i] = present[i];
  std::vector<PageSpan> spans(pages.size());
  ShareSpans(flat, static_cast<uint32_t>(present.size()), pages.data(), pages.size(),
             spans.data());
  return spans;
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
