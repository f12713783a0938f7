// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "analyzer/live/run_follower.h"
#include "analyzer/live/session_file.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::TempDirectory;

struct Counter : public TraceVisitor {
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override { events += b.size(); }
  void OnFileEnd(const ProcessTrace& p) override { ++ends; }
  uint64_t events = 0;
  int ends = 0;
};

int64_t MonotonicNs() {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1'000'000'000LL + t.tv_nsec;
}

TEST(HeaderExamplesTest, SessionFile) {
  const std::string dir = TempDirectory() + "/session-file";
  std::filesystem::create_directories(dir);
  const std::string trace = dir;
  // session_file.h
  absl::StatusOr<SessionFile> s = StartSession(trace, "5f3a09c2d41e7b68");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_TRUE(s->End(0).ok());
  SessionState state = ReadSessionFile(trace + "/5f3a09c2d41e7b68.iotap-session");
  EXPECT_TRUE(state.ended);
  EXPECT_EQ(state.status, 0);
}

TEST(HeaderExamplesTest, RunFollower) {
  const std::string dir = TempDirectory() + "/run-follower";
  std::filesystem::create_directories(dir);
  SyntheticProcess p(42, 1, "/usr/bin/python3", {"python3"}, 1'000'000'000);
  uint32_t f = p.Path("/data/a.bin");
  p.Read(OP_PREAD, 1'000'010'000, 1'000'020'000, f, 0, 4096);
  p.End(EndOfTrace::REASON_EXIT, 0);
  p.WriteTo(dir + "/host.42.iotap");
  ASSERT_TRUE(StartSession(dir, "s")->End(0).ok());
  Counter visitor;
  // run_follower.h
  RunFollower run(dir);
  while (run.Poll(&visitor, MonotonicNs()).ok() && !run.Ended(MonotonicNs())) sleep(1);
  run.FinishAll(&visitor);   // cut last frames salvaged; OnFileEnd per file

  EXPECT_EQ(visitor.events, 1u);
  EXPECT_EQ(visitor.ends, 1);
}

}  // namespace
}  // namespace iotap::analyzer
