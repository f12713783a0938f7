// TraceFollower (trace_reader.h): a trace file read while it grows, frame by
// frame and cut anywhere, as `iotap top` reads the files of a running job.

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/read/trace_reader.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"
#include "zstd.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;

// Counts what it is given, and fails the test on any event seen twice.
struct Collector : public TraceVisitor {
  void OnProcess(const ProcessTrace& p) override { ++processes; }
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    for (const Event& e : b.events) {
      EXPECT_TRUE(seen.insert({e.tid, e.seq}).second) << "event " << e.seq << " read twice";
    }
    events += b.size();
  }
  void OnFileEnd(const ProcessTrace& p) override { ++file_ends; }
  std::set<std::pair<uint32_t, uint64_t>> seen;
  uint64_t events = 0;
  int processes = 0;
  int file_ends = 0;
};

// A process of `n` reads on two threads.
SyntheticProcess ManyFrames(int n = 1000) {
  SyntheticProcess p(42, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  uint32_t f = p.Path("/data/a.bin");
  for (int i = 0; i < n; ++i) {
    int64_t t = kT0 + i * 1000;
    p.Read(OP_PREAD, t, t + 500, f, i * 4096, 4096, i % 2 == 0 ? 42 : 43);
  }
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 2'000'000);
  return p;
}

class TraceFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("iotap-follow-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".iotap"))
                .string();
    std::remove(path_.c_str());
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void Append(const std::string& bytes) {
    std::FILE* f = std::fopen(path_.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  std::string path_;
};

// The events of the complete frames among the first `n` bytes of `bytes`.
uint64_t EventsOfCompleteFrames(const std::string& bytes, size_t n) {
  size_t end = 0;
  for (;;) {
    size_t size = ZSTD_findFrameCompressedSize(bytes.data() + end, n - end);
    if (ZSTD_isError(size)) break;
    end += size;
  }
  if (end == 0) return 0;
  Collector c;
  std::vector<ReadIssue> issues;
  EXPECT_TRUE(ReadTraceBytes("prefix", bytes.substr(0, end), &c, &issues).ok());
  EXPECT_TRUE(issues.empty());
  return c.events;
}

TEST_F(TraceFollowerTest, GrowingFileCutAnywhereYieldsEachCompleteFrameOnce) {
  const SyntheticProcess p = ManyFrames();
  const std::string bytes = p.Bytes(/*events_per_frame=*/50);
  TraceFollower follower(path_);
  Collector c;
  std::vector<ReadIssue> issues;
  Append("");
  ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());  // nothing written yet
  EXPECT_FALSE(follower.started());
  size_t written = 0;
  int reads = 0;
  while (written < bytes.size()) {
    // Pieces of 1 to 61 bytes: cuts inside frame headers, frames and varints.
    size_t piece = std::min(bytes.size() - written, size_t{1} + (written * 7919) % 61);
    Append(bytes.substr(written, piece));
    written += piece;
    ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());
    ++reads;
    ASSERT_EQ(c.events, EventsOfCompleteFrames(bytes, written)) << "after " << written << " bytes";
    if (written < bytes.size()) {
      EXPECT_FALSE(follower.ended());
    }
  }
  size_t frames = 0;
  for (size_t at = 0; at < bytes.size(); ++frames) {
    at += ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
  }
  EXPECT_GE(frames, 20u);                          // 1000 events, 50 a frame
  EXPECT_GT(reads, 2 * static_cast<int>(frames));  // most frames arrived in pieces
  EXPECT_TRUE(issues.empty()) << issues.front().ToString();
  EXPECT_EQ(c.events, 1000u);
  EXPECT_EQ(c.processes, 1);
  EXPECT_EQ(follower.offset(), bytes.size());
  EXPECT_TRUE(follower.ended());
  EXPECT_EQ(follower.process().pid(), 42);
  EXPECT_EQ(c.file_ends, 0);
  ASSERT_TRUE(follower.Finish(&c, &issues).ok());
  EXPECT_EQ(c.file_ends, 1);
  EXPECT_EQ(c.events, 1000u);
  // Nothing is read after Finish.
  Append(bytes);
  ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());
  EXPECT_EQ(c.events, 1000u);
}

// A writer killed inside a frame: following waits for the frame; Finish
// salvages its complete packets, as ReadTraceFile does for the same file.
// (Frames of 20000 events span several zstd blocks, so a cut one still holds
// complete packets.)
TEST_F(TraceFollowerTest, FinishSalvagesACutLastFrameAsAWholeReadDoes) {
  const std::string bytes = ManyFrames(60000).Bytes(/*events_per_frame=*/20000);
  const size_t cut = bytes.size() - 40;
  Append(bytes.substr(0, cut));
  TraceFollower follower(path_);
  Collector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());
  EXPECT_EQ(c.events, EventsOfCompleteFrames(bytes, cut));
  EXPECT_TRUE(issues.empty());
  ASSERT_TRUE(follower.Finish(&c, &issues).ok());
  Collector whole;
  std::vector<ReadIssue> whole_issues;
  ASSERT_TRUE(ReadTraceFile(path_, &whole, &whole_issues).ok());
  EXPECT_EQ(c.events, whole.events);
  EXPECT_GT(c.events, EventsOfCompleteFrames(bytes, cut));
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_TRUE(issues[0].truncated);
  EXPECT_EQ(issues[0].ToString(), whole_issues[0].ToString());
}

TEST_F(TraceFollowerTest, AFileThatIsNoTraceIsAnError) {
  Append("#!/bin/sh\n");
  TraceFollower follower(path_);
  Collector c;
  std::vector<ReadIssue> issues;
  absl::Status s = follower.ReadNew(&c, &issues);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not an iotap trace"), std::string::npos) << s;
}

TEST_F(TraceFollowerTest, AMissingFileIsAnErrorNamingIt) {
  TraceFollower follower(path_);
  Collector c;
  std::vector<ReadIssue> issues;
  absl::Status s = follower.ReadNew(&c, &issues);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(path_), std::string::npos);
}

}  // namespace
}  // namespace iotap::analyzer
