#include "analyzer/testing/synthetic_trace.h"

#include <string>

#include "gtest/gtest.h"
#include "zstd.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kStart = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

// The zstd frames of a trace's bytes.
int Frames(const std::string& bytes) {
  int frames = 0;
  for (size_t at = 0; at < bytes.size(); ++frames) {
    size_t size = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
    if (ZSTD_isError(size)) return -1;
    at += size;
  }
  return frames;
}

TEST(SyntheticTraceTest, FramesEndWithTheFlushPeriodsOfTheirEvents) {
  SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3"}, kStart);
  uint32_t f = p.Path("/data/a.bin");
  // Periods of 1 s from the start: [0, 1) s holds two reads, [1, 2) s two,
  // [2, 3) s none, [3, 4) s one.
  for (int64_t at : {100 * kMs, 500 * kMs, 1200 * kMs, 1300 * kMs, 3700 * kMs}) {
    p.Read(OP_PREAD, kStart + at, kStart + at + kMs, f, 0, 4096);
  }
  p.End(EndOfTrace::REASON_EXIT, 0, kStart + 4 * 1000 * kMs);
  // The header's frame, one of events, the end record's.
  EXPECT_EQ(Frames(p.Bytes()), 3);
  // The header's, three of events, the end record's.
  EXPECT_EQ(Frames(p.Bytes(4096, 1000 * kMs)), 5);
  // A frame of one event each: the count cuts as well.
  EXPECT_EQ(Frames(p.Bytes(1, 1000 * kMs)), 7);
}

}  // namespace
}  // namespace iotap::analyzer
