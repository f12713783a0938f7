// Lifecycles that catch a multi-threaded traced process at a bad moment, as
// DataLoader workers meet them (programs/lifecycle_hazards.cc):
//
// - Terminated by the parent: torch turns SIGTERM from the parent into
//   _exit(0), in a signal handler. A child signalled while it waits (a worker
//   done with its batches) writes its whole trace and its end, exactly as if
//   it had called _exit itself. A child signalled while it works is often
//   inside the shim with one of its locks held; the shim must then let it end
//   (without an end record, its trace stopping at the last flush, as a killed
//   process's does) rather than wait for a lock that will never be released.
// - Forked while another thread is inside the shim: the child must not
//   inherit a lock that thread held, or its first call that needs the lock
//   never returns.

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

// Splits the run into the program and its forked children, and checks what
// every run must satisfy: every trace readable, one parent, every child its
// child, nothing dropped.
Family FamilyOf(const LoadedRun& run, size_t children) {
  for (const analyzer::ReadIssue& issue : run.issues) ADD_FAILURE() << issue.ToString();
  Family f;
  for (const LoadedProcess& p : run.processes) {
    EXPECT_EQ(p.dropped, 0u) << p.trace_file;
    if (p.header.origin() == ProcessHeader::ORIGIN_FORK) {
      f.children.push_back(&p);
    } else {
      EXPECT_EQ(f.parent, nullptr) << "two parents";
      f.parent = &p;
    }
  }
  EXPECT_NE(f.parent, nullptr);
  EXPECT_EQ(f.children.size(), children);
  for (const LoadedProcess* child : f.children) {
    if (f.parent != nullptr) {
      EXPECT_EQ(child->header.ppid(), f.parent->header.pid());
    }
  }
  return f;
}

RunResult RunHazard(const std::vector<std::string>& args, const std::string& trace) {
  std::vector<std::string> argv = {TestProgram("lifecycle_hazards")};
  argv.insert(argv.end(), args.begin(), args.end());
  // The program gives up after 3 children that do not end in 30 s each.
  RunOptions options;
  options.timeout_seconds = 240;
  return RunTraced(argv, trace, options);
}

void ExpectUnderscoreExit(const LoadedProcess& p) {
  ASSERT_TRUE(p.end.has_value()) << p.trace_file;
  EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_UNDERSCORE_EXIT) << p.trace_file;
  EXPECT_EQ(p.end->exit_code(), 0) << p.trace_file;
  EXPECT_EQ(p.end->events_recorded(), p.events.size()) << p.trace_file;
}

TEST(LifecycleTest, TerminatedWhileIdleWritesEverythingAndItsEnd) {
  TempDir dir;
  std::string data = dir.Sub("data.bin");
  WriteFile(data, std::string(10 * 4096 + 100, 'x'));
  RunResult r = RunHazard({"sigterm-idle", std::to_string(kChildren), data}, dir.Sub("trace"));
  EXPECT_EQ(r.out, "0 of 100 children hung\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  LoadedRun run = LoadRun(dir.Sub("trace"));
  Family family = FamilyOf(run, kChildren);
  for (const LoadedProcess* child : family.children) {
    // 10 full reads, 1 of 100 bytes, 1 at end of file.
    EXPECT_EQ(child->On(data, OP_OPEN).size(), 1u) << child->trace_file;
    EXPECT_EQ(child->On(data, OP_READ).size(), 12u) << child->trace_file;
    EXPECT_EQ(child->On(data, OP_CLOSE).size(), 1u) << child->trace_file;
    ExpectUnderscoreExit(*child);
  }
}

TEST(LifecycleTest, TerminatedWhileBusyNeverHangs) {
  TempDir dir;
  RunResult r = RunHazard({"sigterm-busy", std::to_string(kChildren)}, dir.Sub("trace"));
  EXPECT_EQ(r.out, "0 of 100 children hung\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  LoadedRun run = LoadRun(dir.Sub("trace"));
  Family family = FamilyOf(run, kChildren);
  ASSERT_NE(family.parent, nullptr);
  ASSERT_TRUE(family.parent->end.has_value());
  EXPECT_EQ(family.parent->end->reason(), EndOfTrace::REASON_EXIT);
  for (const LoadedProcess* child : family.children) {
    // Signalled outside the shim's locks: everything, and the end.
    if (child->end.has_value()) ExpectUnderscoreExit(*child);
  }
}

TEST(LifecycleTest, ForkedWhileAnotherThreadMapsFiles) {
  TempDir dir;
  std::string data = dir.Sub("data.bin");
  WriteFile(data, std::string(8192, 'm'));
  constexpr int kForks = 200;
  RunResult r = RunHazard({"fork-while-mapping", std::to_string(kForks), data}, dir.Sub("trace"));
  EXPECT_EQ(r.out, "0 of 200 children hung\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;

  LoadedRun run = LoadRun(dir.Sub("trace"));
  Family family = FamilyOf(run, kForks);
  for (const LoadedProcess* child : family.children) {
    SCOPED_TRACE(child->trace_file);
    EXPECT_EQ(child->On(data, OP_OPEN).size(), 1u);
    EXPECT_EQ(child->On(data, OP_MMAP).size(), 1u);
    EXPECT_EQ(child->On(data, OP_MUNMAP).size(), 1u);
    EXPECT_EQ(child->On(data, OP_CLOSE).size(), 1u);
    // Only the child's own thread: none of the mapping thread's events.
    for (const LoadedEvent& e : child->events) {
      EXPECT_EQ(e.tid, static_cast<uint32_t>(child->header.pid()));
    }
    ExpectUnderscoreExit(*child);
  }
}

}  // namespace
}  // namespace iotap::testing
