// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <sstream>
#include <string>
#include <vector>

#include "analyzer/analysis/cuda_stats.h"
#include "analyzer/analysis/hdf5_stats.h"
#include "analyzer/analysis/interval_union.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/analysis/stats.h"
#include "analyzer/analysis/tfrecord_stats.h"
#include "analyzer/analysis/time_bitmap.h"
#include "analyzer/analysis/wait_inference.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::HostileRunDirectory;
using testing::TempDirectory;
using testing::WriteTemp;

TEST(HeaderExamplesTest, IntervalUnion) {
  // interval_union.h
  IntervalUnion u(/*horizon_ns=*/2'000'000'000);
  u.Add(100, 250);
  u.Add(200, 300);   // overlaps: the union is [100, 300)
  u.Finish();
  EXPECT_EQ(u.total_ns(), 200);
}

TEST(HeaderExamplesTest, TimeBitmap) {
  const int64_t run_start_ns = 1'000'000'000;
  const int64_t start_ns = run_start_ns + 5'000, end_ns = run_start_ns + 9'000;
  const int64_t window_start = run_start_ns + 7'000, window_end = run_start_ns + 20'000;
  // time_bitmap.h
  TimeBitmap io(run_start_ns, /*resolution_ns=*/1000);
  io.Set(start_ns, end_ns);              // any order, overlaps fine
  EXPECT_EQ(io.Count(window_start, window_end), 2'000);  // busy ns inside the window
}

TEST(HeaderExamplesTest, WaitInference) {
  ProcessTrace process("trainer.iotap");
  ProcessHeader header;
  header.set_pid(7);
  header.set_wait_threshold_ns(20'000);
  process.SetHeader(header);
  Event e;
  e.op = OP_POLL;
  e.tid = 7;
  const int64_t start = 1'000'000, end = 9'000'000;
  // wait_inference.h
  WaitCollector c(/*trainer=*/true, /*origin_ns=*/0, /*resolution_ns=*/1000);
  c.OnProcess(process);
  uint32_t channel = c.Channel("pipe:[12]");
  c.OnWait(e, start, end, channel);                      // Layer::kWait
  WaitEvidence ev = c.Finish();
  absl::flat_hash_set<std::string> loader_channels = {"pipe:[12]"};
  TimeBitmap io(0, 1000);
  WaitInput input{&ev, &loader_channels, /*has_loaders=*/true, &io, nullptr};
  StepSpan step;
  step.start_ns = 0;
  step.end_ns = 20'000'000;
  std::vector<StepSpan> steps = {step};
  std::vector<InferredWindow> w = InferWaitWindows(input, steps);
  std::vector<TimeWindow> waits = WaitsInside(MergeWindows(w), step.start_ns, step.end_ns);

  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0].duration_ns(), 8'000'000);
}

TEST(HeaderExamplesTest, CudaStats) {
  EventBatch batch;
  Event copy;
  copy.op = OP_CUDA_MEMCPY_HTOD;
  copy.requested = 4096;
  copy.flags = FLAG_CUDA_PINNED;
  batch.events = {copy, copy};
  // cuda_stats.h
  CudaStats cuda;
  for (const Event& e : batch.events) cuda.Add(e);
  CudaReport report = cuda.Finish();

  ASSERT_EQ(report.copies.size(), 1u);
  EXPECT_EQ(report.copies[0].calls, 2u);
  EXPECT_EQ(report.copies[0].bytes, 8192u);
}

// Feeds a collector visitor by visitor, as StatsCollector does.
template <typename Collector>
struct Feeder : TraceVisitor {
  explicit Feeder(Collector* c) : collector(c) {}
  void OnProcess(const ProcessTrace& p) override { collector->OnProcess(p); }
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override { collector->OnEvents(p, b); }
  void OnPacket(const ProcessTrace& p, const Packet& k) override { collector->OnPacket(p, k); }
  void OnFileEnd(const ProcessTrace& p) override { collector->OnFileEnd(p); }
  Collector* collector;
};

TEST(HeaderExamplesTest, Hdf5Stats) {
  const std::vector<std::string> files = *ListTraceFiles(HostileRunDirectory());
  // hdf5_stats.h
  Hdf5Collector hdf5;      // fed by StatsCollector, visitor by visitor
  Feeder<Hdf5Collector> feed(&hdf5);
  ReadTraceSet(files, &feed);
  std::vector<DatasetStats> datasets = hdf5.Finish();

  ASSERT_EQ(datasets.size(), 1u);
  EXPECT_EQ(datasets[0].reads, 1u);
  EXPECT_EQ(datasets[0].posix_reads, 2u);
}

TEST(HeaderExamplesTest, TfRecordStats) {
  const std::vector<std::string> files = *ListTraceFiles(HostileRunDirectory());
  // tfrecord_stats.h
  TfRecordCollector tf;    // fed by StatsCollector, and per process by
                           // ProcessAnalyzer for `iotap report`
  Feeder<TfRecordCollector> feed(&tf);
  ReadTraceSet(files, &feed);
  std::vector<TfRecordFileStats> tfrecords = tf.Finish();

  ASSERT_EQ(tfrecords.size(), 1u);
}

TEST(HeaderExamplesTest, Stats) {
  const std::vector<std::string> files = *ListTraceFiles(HostileRunDirectory());
  std::ostringstream out;
  // stats.h
  StatsCollector stats;
  TraceSetResult read = ReadTraceSet(files, &stats);
  out << StatsToJson(stats.Finish(std::move(read.issues)));

  EXPECT_NE(out.str().find("\"processes\": 3"), std::string::npos) << out.str();
}

TEST(HeaderExamplesTest, RunAnalysis) {
  const std::string steps = WriteTemp(
      "run-analysis-steps.jsonl",
      "{\"step\": 1, \"start\": 1700000000.1, \"end\": 1700000000.2, \"data_wait\": 0.05}\n"
      "{\"step\": 2, \"start\": 1700000000.2, \"end\": 1700000000.3, \"data_wait\": 0.05}\n");
  // run_analysis.h
  AnalysisOptions options;
  options.step_logs = {steps};
  absl::StatusOr<report::Report> r = AnalyzeRun(HostileRunDirectory(), options);

  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->run().steps(), 2);
}

}  // namespace
}  // namespace iotap::analyzer
