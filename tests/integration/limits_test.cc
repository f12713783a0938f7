// Jobs that push the shim to its limits or play with what it relies on:
// many processes forked at once, many files open at once, many threads, a
// program that closes every descriptor and points others where the shim's
// own writes could land, vfork, and a statically linked program. Each runs
// exactly as it does untraced, and its trace is complete.

#include <sys/stat.h>

#include <map>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fault_support.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

// What the reader said of a run's files, a line each, for a failure's
// message.
std::string IssuesOf(const LoadedRun& run) {
  std::string out;
  for (const analyzer::ReadIssue& i : run.issues) absl::StrAppend(&out, i.ToString(), "\n");
  return out;
}

std::string Faults() { return TestProgram("faults"); }

TEST(LimitsTest, SixtyFourWorkersForkedAtOnce) {
  TempDir dir;
  std::string file = dir.Sub("data.bin");
  WriteFile(file, std::string(1000, 'w'));
  std::vector<std::string> argv = {Faults(), "fork-many", "64", file};
  RunResult plain = RunProgram(argv);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // 64 children exit with their index modulo 7.
  EXPECT_EQ(plain.out, "children 64 exit codes sum 189\n");
  RunResult traced = RunPreloaded(argv, dir.Sub("trace"));
  ExpectSameBehaviour(plain, traced);

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty()) << IssuesOf(run);
  ASSERT_EQ(run.processes.size(), 65u);
  const LoadedProcess* parent = nullptr;
  for (const LoadedProcess& p : run.processes) {
    if (p.header.origin() != ProcessHeader::ORIGIN_FORK) parent = &p;
  }
  ASSERT_NE(parent, nullptr);
  int exit_codes = 0;
  for (const LoadedProcess& p : run.processes) {
    EXPECT_EQ(p.dropped, 0u) << p.trace_file;
    if (&p == parent) continue;
    SCOPED_TRACE(p.trace_file);
    EXPECT_EQ(p.header.origin(), ProcessHeader::ORIGIN_FORK);
    EXPECT_EQ(p.header.ppid(), parent->header.pid());
    auto reads = p.On(file, OP_PREAD);
    ASSERT_EQ(reads.size(), 10u);
    for (int k = 0; k < 10; ++k) {
      EXPECT_EQ(reads[k]->offset, k * 100);
      EXPECT_EQ(reads[k]->result, 100);
    }
    EXPECT_EQ(p.On(file, OP_OPEN).size(), 1u);
    EXPECT_EQ(p.On(file, OP_CLOSE).size(), 1u);
    ASSERT_TRUE(p.end.has_value());
    EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_EXIT);
    exit_codes += p.end->exit_code();
  }
  EXPECT_EQ(exit_codes, 189);
}

TEST(LimitsTest, TenThousandFilesOpenAtOnce) {
  constexpr int kFiles = 10000;
  TempDir dir;
  ASSERT_EQ(RunProgram({"mkdir", dir.Sub("plain"), dir.Sub("traced")}).exit_code, 0);
  RunResult plain = RunProgram({Faults(), "many-files", "10000", dir.Sub("plain")});
  ASSERT_EQ(plain.exit_code, 0) << "cannot open 10,000 files here: " << plain.err;
  EXPECT_EQ(plain.out, "files 10000 bytes 80000\n");
  RunResult traced =
      RunPreloaded({Faults(), "many-files", "10000", dir.Sub("traced")}, dir.Sub("trace"));
  ExpectSameBehaviour(plain, traced);

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty()) << IssuesOf(run);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].dropped, 0u);
  struct PerFile {
    int opens = 0, writes = 0, reads = 0, closes = 0;
    std::set<int64_t> fds;  // the descriptors it was opened as
  };
  std::map<std::string, PerFile> files;
  for (const LoadedEvent& e : run.processes[0].events) {
    PerFile& f = files[e.name];
    f.opens += e.op == OP_OPEN;
    f.writes += e.op == OP_WRITE && e.result == 8;
    f.reads += e.op == OP_READ && e.result == 8;
    f.closes += e.op == OP_CLOSE;
    if (e.op == OP_OPEN) f.fds.insert(e.result);
  }
  std::set<int64_t> fds;
  for (int i = 0; i < kFiles; ++i) {
    std::string name = dir.Sub("traced") + "/f" + std::to_string(i);
    ASSERT_TRUE(files.count(name)) << name;
    const PerFile& f = files[name];
    EXPECT_EQ(f.opens, 2) << name;
    EXPECT_EQ(f.writes, 1) << name;
    EXPECT_EQ(f.reads, 1) << name;
    EXPECT_EQ(f.closes, 2) << name;
    fds.insert(*f.fds.rbegin());
  }
  // All open at once: 10,000 different descriptors in the second round.
  EXPECT_EQ(fds.size(), static_cast<size_t>(kFiles));
}

TEST(LimitsTest, TwoHundredFiftySixThreads) {
  constexpr int kThreads = 256, kReads = 1000;
  TempDir dir;
  for (int i = 0; i < kThreads; ++i) {
    WriteFile(dir.Sub("t" + std::to_string(i) + ".bin"), std::string(kReads * 100, 't'));
  }
  std::vector<std::string> argv = {TestProgram("lifecycle"), "threads", dir.path(),
                                   std::to_string(kThreads), std::to_string(kReads)};
  RunResult plain = RunProgram(argv);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  RunResult traced = RunPreloaded(argv, dir.Sub("trace"));
  ExpectSameBehaviour(plain, traced);

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty()) << IssuesOf(run);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].dropped, 0u);
  std::map<std::string, std::vector<const LoadedEvent*>> reads;
  for (const LoadedEvent& e : run.processes[0].events) {
    if (e.op == OP_PREAD) reads[e.name].push_back(&e);
  }
  std::set<uint32_t> tids;
  for (int i = 0; i < kThreads; ++i) {
    const auto& r = reads[dir.Sub("t" + std::to_string(i) + ".bin")];
    ASSERT_EQ(r.size(), static_cast<size_t>(kReads)) << "thread " << i;
    for (int k = 0; k < kReads; ++k) {
      ASSERT_EQ(r[k]->offset, k * 100) << "thread " << i;
      ASSERT_EQ(r[k]->tid, r[0]->tid) << "thread " << i;
    }
    tids.insert(r[0]->tid);
  }
  EXPECT_EQ(tids.size(), static_cast<size_t>(kThreads));
}

// The shim keeps no descriptor between writes, so closing every descriptor
// cannot take its trace away; and while it has one open for a write, a
// program pointing the lowest descriptors at a file of its own with dup2 and
// closing them, over and over, must neither get the shim's bytes in that file
// nor take them from the trace (nor make the shim warn).
TEST(LimitsTest, ClosesEveryDescriptorAndDup2sOverOthers) {
  TempDir dir;
  std::string file = dir.Sub("data.bin");
  WriteFile(file, std::string(4096 * 100, 'c'));
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "10";
  RunResult plain = RunProgram({Faults(), "close-all", file, dir.Sub("sink1"), "100"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "read 40960000 bytes; the sink holds 0 bytes\n");
  RunResult traced = RunPreloaded({Faults(), "close-all", file, dir.Sub("sink2"), "100"},
                                  dir.Sub("trace"), options);
  ExpectSameBehaviour(plain, traced);

  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty()) << IssuesOf(run);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].dropped, 0u);
  EXPECT_EQ(run.On(file, OP_PREAD).size(), 100u * 4096);
  ASSERT_TRUE(run.processes[0].end.has_value());
}

TEST(LimitsTest, Vfork) {
  TempDir dir;
  std::string file = dir.Sub("data.txt");
  WriteFile(file, "vfork and exec\n");
  RunResult plain = RunProgram({Faults(), "vfork", file});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "vfork and exec\n\ncat 0, _exit 3\n");
  RunResult traced = RunPreloaded({Faults(), "vfork", file}, dir.Sub("trace"));
  ExpectSameBehaviour(plain, traced);

  // The program and the cat its first child became; the children before
  // their exec or _exit write nothing.
  LoadedRun run = LoadRun(dir.Sub("trace"));
  EXPECT_TRUE(run.issues.empty()) << IssuesOf(run);
  ASSERT_EQ(run.processes.size(), 2u);
  int cats = 0;
  for (const LoadedProcess& p : run.processes) {
    ASSERT_TRUE(p.end.has_value()) << p.trace_file;
    EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_EXIT) << p.trace_file;
    if (p.header.executable() == "/usr/bin/cat") {
      ++cats;
      EXPECT_EQ(p.On(file, OP_READ).front()->result, 15);
    } else {
      EXPECT_EQ(p.end->exit_code(), 0);
    }
  }
  EXPECT_EQ(cats, 1);
}

TEST(LimitsTest, StaticallyLinkedProgramIsLeftAlone) {
  TempDir dir;
  std::string file = dir.Sub("data.bin");
  WriteFile(file, std::string(10000, 's'));
  RunResult plain = RunProgram({TestProgram("static_reader"), file, dir.Sub("copy1")});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_TRUE(absl::StartsWith(plain.out, "size 10000 checksum ")) << plain.out;
  EXPECT_TRUE(absl::EndsWith(plain.out, " child 5\n")) << plain.out;
  RunResult traced =
      RunPreloaded({TestProgram("static_reader"), file, dir.Sub("copy2")}, dir.Sub("trace"));
  ExpectSameBehaviour(plain, traced);
  EXPECT_EQ(ReadFile(dir.Sub("copy2")), ReadFile(file));
  // Nothing traced: the shim was never loaded, so not even the directory.
  struct stat st;
  EXPECT_NE(stat(dir.Sub("trace").c_str(), &st), 0);
}

}  // namespace
}  // namespace iotap::testing
