// The shim's threads, rings, locks and fork handling under load, in a
// program that links the shim (programs/shim_threads.cc). In the tsan preset
// the program and the shim copy it links are built with ThreadSanitizer,
// which fails the run on any data race or lock-order problem; elsewhere the
// same checks of the trace's contents run on the real libiotap.so.

#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

TEST(ShimThreadsTest, ThreadsRingsForkAndMarkersUnderLoad) {
  constexpr int kThreads = 8, kReads = 20000;
  TempDir dir;
  std::string file = dir.Sub("data.bin");
  WriteFile(file, std::string(4000, 'r'));
  std::string trace = dir.Sub("trace");
  RunOptions options;
  options.env["IOTAP_DIR"] = trace;
  // Small rings and frequent flushes: threads often drain their own full
  // ring while the writer thread drains the others.
  options.env["IOTAP_BUFFER_EVENTS"] = "256";
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "10";
  options.env["TSAN_OPTIONS"] = "halt_on_error=1:die_after_fork=0";
  options.unset_env = {"LD_PRELOAD"};
  RunResult r = RunProgram(
      {TestProgram("shim_threads"), file, std::to_string(kThreads), std::to_string(kReads)},
      options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "reads 160000\nchild 0\n");
  EXPECT_FALSE(absl::StrContains(r.err, "ThreadSanitizer")) << r.err;
  EXPECT_EQ(r.err, "");

  LoadedRun run = LoadRun(trace);
  EXPECT_TRUE(run.issues.empty());
  ASSERT_EQ(run.processes.size(), 2u);
  for (const LoadedProcess& p : run.processes) {
    SCOPED_TRACE(p.trace_file);
    EXPECT_EQ(p.dropped, 0u);
    ASSERT_TRUE(p.end.has_value());
    bool child = p.header.origin() == ProcessHeader::ORIGIN_FORK;
    EXPECT_EQ(p.On(file, OP_PREAD).size(), child ? 100u : 1u * kThreads * kReads);
    if (child) continue;
    int begins = 0, ends = 0, mmaps = 0;
    for (const LoadedEvent& e : p.events) {
      begins += e.op == OP_STEP_BEGIN;
      ends += e.op == OP_STEP_END;
      mmaps += e.op == OP_MMAP && e.name == file;
    }
    EXPECT_EQ(begins, 50);
    EXPECT_EQ(ends, 50);
    EXPECT_EQ(mmaps, 50);
  }
}

}  // namespace
}  // namespace iotap::testing
