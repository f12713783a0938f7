// Processes and threads under the shim: every thread's events, fork, exec,
// posix_spawn, every way a process ends, and a job killed with SIGKILL.

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader
#include "zstd.h"

namespace iotap::testing {
namespace {

class LifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.Sub("data");
    ASSERT_EQ(RunProgram({"mkdir", data_}).exit_code, 0);
    WriteFile(data_ + "/a.bin", std::string(64 * 1024, 'a'));
    WriteFile(data_ + "/b.bin", std::string(3000, 'b'));
  }
  std::string Program() const { return TestProgram("lifecycle"); }
  std::string Trace() const { return dir_.Sub("trace"); }

  TempDir dir_;
  std::string data_;
};

TEST_F(LifecycleTest, EveryThreadsEventsWithExactOffsets) {
  constexpr int kThreads = 8, kReads = 3000;  // enough to fill several buffers
  for (int i = 0; i < kThreads; ++i) {
    WriteFile(data_ + "/t" + std::to_string(i) + ".bin", std::string(kReads * 100, 'x'));
  }
  RunResult r = RunTraced({Program(), "threads", data_, std::to_string(kThreads),
                           std::to_string(kReads)},
                          Trace());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].dropped, 0u);
  std::set<uint32_t> tids;
  for (int i = 0; i < kThreads; ++i) {
    auto reads = run.On(data_ + "/t" + std::to_string(i) + ".bin", OP_PREAD);
    ASSERT_EQ(reads.size(), static_cast<size_t>(kReads)) << "thread " << i;
    for (int k = 0; k < kReads; ++k) {
      EXPECT_EQ(reads[k]->offset, k * 100);
      EXPECT_EQ(reads[k]->requested, 100u);
      EXPECT_EQ(reads[k]->result, 100);
    }
    uint32_t tid = reads[0]->tid;
    for (const LoadedEvent* e : reads) EXPECT_EQ(e->tid, tid);
    tids.insert(tid);
  }
  EXPECT_EQ(tids.size(), static_cast<size_t>(kThreads));
}

// The writer flushes and samples /proc every 10 ms while the program opens and
// closes a file as fast as it can for 300 ms: every open still returns the
// same, lowest free descriptor, as untraced, because the shim's own descriptors are opened before main() and
// parked high.
// Every zstd level the shim takes writes frames the analyzer reads whole:
// compressed ones (with their checksum) at 1 and at zstd's fast levels,
// stored ones (no checksum) at 0.
TEST_F(LifecycleTest, EveryZstdLevelWritesTheSameEvents) {
  constexpr int kThreads = 2, kReads = 500;
  for (int i = 0; i < kThreads; ++i) {
    WriteFile(data_ + "/t" + std::to_string(i) + ".bin", std::string(kReads * 100, 'x'));
  }
  for (const char* level : {"1", "-1", "-7", "0"}) {
    std::string trace = dir_.Sub(std::string("trace") + level);
    RunOptions options;
    options.env["IOTAP_ZSTD_LEVEL"] = level;
    options.env["IOTAP_FLUSH_INTERVAL_MS"] = "20";
    RunResult r = RunTraced({Program(), "threads", data_, std::to_string(kThreads),
                             std::to_string(kReads)},
                            trace, options);
    ASSERT_EQ(r.exit_code, 0) << level << ": " << r.err;
    EXPECT_EQ(r.err.find("not a value"), std::string::npos) << level << ": " << r.err;
    LoadedRun run = LoadRun(trace);
    ASSERT_EQ(run.processes.size(), 1u) << level;
    for (int i = 0; i < kThreads; ++i) {
      EXPECT_EQ(run.On(data_ + "/t" + std::to_string(i) + ".bin", OP_PREAD).size(),
                size_t{kReads})
          << level;
    }
    std::string bytes = ReadFile(run.processes[0].trace_file);
    size_t frames = 0;
    for (size_t at = 0; at < bytes.size(); ++frames) {
      ZSTD_frameHeader header;
      ASSERT_EQ(ZSTD_getFrameHeader(&header, bytes.data() + at, bytes.size() - at), 0u) << level;
      EXPECT_EQ(header.checksumFlag, std::string(level) == "0" ? 0u : 1u) << level;
      size_t n = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
      ASSERT_FALSE(ZSTD_isError(n)) << level;
      at += n;
    }
    EXPECT_GE(frames, 2u) << level;
  }
}

TEST_F(LifecycleTest, TheShimNeverShiftsTheProgramsDescriptorNumbers) {
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "10";
  options.env["IOTAP_SAMPLE_INTERVAL_MS"] = "10";
  RunResult r = RunPreloaded({Program(), "fdnumbers", data_, "300"}, Trace(), options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t opens = 0, odd = 0;
  ASSERT_EQ(sscanf(r.out.c_str(), "%zu opens, %zu not", &opens, &odd), 2) << r.out;
  EXPECT_EQ(odd, 0u) << r.out;
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].dropped, 0u);
  EXPECT_EQ(run.processes[0].On(data_ + "/a.bin", OP_OPEN).size() +
                run.processes[0].On(data_ + "/a.bin", OP_OPENAT).size(),
            opens);
}

// A program that closes every descriptor it did not open itself (as daemons
// and some launchers do) closes the shim's too; the shim reopens its file by
// name and loses nothing.
TEST_F(LifecycleTest, ClosingEveryDescriptorLosesNoEvents) {
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "10";
  RunResult r = RunPreloaded({Program(), "closeall", data_}, Trace(), options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  LoadedRun run = LoadRun(Trace());
  ASSERT_TRUE(run.issues.empty()) << run.issues.front().ToString();
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& p = run.processes[0];
  EXPECT_EQ(p.On(data_ + "/a.bin", OP_READ).size(), 1u);
  auto reads = p.On(data_ + "/b.bin", OP_READ);
  ASSERT_EQ(reads.size(), 2u);
  EXPECT_EQ(reads[1]->offset, 1000);
  EXPECT_EQ(p.On(data_ + "/b.bin", OP_CLOSE).size(), 1u);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_EXIT);
}

// Linux serves the I/O calls of a process whose descriptor table no other
// thread shares faster (no reference count, no position lock), so the
// shim's writer thread takes a table of its own, empty: it holds none of the
// program's files, and a pipe the program closes still reaches its end.
TEST_F(LifecycleTest, TheWriterThreadHasADescriptorTableOfItsOwn) {
  RunResult traced = RunPreloaded({Program(), "tables", data_}, Trace());
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, "writer has a table of its own\npipe at end\n");
  EXPECT_EQ(traced.err, "");
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].On(data_ + "/a.bin", OP_READ).size(), 1u);
  EXPECT_EQ(run.processes[0].On(data_ + "/a.bin", OP_CLOSE).size(), 1u);
  ASSERT_TRUE(run.processes[0].end.has_value());
  EXPECT_EQ(run.processes[0].end->events_recorded(), run.processes[0].events.size());
}

TEST_F(LifecycleTest, ForkedChildGetsItsOwnFileAndNoneOfTheParentsEvents) {
  RunResult r = RunTraced({Program(), "fork", data_}, Trace());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int child_pid = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(r.out.substr(6)), &child_pid)) << r.out;
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 2u);
  const LoadedProcess* child = run.ByPid(child_pid);
  ASSERT_NE(child, nullptr);
  const LoadedProcess* parent = run.ByPid(child->header.ppid());
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(child->header.origin(), ProcessHeader::ORIGIN_FORK);
  EXPECT_EQ(parent->header.origin(), ProcessHeader::ORIGIN_EXEC);
  // The parent's 10 reads before the fork were still buffered: they stay
  // with the parent, which also has its 3 reads after.
  EXPECT_EQ(parent->On(data_ + "/a.bin", OP_READ).size(), 13u);
  EXPECT_EQ(child->On(data_ + "/a.bin", OP_READ).size(), 0u);
  EXPECT_EQ(child->On(data_ + "/b.bin", OP_READ).size(), 5u);
  EXPECT_EQ(parent->On(data_ + "/b.bin").size(), 0u);
  auto after = parent->On(data_ + "/a.bin", OP_READ);
  EXPECT_EQ(after.back()->offset, 1200);
  ASSERT_TRUE(child->end.has_value());
  EXPECT_EQ(child->end->reason(), EndOfTrace::REASON_EXIT);
}

TEST_F(LifecycleTest, ExecWritesEverythingFirstAndTheNewImageTracesItself) {
  RunResult r = RunTraced({Program(), "exec", data_}, Trace());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, std::string(3000, 'b'));
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 2u);
  const LoadedProcess& before = run.processes[0].header.argv(0) == "cat" ? run.processes[1]
                                                                         : run.processes[0];
  const LoadedProcess& after = &before == &run.processes[0] ? run.processes[1] : run.processes[0];
  EXPECT_EQ(before.header.pid(), after.header.pid());
  EXPECT_EQ(before.On(data_ + "/a.bin", OP_READ).size(), 4u);
  ASSERT_TRUE(before.end.has_value());
  EXPECT_EQ(before.end->reason(), EndOfTrace::REASON_EXEC);
  int notices = 0;
  for (const Packet& p : before.packets) notices += p.has_exec() && p.exec().path() == "/bin/cat";
  EXPECT_EQ(notices, 1);
  EXPECT_EQ(after.header.executable(), "/usr/bin/cat");
  uint64_t bytes = 0;
  for (const LoadedEvent* e : after.On(data_ + "/b.bin", OP_READ)) bytes += e->result;
  EXPECT_EQ(bytes, 3000u);
  ASSERT_TRUE(after.end.has_value());
  EXPECT_EQ(after.end->reason(), EndOfTrace::REASON_EXIT);
  EXPECT_EQ(after.end->exit_code(), 0);
}

TEST_F(LifecycleTest, PosixSpawnChildTracesItself) {
  RunResult r = RunTraced({Program(), "spawn", data_}, Trace());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 2u);
  int spawned = 0;
  for (const LoadedProcess& p : run.processes) {
    if (p.header.executable() != "/usr/bin/cat") continue;
    ++spawned;
    EXPECT_EQ(p.On(data_ + "/b.bin", OP_READ).front()->result, 3000);
  }
  EXPECT_EQ(spawned, 1);
}

struct EndCase {
  const char* how;
  int code;
  EndOfTrace::Reason reason;
  bool code_known;
};

class EndTest : public LifecycleTest, public ::testing::WithParamInterface<EndCase> {};

TEST_P(EndTest, EndRecordSaysHowAndWithWhatCode) {
  const EndCase& c = GetParam();
  RunResult r = RunTraced({Program(), "end", c.how, std::to_string(c.code)}, Trace());
  if (c.reason == EndOfTrace::REASON_ABORT) {
    EXPECT_EQ(r.signal, SIGABRT);
  } else {
    EXPECT_EQ(r.exit_code, c.code);
  }
  LoadedRun run = LoadRun(Trace());
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& p = run.processes[0];
  EXPECT_EQ(p.On("/dev/zero", OP_READ).size(), 1u);
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->reason(), c.reason);
  EXPECT_EQ(p.end->exit_code_known(), c.code_known);
  if (c.code_known) {
    EXPECT_EQ(p.end->exit_code(), c.code);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllWays, EndTest,
    ::testing::Values(EndCase{"exit", 7, EndOfTrace::REASON_EXIT, true},
                      EndCase{"return", 5, EndOfTrace::REASON_EXIT, true},
                      EndCase{"_exit", 9, EndOfTrace::REASON_UNDERSCORE_EXIT, true},
                      EndCase{"_Exit", 11, EndOfTrace::REASON_UNDERSCORE_EXIT, true},
                      EndCase{"abort", 0, EndOfTrace::REASON_ABORT, false}),
    [](const ::testing::TestParamInfo<EndCase>& info) {
      std::string name = info.param.how;
      return name[0] == '_' ? "underscore" + name : name;
    });

TEST_F(LifecycleTest, SigkillAfterThreeSecondsLeavesEverythingBeforeTheLastFlush) {
  std::string trace = Trace();
  std::string out_file = dir_.Sub("progress.txt");
  pid_t pid = fork();
  if (pid == 0) {
    freopen(out_file.c_str(), "w", stdout);
    setenv("LD_PRELOAD", ShimLibrary().c_str(), 1);
    setenv("IOTAP_DIR", trace.c_str(), 1);
    execl(Program().c_str(), "lifecycle", "loop", data_.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  // What the program had done one flush interval (1 s) and some slack ago.
  std::string progress = ReadFile(out_file);
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  std::vector<std::string> lines = absl::StrSplit(progress, '\n', absl::SkipEmpty());
  ASSERT_GE(lines.size(), 3u) << "the program made too little progress: " << progress;
  // Reads that were reported at least 1.2 s before the kill are on disk: the
  // reports come every 100 reads of about 1.1 ms, so 11 lines are ~1.2 s.
  long reported = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[lines.size() > 11 ? lines.size() - 11 : 0], &reported));
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_FALSE(run.processes[0].end.has_value());
  long traced = static_cast<long>(run.On(data_ + "/a.bin", OP_PREAD).size());
  EXPECT_GE(traced, reported);
  long last = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines.back(), &last));
  EXPECT_LE(traced, last + 100);
}

}  // namespace
}  // namespace iotap::testing
