// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <map>
#include <utility>
#include <string>
#include <vector>

#include "analyzer/analysis/process_analysis.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/analysis/sliced_run.h"
#include "analyzer/analysis/time_range.h"
#include "analyzer/analysis/wait_inference.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::HostileRunDirectory;
using testing::TempDirectory;
using testing::WriteTemp;

TEST(HeaderExamplesTest, TimeRange) {
  // time_range.h (a run of under a second: nothing of it lies in the range)
  AnalysisOptions options;
  options.range = TimeRange{.from_ns = 60'000'000'000, .to_ns = 70'000'000'000};
  absl::StatusOr<report::Report> r = AnalyzeRun(HostileRunDirectory(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->run().range_from_s(), 60);
  EXPECT_EQ(r->run().range_to_s(), 70);
  EXPECT_EQ(r->run().duration_s(), 0);
  EXPECT_EQ(r->run().bytes_read(), 0);
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

TEST(HeaderExamplesTest, ProcessAnalysis) {
  const std::string trace = ListTraceFiles(HostileRunDirectory())->front();
  // process_analysis.h
  PathTable paths;
  ProcessAnalyzer analyzer(AnalysisScope::kCounts, &paths);
  std::vector<ReadIssue> issues;
  absl::Status s = ReadTraceFile(trace, &analyzer, &issues);
  ProcessResult r = analyzer.Take();
  // r.files[i]: the counts of the file paths.path(r.file_refs[i].path_id)

  ASSERT_TRUE(s.ok()) << s;
  ASSERT_FALSE(r.files.empty());
  EXPECT_EQ(r.files.size(), r.file_refs.size());
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

TEST(HeaderExamplesTest, RunCounts) {
  const std::string trace = ListTraceFiles(HostileRunDirectory())->front();
  // run_analysis.h
  RunCounts counts = CountTraceFiles({trace}, AnalysisOptions());
  // counts.WithFileRows().files(0).reads(): the same figure as the report's

  EXPECT_EQ(counts.files_read, 1);
  EXPECT_EQ(counts.stats.processes(), 1u);
}

TEST(HeaderExamplesTest, SlicedRun) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(HostileRunDirectory());
  ASSERT_TRUE(files.ok());
  std::vector<ReadIssue> issues;
  const int64_t now_unix_ns = CatalogTraceFiles(*files).end_unix_ns + 3'000'000'000;
  // sliced_run.h
  SlicedRun run(SlicedRun::Options{});
  run.SetOrigin(CatalogTraceFiles(*files).start_unix_ns);
  TraceFollower follower((*files)[0]);    // in `iotap top`, a RunFollower
  ASSERT_TRUE(follower.ReadNew(&run, &issues).ok());  // the header returns the status
  run.Seal(now_unix_ns - 2'000'000'000);  // slices no event will reach now
  absl::StatusOr<report::Report> r =
      run.Report(run.sealed_until() - 10'000'000'000, run.sealed_until());
  ASSERT_TRUE(r.ok()) << r.status();  // a run shorter than 10 s: all of it
  EXPECT_EQ(r->processes_size(), 1);
}

}  // namespace
}  // namespace iotap::analyzer
