// Fault injection on the shim: a traced job whose reads are interrupted by
// signals, whose output file system turns read-only or fills up under it, or
// that is killed at any moment, behaves exactly as it does untraced (exit
// status, signal, stdout, stderr but for one `iotap:` warning), and what was
// traced before the fault stays readable.
//
// Covered elsewhere: the output directory deleted mid-run and a file-size
// limit (passthrough_test.cc), SIGKILL of a steady job (lifecycle_test.cc),
// SIGTERM turned into _exit by a handler, while idle or inside the shim
// (hazards_test.cc).

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/integration/fault_support.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

std::string Faults() { return TestProgram("faults"); }
std::string Lifecycle() { return TestProgram("lifecycle"); }

// "reads R interrupted E short S handled H" from the program's counts file.
std::map<std::string, long> Counts(const std::string& path) {
  std::map<std::string, long> counts;
  std::vector<std::string> words = absl::StrSplit(ReadFile(path), ' ', absl::SkipWhitespace());
  for (size_t i = 0; i + 1 < words.size(); i += 2) {
    long v = 0;
    EXPECT_TRUE(absl::SimpleAtoi(words[i + 1], &v)) << words[i + 1];
    counts[words[i]] = v;
  }
  return counts;
}

void CheckInterruptedReads(bool restart) {
  TempDir dir;
  const std::string bytes = "3000000", flag = restart ? "1" : "0";
  RunResult plain = RunProgram({Faults(), "interrupted", bytes, flag, dir.Sub("plain")});
  RunResult traced =
      RunPreloaded({Faults(), "interrupted", bytes, flag, dir.Sub("counts")}, dir.Sub("trace"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ExpectSameBehaviour(plain, traced);
  EXPECT_TRUE(absl::StartsWith(plain.out, "bytes 3000000 checksum ")) << plain.out;
  std::map<std::string, long> counts = Counts(dir.Sub("counts"));
  if (restart) {
    EXPECT_EQ(counts["interrupted"], 0);
  } else {
    EXPECT_GT(counts["interrupted"], 0) << "no read was interrupted: the test proved nothing";
  }
  EXPECT_GT(counts["handled"], 0);

  // The trace holds every read of the main thread, as the program saw it.
  LoadedRun run = LoadRun(dir.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& p = run.processes[0];
  EXPECT_EQ(p.dropped, 0u);
  long reads = 0, interrupted = 0, short_reads = 0, handler_reads = 0;
  for (const LoadedEvent& e : p.events) {
    if (e.op != OP_READ) continue;
    if (e.requested == 4096 && e.tid == static_cast<uint32_t>(p.header.pid())) {
      ++reads;
      interrupted += e.error == EINTR;
      short_reads += e.result > 0 && e.result < 4096;
    }
    handler_reads += e.name == "/dev/zero";
  }
  EXPECT_EQ(reads, counts["reads"]);
  EXPECT_EQ(interrupted, counts["interrupted"]);
  EXPECT_EQ(short_reads, counts["short"]);
  // A handler that interrupts the shim itself is not recorded.
  EXPECT_LE(handler_reads, counts["handled"]);
  EXPECT_GT(handler_reads, 0);
}

TEST(FaultsTest, ReadsInterruptedBySignalsAndShortReads) { CheckInterruptedReads(false); }

TEST(FaultsTest, ReadsRestartedAfterSignals) { CheckInterruptedReads(true); }

class FileSystemFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.Sub("data");
    ASSERT_EQ(RunProgram({"mkdir", data_}).exit_code, 0);
    WriteFile(data_ + "/a.bin", std::string(64 * 1024, 'a'));
  }
  TempDir dir_;
  std::string data_;
};

// Linux refuses to make a file system read-only while a file on it is open
// for writing, and the shim keeps its trace open (kept_fd.h), so the remount
// can only happen where the shim writes through a descriptor of the moment:
// with fewer than 64 descriptors allowed, it sets none aside.
TEST_F(FileSystemFaultTest, OutputMadeReadOnlyMidRun) {
  std::string why;
  std::unique_ptr<ScratchFs> fs = ScratchFs::Mount(dir_.Sub("fs"), 8 << 20, &why);
  ASSERT_NE(fs, nullptr) << "this test needs a tmpfs of its own: " << why;
  std::vector<std::string> argv = {Lifecycle(), "loop", data_, "2000"};
  RunResult plain = RunProgram(argv);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;

  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "20";
  std::string trace = fs->path() + "/trace";
  Background job = StartProgram(argv, trace, dir_.Sub("job"), options, /*max_open_files=*/60);
  ASSERT_TRUE(WaitForText(job.out_file, "\n500\n", 30000));
  ASSERT_TRUE(fs->MakeReadOnly(&why)) << why;
  RunResult traced = WaitProgram(job);
  ExpectSameBehaviour(plain, traced, /*warnings=*/1);
  EXPECT_TRUE(absl::StrContains(traced.err, "Read-only file system")) << traced.err;

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  ExpectReadableUpToTheEnd(run);
  // Everything up to a flush before the remount (500 reads were done then).
  size_t reads = run.processes[0].On(data_ + "/a.bin", OP_PREAD).size();
  EXPECT_GE(reads, 300u);
  EXPECT_LT(reads, 2000u);
}

TEST_F(FileSystemFaultTest, OutputFileSystemFillsUp) {
  std::string why;
  std::unique_ptr<ScratchFs> fs = ScratchFs::Mount(dir_.Sub("fs"), 64 << 10, &why);
  ASSERT_NE(fs, nullptr) << "this test needs a tmpfs of its own: " << why;
  for (int i = 0; i < 2; ++i) {
    WriteFile(data_ + "/t" + std::to_string(i) + ".bin", std::string(300000 * 100, 'x'));
  }
  std::vector<std::string> argv = {Lifecycle(), "threads", data_, "2", "300000"};
  RunResult plain = RunProgram(argv);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "20";
  std::string trace = fs->path() + "/trace";
  RunResult traced = RunPreloaded(argv, trace, options);
  ExpectSameBehaviour(plain, traced, /*warnings=*/1);
  EXPECT_TRUE(absl::StrContains(traced.err, "No space left on device")) << traced.err;

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  ExpectReadableUpToTheEnd(run, /*allow_gaps=*/true);
  size_t reads =
      run.On(data_ + "/t0.bin", OP_PREAD).size() + run.On(data_ + "/t1.bin", OP_PREAD).size();
  EXPECT_GT(reads, 0u);
  EXPECT_LT(reads, 600000u);
}

// Killed with SIGKILL or SIGTERM (no handler) at random moments, half of them
// while the shim's writer thread is compressing or writing a frame.
TEST(FaultsTest, KilledAtRandomMomentsIncludingDuringAFlush) {
  TempDir dir;
  std::string file = dir.Sub("data.bin");
  WriteFile(file, std::string(4000, 'k'));
  std::mt19937 random(std::random_device{}());
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "10";
  options.env["IOTAP_ZSTD_LEVEL"] = "19";  // long flushes, to be caught in
  int in_flush = 0;
  for (int round = 0; round < 12; ++round) {
    int sig = round % 4 < 2 ? SIGKILL : SIGTERM;
    bool during_flush = round % 2 == 1;
    SCOPED_TRACE(
        absl::StrCat("round ", round, ", signal ", sig, during_flush ? ", in a flush" : ""));
    std::vector<std::string> argv = {Faults(), "busy", file, "3"};
    std::string trace = dir.Sub("trace" + std::to_string(round));
    // Output files of their own each round: a file of the last round, not
    // yet truncated by a slow start, must not pass for this one's "ready".
    Background untraced = StartProgram(argv, "", dir.Sub("plain" + std::to_string(round)));
    Background job = StartProgram(argv, trace, dir.Sub("job" + std::to_string(round)), options);
    ASSERT_TRUE(WaitForText(job.out_file, "ready\n", 10000));
    ASSERT_TRUE(WaitForText(untraced.out_file, "ready\n", 10000));
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 300));
    if (during_flush) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      bool caught = false;
      while (!caught && std::chrono::steady_clock::now() < deadline) {
        caught = ThreadRunning(job.pid, "iotap-writer");
      }
      in_flush += caught;
    }
    kill(job.pid, sig);
    kill(untraced.pid, sig);
    RunResult plain = WaitProgram(untraced);
    RunResult traced = WaitProgram(job);
    EXPECT_EQ(plain.signal, sig);
    ExpectSameBehaviour(plain, traced);

    LoadedRun run = LoadRun(trace);
    ASSERT_EQ(run.processes.size(), 1u);
    EXPECT_FALSE(run.processes[0].end.has_value());
    ExpectReadableUpToTheEnd(run);
  }
  EXPECT_GE(in_flush, 3) << "the writer thread was seldom caught writing";
}

}  // namespace
}  // namespace iotap::testing
