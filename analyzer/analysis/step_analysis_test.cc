// The step analysis (step_analysis.cc) on small synthetic runs whose figures
// are known by construction: each step's wait split into fetch, preparation
// and other; hidden and exposed I/O; the statistics over counted steps;
// epochs; worker balance and CPU use; which step source wins, and whose
// steps are whose.

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;  // 1700000000 s
constexpr int64_t kMs = 1'000'000;

class StepAnalysisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDirectory() + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/run");
  }

  std::string RunDir() const { return dir_ + "/run"; }

  report::Report Analyze(const std::vector<std::string>& step_logs = {}) {
    AnalysisOptions options;
    options.step_logs = step_logs;
    absl::StatusOr<report::Report> r = AnalyzeRun(RunDir(), options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  }

  std::string dir_;
};

int Notes(const report::Report& r, const std::string& part) {
  int n = 0;
  for (const report::Note& note : r.notes()) n += note.message().find(part) != std::string::npos;
  return n;
}

// A trainer (rank 3) with two forked loaders. Four steps (ms from the run's
// start), each starting with a data wait:
//   step 0 [10, 110) wait [10, 40)    step 1 [110, 200) wait [110, 120)
//   step 2 [200, 320) wait [200, 220) step 3 [320, 380) wait [320, 330)
// Loader 101 (half a core all along) reads [15, 25) 4096 B, [112, 116)
// 8192 B, [150, 160) 1000 B; loader 102 (a quarter of a core) [202, 212)
// 65536 B, [260, 270) 100 B, [340, 350) 100 B. The trainer (a whole core)
// writes a checkpoint at [360, 365) and marks epochs at 5 and 200 ms.
void WriteTrainingRun(const std::string& dir) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.header().set_rank(3);
  const int64_t bounds[] = {10, 110, 200, 320, 380};
  const int64_t waits[] = {30, 10, 20, 10};
  uint32_t epoch = trainer.Name("epoch", InternedString::KIND_MARK);
  trainer.Add({.op = OP_MARK, .start_ns = kT0 + 5 * kMs, .end_ns = kT0 + 5 * kMs, .file = epoch});
  for (int s = 0; s < 4; ++s) {
    const int64_t start = kT0 + bounds[s] * kMs, end = kT0 + bounds[s + 1] * kMs;
    if (s == 2) trainer.Add({.op = OP_MARK, .start_ns = start, .end_ns = start, .file = epoch});
    trainer.Marker(OP_STEP_BEGIN, start, start, s);
    trainer.Marker(OP_DATA_WAIT, start, start + waits[s] * kMs, s);
    trainer.Marker(OP_STEP_END, end, end, s);
  }
  uint32_t checkpoint = trainer.Path("/data/ckpt.pt");
  trainer.Read(OP_PWRITE, kT0 + 360 * kMs, kT0 + 365 * kMs, checkpoint, 0, 1 << 20);
  trainer.Cpu(kT0, 0);
  trainer.Cpu(kT0 + 400 * kMs, 400 * kMs);
  trainer.End(EndOfTrace::REASON_EXIT, 0, kT0 + 420 * kMs);
  trainer.WriteTo(dir + "/trainer.iotap");

  struct Read {
    int64_t start_ms, end_ms;
    uint64_t bytes;
  };
  auto loader = [&](int pid, uint64_t cpu_ns, const std::vector<Read>& reads) {
    SyntheticProcess p(pid, 100, "/usr/bin/python3", {"python3", "train.py"}, kT0 + kMs,
                       ProcessHeader::ORIGIN_FORK);
    uint32_t f = p.Path("/data/shard-" + std::to_string(pid) + ".bin");
    int64_t offset = 0;
    for (const Read& r : reads) {
      p.Read(OP_PREAD, kT0 + r.start_ms * kMs, kT0 + r.end_ms * kMs, f, offset, r.bytes);
      offset += static_cast<int64_t>(r.bytes);
    }
    p.Cpu(kT0, 0);
    p.Cpu(kT0 + 400 * kMs, cpu_ns);
    p.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, kT0 + 400 * kMs);
    p.WriteTo(dir + "/loader-" + std::to_string(pid) + ".iotap");
  };
  loader(101, 200 * kMs, {{15, 25, 4096}, {112, 116, 8192}, {150, 160, 1000}});
  loader(102, 100 * kMs, {{202, 212, 65536}, {260, 270, 100}, {340, 350, 100}});
}

TEST_F(StepAnalysisTest, EachStepsWaitSplitsIntoFetchPreparationAndOther) {
  WriteTrainingRun(RunDir());
  report::Report r = Analyze();
  ASSERT_EQ(r.steps_size(), 4);
  struct Want {
    double start, end, wait, fetch, prep, io, write, read_bytes, epoch;
  };
  // Preparation is the wait outside fetching times the busiest loader's CPU
  // share (loader 101's half a core); other is what remains.
  const Want want[] = {
      {0.010, 0.110, 0.030, 0.010, 0.010, 0.010, 0, 4096, 0},
      {0.110, 0.200, 0.010, 0.004, 0.003, 0.014, 0, 8192 + 1000, 0},
      {0.200, 0.320, 0.020, 0.010, 0.005, 0.020, 0, 65536 + 100, 1},
      {0.320, 0.380, 0.010, 0.000, 0.005, 0.015, 0.005, 100, 1},
  };
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    const report::Step& s = r.steps(k);
    const Want& w = want[k];
    EXPECT_EQ(s.step(), k);
    EXPECT_EQ(s.rank(), 3);
    EXPECT_EQ(s.pid(), 100);
    EXPECT_DOUBLE_EQ(s.start_s(), w.start);
    EXPECT_DOUBLE_EQ(s.end_s(), w.end);
    EXPECT_DOUBLE_EQ(s.duration_s(), w.end - w.start);
    EXPECT_EQ(s.epoch(), w.epoch);
    EXPECT_DOUBLE_EQ(s.data_wait_s(), w.wait);
    EXPECT_DOUBLE_EQ(s.fetch_s(), w.fetch);
    EXPECT_DOUBLE_EQ(s.prep_s(), w.prep);
    EXPECT_DOUBLE_EQ(s.other_s(), w.wait - w.fetch - w.prep);
    EXPECT_DOUBLE_EQ(s.exposed_io_s(), w.fetch);
    EXPECT_DOUBLE_EQ(s.io_busy_s(), w.io);
    EXPECT_DOUBLE_EQ(s.hidden_io_s(), w.io - w.fetch);
    EXPECT_DOUBLE_EQ(s.write_busy_s(), w.write);
    EXPECT_EQ(s.read_bytes(), w.read_bytes);
  }
}

TEST_F(StepAnalysisTest, OverlapAndStatisticsOverTheCountedSteps) {
  WriteTrainingRun(RunDir());
  report::Report r = Analyze();
  const report::Overlap& o = r.overlap();
  EXPECT_DOUBLE_EQ(o.exposed_io_s(), 0.024);
  EXPECT_DOUBLE_EQ(o.hidden_io_s(), 0.035);
  EXPECT_DOUBLE_EQ(o.wait_s(), 0.070);
  EXPECT_DOUBLE_EQ(o.compute_s(), 0.300);
  EXPECT_DOUBLE_EQ(o.io_busy_s(), 0.059);  // every busy instant falls in a step
  EXPECT_EQ(o.outside_steps_io_s(), 0);
  EXPECT_DOUBLE_EQ(o.hidden_share(), 0.035 / 0.059);

  // The first step (workers starting, caches cold) is left out: steps 1-3
  // of 90, 120 and 60 ms, waiting 10, 20 and 10 ms.
  const report::StepStatistics& st = r.step_statistics();
  EXPECT_EQ(st.steps(), 3);
  EXPECT_EQ(st.warmup_steps_skipped(), 1);
  EXPECT_DOUBLE_EQ(st.median_step_s(), 0.090);
  EXPECT_DOUBLE_EQ(st.p90_step_s(), 0.120);
  EXPECT_DOUBLE_EQ(st.total_step_s(), 0.270);
  EXPECT_DOUBLE_EQ(st.median_data_wait_s(), 0.010);
  EXPECT_DOUBLE_EQ(st.total_data_wait_s(), 0.040);
  EXPECT_DOUBLE_EQ(st.data_stall_share(), 0.040 / 0.270);
  EXPECT_DOUBLE_EQ(st.fetch_share(), 0.014 / 0.040);
  EXPECT_DOUBLE_EQ(st.prep_share(), 0.013 / 0.040);
  EXPECT_DOUBLE_EQ(st.other_share(), 0.013 / 0.040);
  // Cores in use during the counted steps: 0.5 + 0.25 by the loaders.
  EXPECT_DOUBLE_EQ(st.loader_cores(), 0.75);
  EXPECT_DOUBLE_EQ(st.trainer_cores(), 1);
  EXPECT_EQ(st.loader_run_queue_cores(), 0);
  EXPECT_EQ(r.run().steps(), 4);
  EXPECT_DOUBLE_EQ(r.run().data_stall_share(), 0.040 / 0.270);
}

TEST_F(StepAnalysisTest, EpochsFromTheTrainersMarks) {
  WriteTrainingRun(RunDir());
  report::Report r = Analyze();
  ASSERT_EQ(r.epochs().epoch_size(), 2);
  const report::Epoch& e0 = r.epochs().epoch(0);
  EXPECT_EQ(e0.index(), 0);
  EXPECT_DOUBLE_EQ(e0.start_s(), 0.005);
  EXPECT_DOUBLE_EQ(e0.end_s(), 0.200);
  EXPECT_EQ(e0.read_bytes(), 4096 + 8192 + 1000);
  EXPECT_DOUBLE_EQ(e0.read_time_s(), 0.024);
  EXPECT_DOUBLE_EQ(e0.mean_read_latency_s(), 0.008);
  EXPECT_EQ(e0.steps(), 1);  // counted steps only: step 0 is left out
  EXPECT_DOUBLE_EQ(e0.median_step_s(), 0.090);
  const report::Epoch& e1 = r.epochs().epoch(1);
  EXPECT_DOUBLE_EQ(e1.start_s(), 0.200);
  EXPECT_DOUBLE_EQ(e1.end_s(), 0.420);  // the run's end
  EXPECT_EQ(e1.read_bytes(), 65536 + 100 + 100);
  EXPECT_DOUBLE_EQ(e1.read_time_s(), 0.030);
  EXPECT_DOUBLE_EQ(e1.mean_read_latency_s(), 0.010);
  EXPECT_EQ(e1.steps(), 2);
  EXPECT_DOUBLE_EQ(e1.median_step_s(), (0.120 + 0.060) / 2);
}

TEST_F(StepAnalysisTest, WorkerBalance) {
  WriteTrainingRun(RunDir());
  report::Report r = Analyze();
  const report::Workers& w = r.workers();
  EXPECT_EQ(w.trainers(), 1);
  EXPECT_EQ(w.loaders(), 2);
  ASSERT_EQ(w.loaders_per_trainer_size(), 1);
  EXPECT_EQ(w.loaders_per_trainer(0), 2);
  // Loader 102 read 65736 B of the 79024 both read, and was busy 30 of 54 ms.
  EXPECT_DOUBLE_EQ(w.max_over_mean_bytes(), 65736.0 / (79024.0 / 2));
  EXPECT_DOUBLE_EQ(w.max_over_mean_busy(), 30.0 / 27.0);
  EXPECT_DOUBLE_EQ(w.excess_busy_s(), 0.003);
}

// Two ranks and a third Python process; a JSON-lines step log replaces the
// markers, and its steps go to the process of their rank.
TEST_F(StepAnalysisTest, AStepLogWinsOverMarkersAndGoesToItsRank) {
  SyntheticProcess a(200, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  a.header().set_rank(0);
  a.Marker(OP_STEP_BEGIN, kT0 + 5 * kMs, kT0 + 5 * kMs, 0);
  a.Marker(OP_STEP_END, kT0 + 8 * kMs, kT0 + 8 * kMs, 0);
  a.End(EndOfTrace::REASON_EXIT, 0, kT0 + 100 * kMs);
  a.WriteTo(RunDir() + "/a.iotap");
  SyntheticProcess b(300, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0 + kMs);
  b.header().set_rank(1);
  b.End(EndOfTrace::REASON_EXIT, 0, kT0 + 100 * kMs);
  b.WriteTo(RunDir() + "/b.iotap");
  SyntheticProcess c(400, 1, "/usr/bin/python3", {"python3", "monitor.py"}, kT0 + 2 * kMs);
  c.End(EndOfTrace::REASON_EXIT, 0, kT0 + 100 * kMs);
  c.WriteTo(RunDir() + "/c.iotap");
  const std::string log = testing::WriteTemp(
      "rank-steps.jsonl",
      "{\"step\": 1, \"rank\": 0, \"start\": 1700000000.010, \"end\": 1700000000.030, "
      "\"data_wait\": 0.005}\n"
      "{\"step\": 1, \"rank\": 1, \"start\": 1700000000.010, \"end\": 1700000000.040}\n"
      "{\"step\": 2, \"rank\": 0, \"start\": 1700000000.030, \"end\": 1700000000.060, "
      "\"data_wait\": 0}\n"
      "{\"step\": 9, \"start\": 1700000000.060, \"end\": 1700000000.070}\n");
  report::Report r = Analyze({log});

  // Rank 0's steps (the line without a rank goes to the first trainer), then
  // rank 1's; the markers' step is gone.
  ASSERT_EQ(r.steps_size(), 4);
  const double want[][5] = {// step, rank, start, duration, data wait
                            {1, 0, 0.010, 0.020, 0.005},
                            {2, 0, 0.030, 0.030, 0},
                            {9, 0, 0.060, 0.010, -1},
                            {1, 1, 0.010, 0.030, -1}};
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(r.steps(k).step(), want[k][0]);
    EXPECT_EQ(r.steps(k).rank(), want[k][1]);
    EXPECT_EQ(r.steps(k).pid(), want[k][1] == 0 ? 200 : 300);
    EXPECT_DOUBLE_EQ(r.steps(k).start_s(), want[k][2]);
    EXPECT_DOUBLE_EQ(r.steps(k).duration_s(), want[k][3]);
    EXPECT_DOUBLE_EQ(r.steps(k).data_wait_s(), want[k][4]);
  }
  EXPECT_EQ(Notes(r, "some steps name no rank or process of this run; they were given to the "
                     "first trainer"),
            1);
  ASSERT_EQ(r.run().step_sources_size(), 1);
  EXPECT_EQ(r.run().step_sources(0), log);

  // Counted: rank 0's steps 2 and 9 (its first is left out) and rank 1's
  // only step; only step 2 says when it waited (never).
  const report::StepStatistics& st = r.step_statistics();
  EXPECT_EQ(st.steps(), 3);
  EXPECT_EQ(st.warmup_steps_skipped(), 1);
  EXPECT_DOUBLE_EQ(st.median_step_s(), 0.030);
  EXPECT_DOUBLE_EQ(st.total_step_s(), 0.070);
  EXPECT_EQ(st.median_data_wait_s(), 0);
  EXPECT_EQ(st.data_stall_share(), 0);

  // The Python process with neither steps nor loaders only helped.
  ASSERT_EQ(r.processes_size(), 3);
  EXPECT_EQ(r.processes(0).role(), report::TRAINER);
  EXPECT_EQ(r.processes(1).role(), report::TRAINER);
  EXPECT_EQ(r.processes(2).pid(), 400);
  EXPECT_EQ(r.processes(2).role(), report::HELPER);
  EXPECT_EQ(r.workers().trainers(), 2);
  EXPECT_EQ(r.workers().loaders(), 0);
}

TEST_F(StepAnalysisTest, StepLogsThatCannotBeLinedUpAreNotUsed) {
  WriteTrainingRun(RunDir());
  // PyTorch's profiler without Kineto: times without a wall-clock origin.
  const std::string profile = testing::TestData("torch113_cpu.pt.trace.json");
  const std::string missing = dir_ + "/missing.jsonl";
  report::Report r = Analyze({profile, missing});
  EXPECT_EQ(Notes(r, profile + ": its times have no wall-clock origin, so its steps cannot be "
                               "lined up with I/O; not used"),
            1);
  EXPECT_EQ(Notes(r, "step log not used: "), 1);
  EXPECT_EQ(Notes(r, missing), 1);
  // The markers' steps stand.
  EXPECT_EQ(r.steps_size(), 4);
  ASSERT_EQ(r.run().step_sources_size(), 1);
  EXPECT_EQ(r.run().step_sources(0), "markers of pid 100");
}

TEST_F(StepAnalysisTest, NoStepsNoStatistics) {
  SyntheticProcess p(7, 1, "/usr/bin/python3", {"python3", "load.py"}, kT0);
  uint32_t f = p.Path("/data/x.bin");
  p.Read(OP_PREAD, kT0 + kMs, kT0 + 3 * kMs, f, 0, 4096);
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 10 * kMs);
  p.WriteTo(RunDir() + "/p.iotap");
  report::Report r = Analyze();
  EXPECT_EQ(r.steps_size(), 0);
  EXPECT_EQ(r.step_statistics().steps(), 0);
  EXPECT_EQ(r.step_statistics().median_data_wait_s(), -1);
  EXPECT_EQ(r.step_statistics().data_stall_share(), -1);
  EXPECT_EQ(r.run().data_stall_share(), -1);
  // The I/O happened outside any step.
  EXPECT_DOUBLE_EQ(r.overlap().io_busy_s(), 0.002);
  EXPECT_DOUBLE_EQ(r.overlap().outside_steps_io_s(), 0.002);
  EXPECT_EQ(r.overlap().hidden_share(), 0);
  EXPECT_EQ(r.processes(0).role(), report::TRAINER);
}

}  // namespace
}  // namespace iotap::analyzer
