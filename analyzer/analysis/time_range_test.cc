#include "analyzer/analysis/time_range.h"

#include <unistd.h>

#include <filesystem>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;

class TimeRangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-range-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    WriteRun();
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A trainer with four 20 ms steps from 10 ms on, each waiting its first
  // 5 ms for data; a loader reading 4096 B at [12,15) ms, 1000 B at [31,34),
  // 3000 B at [38,42), 2000 B at [51,54) and 500 B at [71,72).
  void WriteRun() {
    SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
    for (int step = 0; step < 4; ++step) {
      int64_t start = kT0 + (10 + 20 * step) * kMs;
      trainer.Marker(OP_STEP_BEGIN, start, start, step);
      trainer.Marker(OP_DATA_WAIT, start, start + 5 * kMs, step);
      trainer.Marker(OP_STEP_END, start + 20 * kMs, start + 20 * kMs, step);
    }
    trainer.End(EndOfTrace::REASON_EXIT, 0, kT0 + 100 * kMs);
    trainer.WriteTo((dir_ / "trainer.iotap").string());
    SyntheticProcess loader(101, 100, "/usr/bin/python3", {"python3", "train.py"}, kT0 + kMs,
                            ProcessHeader::ORIGIN_FORK);
    uint32_t f = loader.Path("/data/a.bin");
    int64_t offset = 0;
    for (auto [from, to, bytes] : std::vector<std::tuple<int64_t, int64_t, uint64_t>>{
             {12, 15, 4096}, {31, 34, 1000}, {38, 42, 3000}, {51, 54, 2000}, {71, 72, 500}}) {
      loader.Read(OP_PREAD, kT0 + from * kMs, kT0 + to * kMs, f, offset, bytes);
      offset += static_cast<int64_t>(bytes);
    }
    loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, kT0 + 100 * kMs);
    loader.WriteTo((dir_ / "loader.iotap").string());
  }

  report::Report Analyze(TimeRange range) {
    AnalysisOptions options;
    options.range = range;
    absl::StatusOr<report::Report> r = AnalyzeRun(dir_.string(), options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  }

  std::filesystem::path dir_;
};

// [40, 80) ms holds the ends of step 1 (clipped to [40,50), its wait before
// 40 ms gone) and step 2 (wait [50,55)), and of the reads of 3000 B (clipped
// to [40,42)), 2000 B and 500 B.
TEST_F(TimeRangeTest, FiguresOfARangeAreThoseOfWhatEndsInIt) {
  report::Report r = Analyze(TimeRange{.from_ns = 40 * kMs, .to_ns = 80 * kMs});
  EXPECT_DOUBLE_EQ(r.run().duration_s(), 0.040);
  EXPECT_DOUBLE_EQ(r.run().range_from_s(), 0.040);
  EXPECT_DOUBLE_EQ(r.run().range_to_s(), 0.080);
  EXPECT_EQ(r.run().bytes_read(), 5500);
  EXPECT_EQ(r.data_files().reads(), 3);
  // [40,42) + [51,54) + [71,72) ms.
  EXPECT_DOUBLE_EQ(r.run().io_busy_s(), 0.006);
  ASSERT_EQ(r.steps_size(), 2);
  EXPECT_EQ(r.steps(0).step(), 1);
  EXPECT_DOUBLE_EQ(r.steps(0).start_s(), 0.040);
  EXPECT_DOUBLE_EQ(r.steps(0).duration_s(), 0.010);
  EXPECT_DOUBLE_EQ(r.steps(0).data_wait_s(), 0.0);
  EXPECT_DOUBLE_EQ(r.steps(0).hidden_io_s(), 0.002);
  EXPECT_EQ(r.steps(1).step(), 2);
  EXPECT_DOUBLE_EQ(r.steps(1).data_wait_s(), 0.005);
  EXPECT_DOUBLE_EQ(r.steps(1).fetch_s(), 0.003);
  // The run's warm-up step is not in the range: both steps count.
  const report::StepStatistics& st = r.step_statistics();
  EXPECT_EQ(st.steps(), 2);
  EXPECT_EQ(st.warmup_steps_skipped(), 0);
  EXPECT_DOUBLE_EQ(st.total_step_s(), 0.030);
  EXPECT_DOUBLE_EQ(st.data_stall_share(), 0.005 / 0.030);
  EXPECT_DOUBLE_EQ(st.fetch_share(), 0.6);
  EXPECT_DOUBLE_EQ(r.overlap().exposed_io_s(), 0.003);
  EXPECT_DOUBLE_EQ(r.overlap().hidden_io_s(), 0.002);
  // [71,72) lies in step 3, which ends after the range.
  EXPECT_DOUBLE_EQ(r.overlap().outside_steps_io_s(), 0.001);
  EXPECT_DOUBLE_EQ(r.run().steps(), 2);
}

TEST_F(TimeRangeTest, RangesSideBySideCountEachEventOnce) {
  report::Report whole = Analyze(TimeRange());
  EXPECT_FALSE(whole.run().has_range_from_s());
  EXPECT_FALSE(whole.run().has_range_to_s());
  EXPECT_EQ(whole.run().bytes_read(), 4096 + 1000 + 3000 + 2000 + 500);
  double bytes = 0, reads = 0, steps = 0;
  for (int64_t from = 0; from < 100; from += 25) {
    report::Report part = Analyze(TimeRange{.from_ns = from * kMs, .to_ns = (from + 25) * kMs});
    bytes += part.run().bytes_read();
    reads += part.data_files().reads();
    steps += part.steps_size();
  }
  EXPECT_EQ(bytes, whole.run().bytes_read());
  EXPECT_EQ(reads, 5);
  EXPECT_EQ(steps, 4);
}

TEST_F(TimeRangeTest, TheWarmUpStepIsLeftOutOnlyWhereTheRangeHoldsIt) {
  report::Report r = Analyze(TimeRange{.from_ns = 0, .to_ns = 60 * kMs});
  ASSERT_EQ(r.steps_size(), 2);
  EXPECT_EQ(r.step_statistics().steps(), 1);
  EXPECT_EQ(r.step_statistics().warmup_steps_skipped(), 1);
  // [12,15) ms in step 0's wait; [31,34) in step 1's; [38,42) hidden.
  EXPECT_DOUBLE_EQ(r.overlap().exposed_io_s(), 0.006);
  EXPECT_DOUBLE_EQ(r.overlap().hidden_io_s(), 0.004);
}

TEST_F(TimeRangeTest, ARangeAfterTheRunHoldsNothing) {
  report::Report r = Analyze(TimeRange{.from_ns = 200 * kMs, .to_ns = 300 * kMs});
  EXPECT_DOUBLE_EQ(r.run().duration_s(), 0);
  EXPECT_EQ(r.run().bytes_read(), 0);
  EXPECT_EQ(r.steps_size(), 0);
}

TEST(KeepStepsInRange, ClipsStartsAndWaits) {
  std::vector<StepSpan> steps(3);
  for (int k = 0; k < 3; ++k) {
    steps[k].step = k;
    steps[k].start_ns = k * 10;
    steps[k].end_ns = k * 10 + 10;
    steps[k].has_data_wait = true;
    steps[k].data_waits = {TimeWindow{k * 10, k * 10 + 4}, TimeWindow{k * 10 + 6, k * 10 + 8}};
  }
  EXPECT_FALSE(KeepStepsInRange(&steps, 15, 31));
  ASSERT_EQ(steps.size(), 2);
  EXPECT_EQ(steps[0].start_ns, 15);
  ASSERT_EQ(steps[0].data_waits.size(), 1);
  EXPECT_EQ(steps[0].data_waits[0].start_ns, 16);
  EXPECT_EQ(steps[1].start_ns, 20);
  EXPECT_EQ(steps[1].data_waits.size(), 2);
}

}  // namespace
}  // namespace iotap::analyzer
