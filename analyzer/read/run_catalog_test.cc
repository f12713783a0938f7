// Who is who in a run (run_catalog.cc): roles from the process tree and
// what each process ran, each loader's trainer, and what the catalog reads
// of each file (start, end, wall-clock steps, damage).

#include "analyzer/read/run_catalog.h"

#include <string>
#include <vector>

#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;

CatalogEntry Entry(int pid, int ppid, const std::string& executable,
                   const std::vector<std::string>& argv, int64_t start_ms,
                   ProcessHeader::Origin origin = ProcessHeader::ORIGIN_EXEC,
                   const std::string& host = "node0") {
  CatalogEntry e;
  e.path = "p" + std::to_string(pid) + ".iotap";
  e.header.set_pid(pid);
  e.header.set_ppid(ppid);
  e.header.set_hostname(host);
  e.header.set_executable(executable);
  for (const std::string& a : argv) e.header.add_argv(a);
  e.header.set_rank(-1);
  e.header.set_origin(origin);
  e.start_unix_ns = kT0 + start_ms * kMs;
  e.end_unix_ns = e.start_unix_ns + 50 * kMs;
  return e;
}

// The entry of the process image that started at `start_ms`.
const CatalogEntry& At(const RunCatalog& c, int64_t start_ms) {
  for (const CatalogEntry& e : c.entries) {
    if (e.start_unix_ns == kT0 + start_ms * kMs) return e;
  }
  ADD_FAILURE() << "no entry starting at " << start_ms << " ms";
  return c.entries.front();
}

int IndexOf(const RunCatalog& c, int64_t start_ms) {
  return static_cast<int>(&At(c, start_ms) - &c.entries[0]);
}

TEST(ClassifyProcessesTest, RolesFromTheTreeAndWhatEachRan) {
  const std::string py = "/usr/bin/python3";
  RunCatalog c;
  // Given out of start order: the catalog sorts them.
  c.entries = {
      Entry(11, 10, py, {"python3", "train.py"}, 11, ProcessHeader::ORIGIN_FORK),  // a worker
      Entry(10, 1, py, {"python3", "train.py"}, 10),                               // the job
      Entry(12, 10, py, {"python3", "-c", "from multiprocessing.spawn import spawn_main"}, 12),
      Entry(13, 10, py, {"python3", "-c", "from multiprocessing.resource_tracker import main"}, 13),
      Entry(14, 10, "/bin/sh", {"sh", "-c", "nvidia-smi"}, 14),
      // A fork that replaced itself with another program: two images.
      Entry(15, 10, py, {"python3", "train.py"}, 15, ProcessHeader::ORIGIN_FORK),
      Entry(15, 10, "/usr/bin/nvidia-smi", {"nvidia-smi"}, 16),
      // A worker's own fork (a worker that forks): a loader of the trainer.
      Entry(17, 11, py, {"python3", "train.py"}, 17, ProcessHeader::ORIGIN_FORK),
      // Not Python, but it carries a rank.
      Entry(20, 1, "/opt/trainer", {"trainer"}, 20, ProcessHeader::ORIGIN_EXEC, "node1"),
  };
  c.entries.back().header.set_rank(3);
  ClassifyProcesses(&c);

  ASSERT_EQ(c.entries.size(), 9u);
  for (size_t i = 1; i < c.entries.size(); ++i) {
    EXPECT_LT(c.entries[i - 1].start_unix_ns, c.entries[i].start_unix_ns);
  }
  const int trainer = IndexOf(c, 10);
  EXPECT_EQ(At(c, 10).role, report::TRAINER);
  EXPECT_EQ(At(c, 10).parent, -1);
  EXPECT_EQ(At(c, 11).role, report::LOADER);
  EXPECT_EQ(At(c, 11).parent, trainer);
  EXPECT_EQ(At(c, 11).trainer, trainer);
  EXPECT_EQ(At(c, 12).role, report::LOADER);  // spawn start method
  EXPECT_EQ(At(c, 12).trainer, trainer);
  EXPECT_EQ(At(c, 13).role, report::HELPER);  // resource tracker
  EXPECT_EQ(At(c, 14).role, report::HELPER);  // shell
  EXPECT_EQ(At(c, 15).role, report::HELPER);  // replaced by exec
  EXPECT_TRUE(At(c, 15).replaced_by_exec);
  EXPECT_EQ(At(c, 16).role, report::HELPER);  // what it exec'd
  EXPECT_FALSE(At(c, 16).replaced_by_exec);
  EXPECT_EQ(At(c, 16).parent, trainer);
  EXPECT_EQ(At(c, 17).role, report::LOADER);
  EXPECT_EQ(At(c, 17).parent, IndexOf(c, 11));
  EXPECT_EQ(At(c, 17).trainer, trainer);  // the nearest trainer above
  EXPECT_EQ(At(c, 20).role, report::TRAINER);
  EXPECT_EQ(At(c, 20).trainer, -1);
  EXPECT_EQ(c.hosts, (std::vector<std::string>{"node0", "node1"}));
  EXPECT_EQ(c.start_unix_ns, kT0 + 10 * kMs);
  EXPECT_EQ(c.end_unix_ns, kT0 + 70 * kMs);
}

TEST(ClassifyProcessesTest, WithoutPythonTheFirstProcessIsTheTrainer) {
  // `iotap run sh run.sh`, where the shell execs dd, which starts cat.
  RunCatalog c;
  c.entries = {Entry(30, 1, "/bin/sh", {"sh", "run.sh"}, 0),
               Entry(30, 1, "/bin/dd", {"dd", "if=/data/x"}, 1),
               Entry(31, 30, "/bin/cat", {"cat"}, 2)};
  ClassifyProcesses(&c);
  EXPECT_EQ(At(c, 0).role, report::HELPER);  // it only exec'd dd
  EXPECT_EQ(At(c, 1).role, report::TRAINER);
  EXPECT_EQ(At(c, 2).role, report::HELPER);
  EXPECT_EQ(At(c, 2).parent, IndexOf(c, 1));  // dd's image, not sh's
}

TEST(CatalogTraceFilesTest, StartEndClockStepsAndDamage) {
  const std::string dir = testing::TempDirectory() + "/catalog-";
  SyntheticProcess a(50, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0 + 5 * kMs);
  uint32_t f = a.Path("/data/x");
  a.Read(OP_PREAD, kT0 + 6 * kMs, kT0 + 9 * kMs, f, 0, 4096);
  // At the end (30 ms) the wall clock reads 50 ms more than the monotonic
  // clock has moved since the start: someone set it.
  a.End(EndOfTrace::REASON_EXIT, 0, kT0 + 30 * kMs, kT0 + 80 * kMs);
  a.WriteTo(dir + "a.iotap");
  SyntheticProcess b(51, 50, "/usr/bin/python3", {"python3", "train.py"}, kT0 + 7 * kMs,
                     ProcessHeader::ORIGIN_FORK);
  uint32_t g = b.Path("/data/y");
  b.Read(OP_PREAD, kT0 + 8 * kMs, kT0 + 12 * kMs, g, 0, 4096);  // killed: no end record
  b.WriteTo(dir + "b.iotap");
  testing::WriteTemp("catalog-c.iotap", "not a trace");

  RunCatalog c = CatalogTraceFiles({dir + "c.iotap", dir + "b.iotap", dir + "a.iotap"}, 2);
  ASSERT_EQ(c.entries.size(), 2u);
  const CatalogEntry& ea = c.entries[0];
  const CatalogEntry& eb = c.entries[1];
  EXPECT_EQ(ea.path, dir + "a.iotap");
  EXPECT_EQ(ea.start_unix_ns, kT0 + 5 * kMs);
  EXPECT_EQ(ea.end_unix_ns, kT0 + 30 * kMs);  // the end record
  EXPECT_EQ(ea.wall_clock_step_ns, 50 * kMs);
  EXPECT_EQ(ea.role, report::TRAINER);
  EXPECT_EQ(eb.end_unix_ns, kT0 + 12 * kMs);  // its last event
  EXPECT_EQ(eb.wall_clock_step_ns, 0);
  EXPECT_EQ(eb.role, report::LOADER);
  EXPECT_EQ(eb.trainer, 0);
  EXPECT_EQ(c.start_unix_ns, kT0 + 5 * kMs);
  EXPECT_EQ(c.end_unix_ns, kT0 + 30 * kMs);
  ASSERT_EQ(c.issues.size(), 1u);
  EXPECT_EQ(c.issues[0].path, dir + "c.iotap");
}

}  // namespace
}  // namespace iotap::analyzer
