// Processes that leave through _exit from a signal handler, as torch's
// DataLoader workers do when their parent terminates them (torch turns
// SIGTERM from the parent into _exit(0)). The handler runs on whatever the
// thread was doing, often inside the shim with one of its locks held; the
// shim must then let the process end (without an end record, as if it had
// been killed) rather than wait for a lock that will never be released.

#include <string>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

TEST(SignalExitTest, ExitFromSignalHandlerNeverHangs) {
  TempDir dir;
  constexpr int kChildren = 100;
  RunOptions options;
  options.timeout_seconds = 120;
  RunResult r = RunTraced({TestProgram("exit_in_signal_handler"), std::to_string(kChildren)},
                          dir.Sub("trace"), options);
  EXPECT_EQ(r.out, "0 of 100 children hung\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty());
  ASSERT_EQ(run.processes.size(), static_cast<size_t>(kChildren + 1));
  int parent_pid = 0;
  for (const LoadedProcess& p : run.processes) {
    if (p.header.origin() != ProcessHeader::ORIGIN_FORK) parent_pid = p.header.pid();
  }
  ASSERT_NE(parent_pid, 0);
  for (const LoadedProcess& p : run.processes) {
    SCOPED_TRACE(p.trace_file);
    EXPECT_EQ(p.dropped, 0u);
    ASSERT_TRUE(p.end.has_value() || p.header.pid() != parent_pid);
    if (p.header.pid() == parent_pid) {
      EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_EXIT);
      continue;
    }
    EXPECT_EQ(p.header.ppid(), parent_pid);
    // A child whose signal came while it held none of the shim's locks wrote
    // everything and its end; the others end at their last flush.
    if (p.end.has_value()) {
      EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_UNDERSCORE_EXIT);
      EXPECT_EQ(p.end->exit_code(), 0);
      EXPECT_EQ(p.end->events_recorded(), p.events.size());
    }
  }
}

}  // namespace
}  // namespace iotap::testing
