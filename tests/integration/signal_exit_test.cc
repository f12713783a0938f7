// Processes that leave through _exit from a signal handler, as torch's
// DataLoader workers do when their parent terminates them (torch turns
// SIGTERM from the parent into _exit(0)); programs/exit_in_signal_handler.cc.
//
// - A child signalled while it waits (a worker done with its batches) writes
//   its whole trace and its end, exactly as if it had called _exit itself.
// - A child signalled at random while it works is often inside the shim with
//   one of its locks held. The shim must then let it end (without an end
//   record, its trace stopping at the last flush, as a killed process's does)
//   rather than wait for a lock that will never be released.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

constexpr int kChildren = 100;

struct Family {
  const LoadedProcess* parent = nullptr;
  std::vector<const LoadedProcess*> children;
};

// Splits the run into the program and its forked children.
Family FamilyOf(const LoadedRun& run) {
  Family f;
  for (const LoadedProcess& p : run.processes) {
    if (p.header.origin() == ProcessHeader::ORIGIN_FORK) {
      f.children.push_back(&p);
    } else {
      EXPECT_EQ(f.parent, nullptr) << "two parents";
      f.parent = &p;
    }
  }
  return f;
}

RunResult RunChildren(const std::vector<std::string>& args, const std::string& trace) {
  std::vector<std::string> argv = {TestProgram("exit_in_signal_handler")};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.timeout_seconds = 120;
  return RunTraced(argv, trace, options);
}

TEST(SignalExitTest, IdleChildWritesEverythingAndItsEnd) {
  TempDir dir;
  std::string data = dir.Sub("data.bin");
  WriteFile(data, std::string(10 * 4096 + 100, 'x'));
  RunResult r = RunChildren({"idle", std::to_string(kChildren), data}, dir.Sub("trace"));
  EXPECT_EQ(r.out, "0 of 100 children hung\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty());
  Family family = FamilyOf(run);
  ASSERT_NE(family.parent, nullptr);
  ASSERT_EQ(family.children.size(), static_cast<size_t>(kChildren));
  for (const LoadedProcess* child : family.children) {
    SCOPED_TRACE(child->trace_file);
    EXPECT_EQ(child->header.ppid(), family.parent->header.pid());
    EXPECT_EQ(child->dropped, 0u);
    // 10 full reads, 1 of 100 bytes, 1 at end of file.
    EXPECT_EQ(child->On(data, OP_OPEN).size(), 1u);
    EXPECT_EQ(child->On(data, OP_READ).size(), 12u);
    EXPECT_EQ(child->On(data, OP_CLOSE).size(), 1u);
    ASSERT_TRUE(child->end.has_value());
    EXPECT_EQ(child->end->reason(), EndOfTrace::REASON_UNDERSCORE_EXIT);
    EXPECT_EQ(child->end->exit_code(), 0);
    EXPECT_EQ(child->end->events_recorded(), child->events.size());
  }
}

TEST(SignalExitTest, BusyChildNeverHangs) {
  TempDir dir;
  RunResult r = RunChildren({"busy", std::to_string(kChildren)}, dir.Sub("trace"));
  EXPECT_EQ(r.out, "0 of 100 children hung\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty());
  Family family = FamilyOf(run);
  ASSERT_NE(family.parent, nullptr);
  ASSERT_TRUE(family.parent->end.has_value());
  EXPECT_EQ(family.parent->end->reason(), EndOfTrace::REASON_EXIT);
  ASSERT_EQ(family.children.size(), static_cast<size_t>(kChildren));
  for (const LoadedProcess* child : family.children) {
    SCOPED_TRACE(child->trace_file);
    EXPECT_EQ(child->header.ppid(), family.parent->header.pid());
    EXPECT_EQ(child->dropped, 0u);
    // With the signal outside the shim's locks: everything, and the end.
    if (child->end.has_value()) {
      EXPECT_EQ(child->end->reason(), EndOfTrace::REASON_UNDERSCORE_EXIT);
      EXPECT_EQ(child->end->exit_code(), 0);
      EXPECT_EQ(child->end->events_recorded(), child->events.size());
    }
  }
}

}  // namespace
}  // namespace iotap::testing
