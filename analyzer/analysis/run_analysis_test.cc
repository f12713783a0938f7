#include "analyzer/analysis/run_analysis.h"

#include <filesystem>

#include "analyzer/analysis/process_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

class RunAnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-analysis-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  report::Report Analyze() {
    absl::StatusOr<report::Report> r = AnalyzeRun(dir_.string(), AnalysisOptions());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  }

  std::filesystem::path dir_;
};

const report::Process* Pid(const report::Report& r, int pid) {
  for (const report::Process& p : r.processes()) {
    if (p.pid() == pid) return &p;
  }
  return nullptr;
}

// A trainer with two forked loaders, a resource tracker and a shell; three
// steps whose waits overlap the loaders' reads in known ways.
void WriteTrainingRun(RunAnalysisTest* t, const std::string& dir) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  for (int step = 0; step < 3; ++step) {
    int64_t start = kT0 + (10 + 20 * step) * kMs;
    int64_t wait_end = start + (step == 0 ? 10 : step == 1 ? 2 : 1) * kMs;
    trainer.Marker(OP_STEP_BEGIN, start, start, step);
    trainer.Marker(OP_DATA_WAIT, start, wait_end, step);
    trainer.Marker(OP_STEP_END, start + 20 * kMs, start + 20 * kMs, step);
  }
  trainer.End(EndOfTrace::REASON_EXIT, 0, kT0 + 100 * kMs);
  trainer.WriteTo(dir + "/trainer.iotap");

  SyntheticProcess a(101, 100, "/usr/bin/python3", {"python3", "train.py"}, kT0 + kMs,
                     ProcessHeader::ORIGIN_FORK);
  uint32_t fa = a.Path("/data/a.bin");
  // Two threads overlapping: their union is [12, 18) ms.
  a.Read(OP_PREAD, kT0 + 12 * kMs, kT0 + 15 * kMs, fa, 0, 4096, 101);
  a.Read(OP_PREAD, kT0 + 14 * kMs, kT0 + 18 * kMs, fa, 0, 4096, 201);
  a.Read(OP_PREAD, kT0 + 40 * kMs, kT0 + 41 * kMs, fa, 8192, 100, 101);
  a.Cpu(kT0, 0);
  a.Cpu(kT0 + 100 * kMs, 50 * kMs);
  a.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, kT0 + 100 * kMs);
  a.WriteTo(dir + "/a.iotap");

  SyntheticProcess b(102, 100, "/usr/bin/python3", {"python3", "train.py"}, kT0 + kMs,
                     ProcessHeader::ORIGIN_FORK);
  uint32_t fb = b.Path("/data/b.bin");
  b.Read(OP_READ, kT0 + 16 * kMs, kT0 + 19 * kMs, fb, 0, 50);
  b.Read(OP_READ, kT0 + 31 * kMs, kT0 + 31 * kMs + 500 * kUs, fb, 50, 1000);
  b.Read(OP_READ, kT0 + 60 * kMs, kT0 + 62 * kMs, fb, 1050, 65536);
  b.Cpu(kT0, 0);
  b.Cpu(kT0 + 100 * kMs, 20 * kMs);
  b.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, kT0 + 100 * kMs);
  b.WriteTo(dir + "/b.iotap");

  SyntheticProcess tracker(103, 100, "/usr/bin/python3",
                           {"python3", "-c", "from multiprocessing.resource_tracker import main;main(5)"},
                           kT0 + 2 * kMs);
  tracker.WriteTo(dir + "/tracker.iotap");
  SyntheticProcess shell(104, 100, "/bin/sh", {"sh", "-c", "nvidia-smi"}, kT0 + 3 * kMs);
  shell.WriteTo(dir + "/shell.iotap");
}

TEST_F(RunAnalysisTest, RolesFromTheProcessTree) {
  WriteTrainingRun(this, dir_.string());
  report::Report r = Analyze();
  ASSERT_EQ(r.processes_size(), 5);
  EXPECT_EQ(Pid(r, 100)->role(), report::TRAINER);
  EXPECT_EQ(Pid(r, 101)->role(), report::LOADER);
  EXPECT_EQ(Pid(r, 101)->trainer_pid(), 100);
  EXPECT_EQ(Pid(r, 102)->role(), report::LOADER);
  EXPECT_EQ(Pid(r, 103)->role(), report::HELPER);
  EXPECT_EQ(Pid(r, 104)->role(), report::HELPER);
  EXPECT_EQ(r.workers().trainers(), 1);
  EXPECT_EQ(r.workers().loaders(), 2);
  EXPECT_EQ(Pid(r, 101)->end(), "_exit 0");
}

TEST_F(RunAnalysisTest, BusyTimeIsAUnionExactToTheMicrosecond) {
  WriteTrainingRun(this, dir_.string());
  report::Report r = Analyze();
  // Loader a: [12,18) + [40,41) ms; loader b: 3 + 0.5 + 2 ms.
  EXPECT_DOUBLE_EQ(Pid(r, 101)->io_busy_s(), 0.007);
  EXPECT_DOUBLE_EQ(Pid(r, 102)->io_busy_s(), 0.0055);
  // Together: [12,19) + [31,31.5) + [40,41) + [60,62) ms.
  EXPECT_DOUBLE_EQ(r.run().io_busy_s(), 0.0105);
  EXPECT_DOUBLE_EQ(r.overlap().io_busy_s(), 0.0105);
}

TEST_F(RunAnalysisTest, StallsSplitIntoFetchPreparationAndOther) {
  WriteTrainingRun(this, dir_.string());
  report::Report r = Analyze();
  ASSERT_EQ(r.steps_size(), 3);
  const report::Step& s0 = r.steps(0);
  EXPECT_DOUBLE_EQ(s0.duration_s(), 0.020);
  EXPECT_DOUBLE_EQ(s0.data_wait_s(), 0.010);
  EXPECT_DOUBLE_EQ(s0.fetch_s(), 0.007);  // loaders' union inside [10,20) ms
  // The busiest loader used half a core: half the non-fetch wait is prep.
  EXPECT_NEAR(s0.prep_s(), 0.0015, 1e-12);
  EXPECT_NEAR(s0.other_s(), 0.0015, 1e-12);
  EXPECT_DOUBLE_EQ(s0.exposed_io_s(), 0.007);
  EXPECT_DOUBLE_EQ(s0.hidden_io_s(), 0.0);
  const report::Step& s1 = r.steps(1);
  EXPECT_DOUBLE_EQ(s1.fetch_s(), 0.0005);
  EXPECT_DOUBLE_EQ(s1.hidden_io_s(), 0.001);
  EXPECT_NEAR(s1.prep_s(), 0.00075, 1e-12);
  const report::Step& s2 = r.steps(2);
  EXPECT_DOUBLE_EQ(s2.fetch_s(), 0.0);
  EXPECT_DOUBLE_EQ(s2.hidden_io_s(), 0.002);
  EXPECT_DOUBLE_EQ(r.overlap().exposed_io_s(), 0.0075);
  EXPECT_DOUBLE_EQ(r.overlap().hidden_io_s(), 0.003);
  EXPECT_DOUBLE_EQ(r.overlap().outside_steps_io_s(), 0.0);
  // Statistics leave out the first (warm-up) step: waits 2 + 1 ms of 40 ms.
  const report::StepStatistics& st = r.step_statistics();
  EXPECT_EQ(st.steps(), 2);
  EXPECT_EQ(st.warmup_steps_skipped(), 1);
  EXPECT_DOUBLE_EQ(st.data_stall_share(), 0.003 / 0.040);
  EXPECT_NEAR(st.fetch_share(), 0.5 / 3, 1e-9);
  EXPECT_NEAR(st.prep_share(), 1.25 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(r.run().steps(), 3);
}

TEST_F(RunAnalysisTest, HistogramsCountEveryReadInItsBuckets) {
  WriteTrainingRun(this, dir_.string());
  report::Report r = Analyze();
  const report::DataFiles& d = r.data_files();
  EXPECT_EQ(d.reads(), 6);
  EXPECT_EQ(d.read_bytes(), 4096 * 2 + 100 + 50 + 1000 + 65536);
  // Darshan buckets: 0-100, 100-1K, 1K-10K, 10K-100K, ...
  std::vector<double> darshan(d.read_sizes().darshan().begin(), d.read_sizes().darshan().end());
  EXPECT_EQ(darshan, (std::vector<double>{1, 1, 3, 1, 0, 0, 0, 0, 0, 0}));
  // log2: 50 -> 5, 100 -> 6, 1000 -> 9, 4096 -> 12 (twice), 65536 -> 16.
  EXPECT_EQ(d.read_sizes().log2(5), 1);
  EXPECT_EQ(d.read_sizes().log2(6), 1);
  EXPECT_EQ(d.read_sizes().log2(9), 1);
  EXPECT_EQ(d.read_sizes().log2(12), 2);
  EXPECT_EQ(d.read_sizes().log2(16), 1);
  // a.bin's first 4 KiB were read twice.
  EXPECT_EQ(d.reread_bytes(), 4096);
}

// Three epochs over 300 KB images do not make them 900 KB files: a file's
// size is what stat said, else the distinct bytes read.
TEST_F(RunAnalysisTest, FileSizesDoNotGrowWithEpochs) {
  SyntheticProcess p(7, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  int64_t t = kT0;
  for (int i = 0; i < 3; ++i) {
    uint32_t f = p.Path("/data/img" + std::to_string(i) + ".jpg");
    for (int epoch = 0; epoch < 3; ++epoch) {
      if (i == 0) {  // stat says 400,000 bytes; only 300,000 are read
        p.Add({.op = OP_FSTAT, .start_ns = t, .end_ns = t + kUs, .file = f, .aux = 400000});
        t += 2 * kUs;
      }
      p.Read(OP_PREAD, t, t + kUs, f, 0, 200000);
      p.Read(OP_PREAD, t + 2 * kUs, t + 3 * kUs, f, 200000, 100000);
      t += 4 * kUs;
    }
  }
  p.WriteTo(File("p.iotap"));
  report::Report r = Analyze();
  EXPECT_EQ(r.data_files().read_files(), 3);
  EXPECT_EQ(r.data_files().read_bytes(), 3 * 3 * 300000);
  EXPECT_EQ(r.data_files().median_file_bytes(), 300000);
}

TEST_F(RunAnalysisTest, AccessPatternsPerThread) {
  SyntheticProcess p(7, 1, "/usr/bin/dd", {"dd"}, kT0);
  uint32_t f = p.Path("/data/x.bin");
  int64_t t = kT0;
  auto read = [&](int64_t offset, uint64_t bytes) {
    p.Read(OP_PREAD, t, t + kUs, f, offset, bytes);
    t += 2 * kUs;
  };
  read(0, 100);      // first
  read(100, 100);    // consecutive
  read(300, 100);    // sequential (gap 100)
  read(500, 100);    // strided (the same gap)
  read(50, 10);      // random (backwards)
  read(60, 10);      // consecutive
  read(70 + 131072, 10);          // sequential: skips 128 KiB, within read-ahead
  read(80 + 2 * 131072 + 1, 10);  // random: forward, but past read-ahead
  read(1 << 20, 65536);           // random: forward, not the same gap again
  read((1 << 20) + 65536 + 262144, 65536);  // sequential: skips 4 x the read
  p.WriteTo(File("p.iotap"));
  report::Report r = Analyze();
  const report::AccessPattern& a = r.data_files().read_pattern();
  EXPECT_EQ(a.consecutive(), 2);
  EXPECT_EQ(a.sequential(), 3);
  EXPECT_EQ(a.strided(), 1);
  EXPECT_EQ(a.random(), 3);
}

TEST_F(RunAnalysisTest, CleanRunRaisesNothingAlarming) {
  WriteTrainingRun(this, dir_.string());
  report::Report r = Analyze();
  for (const report::Finding& f : r.findings()) {
    EXPECT_EQ(f.severity(), report::Finding::INFO) << f.id() << ": " << f.summary();
  }
  ASSERT_GE(r.findings_size(), 1);
  EXPECT_EQ(r.findings(r.findings_size() - 1).id(), "no_bottleneck");
}

// Two ranks of a synchronous job on two hosts: 9 steps ending together but for
// a jitter of -0.4..+0.4 ms, the second host's wall clock `skew_ns` ahead.
void WriteTwoHostRun(const std::string& dir, int64_t skew_ns) {
  for (int rank = 0; rank < 2; ++rank) {
    SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0,
                       ProcessHeader::ORIGIN_EXEC, rank == 0 ? "node0" : "node1");
    p.header().set_rank(rank);
    p.header().set_start_realtime_ns(kT0 + (rank == 1 ? skew_ns : 0));
    for (int step = 0; step < 9; ++step) {
      int64_t start = kT0 + (10 + 20 * step) * kMs;
      int64_t jitter = rank == 1 ? (step - 4) * 100 * kUs : 0;
      p.Marker(OP_STEP_BEGIN, start, start, step);
      p.Marker(OP_STEP_END, start + 20 * kMs + jitter, start + 20 * kMs + jitter, step);
    }
    p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 300 * kMs);
    p.WriteTo(dir + "/rank" + std::to_string(rank) + ".iotap");
  }
}

int NotesMentioning(const report::Report& r, report::Note::Level level, const std::string& text) {
  int n = 0;
  for (const report::Note& note : r.notes()) {
    n += note.level() == level && note.message().find(text) != std::string::npos;
  }
  return n;
}

int WarningsMentioning(const report::Report& r, const std::string& text) {
  return NotesMentioning(r, report::Note::WARNING, text);
}

TEST_F(RunAnalysisTest, HostClockSkewFromTheStepEndsOfSynchronousRanks) {
  WriteTwoHostRun(dir_.string(), 50 * kMs);
  report::Report r = Analyze();
  EXPECT_EQ(r.run().ranks(), 2);
  ASSERT_EQ(r.run().host_clocks_size(), 1);
  const report::HostClock& c = r.run().host_clocks(0);
  EXPECT_EQ(c.host(), "node1");
  EXPECT_EQ(c.reference_host(), "node0");
  EXPECT_NEAR(c.offset_s(), 0.050, 1e-9);
  EXPECT_NEAR(c.spread_s(), 0.0002, 1e-9);  // median of |jitter|: 0.2 ms
  EXPECT_EQ(c.steps(), 9);
  EXPECT_EQ(WarningsMentioning(r, "the clock of node1 seems ahead of node0's by 50.0 ms"), 1);
  EXPECT_EQ(WarningsMentioning(r, "wall clock"), 0);  // a skew, not a step
}

TEST_F(RunAnalysisTest, SynchronisedHostsRaiseNoClockWarning) {
  WriteTwoHostRun(dir_.string(), 0);
  report::Report r = Analyze();
  ASSERT_EQ(r.run().host_clocks_size(), 1);
  EXPECT_NEAR(r.run().host_clocks(0).offset_s(), 0, 1e-9);
  EXPECT_EQ(WarningsMentioning(r, "clock"), 0);
}

TEST_F(RunAnalysisTest, WallClockSetDuringTheRunIsReported) {
  SyntheticProcess p(7, 1, "/usr/bin/dd", {"dd"}, kT0);
  // At the end the wall clock reads 2 s more than the monotonic clock's
  // progress explains: it was set forward during the run.
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 600 * kMs, kT0 + 2600 * kMs);
  p.WriteTo(File("dd.iotap"));
  report::Report r = Analyze();
  EXPECT_EQ(WarningsMentioning(r, "the wall clock of node0 was set forward by 2.00 s while "
                                  "process 7 ran"),
            1);
}

// Ranks launched by srun each run their own `iotap run`: one job, told as
// such. Traces of two Slurm jobs in one directory are a mistake, said loudly.
TEST_F(RunAnalysisTest, SessionsAndJobsInOneDirectoryAreNamed) {
  auto write = [&](int pid, const std::string& session, const std::string& job) {
    SyntheticProcess p(pid, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
    p.header().set_session(session);
    p.header().set_job_id(job);
    p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 100 * kMs);
    p.WriteTo(File("p" + std::to_string(pid) + ".iotap"));
  };
  write(10, "s-a", "4242");
  write(11, "s-b", "4242");
  report::Report r = Analyze();
  EXPECT_EQ(NotesMentioning(r, report::Note::INFO, "2 `iotap run` sessions wrote here for job 4242"), 1);
  EXPECT_EQ(NotesMentioning(r, report::Note::WARNING, "different jobs"), 0);

  write(12, "s-c", "4343");
  r = Analyze();
  EXPECT_EQ(NotesMentioning(r, report::Note::WARNING,
                            "the traces come from 2 different jobs (4242, 4343)"),
            1);
}

// Damaged or hostile clocks (any uint64 in the header, the snapshots, the
// end record) must not overflow anything: the asan preset runs this under
// UndefinedBehaviorSanitizer.
TEST_F(RunAnalysisTest, AbsurdClocksOverflowNothing) {
  const uint64_t absurd[] = {UINT64_MAX, uint64_t{1} << 63, (uint64_t{1} << 62) + 1, 0};
  int pid = 500;
  for (uint64_t realtime : absurd) {
    for (uint64_t monotonic : absurd) {
      SyntheticProcess p(pid, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
      p.header().set_start_realtime_ns(realtime);
      p.header().set_start_monotonic_ns(monotonic);
      uint32_t f = p.Path("/data/a.bin");
      p.Read(OP_PREAD, kT0 + kMs, kT0 + 2 * kMs, f, 0, 4096);
      Packet clock;
      clock.mutable_clock()->set_monotonic_ns(monotonic);
      clock.mutable_clock()->set_realtime_ns(realtime);
      p.TimedPacket(clock, kT0 + kMs);
      p.Marker(OP_STEP_BEGIN, kT0 + kMs, kT0 + kMs, 0);
      p.Marker(OP_STEP_END, kT0 + 3 * kMs, kT0 + 3 * kMs, 0);
      p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 4 * kMs, static_cast<int64_t>(realtime >> 1));
      p.WriteTo(File("p" + std::to_string(pid) + ".iotap"));
      ++pid;
    }
  }
  absl::StatusOr<report::Report> r = AnalyzeRun(dir_.string(), AnalysisOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->processes_size(), 16);
}

}  // namespace
}  // namespace iotap::analyzer
