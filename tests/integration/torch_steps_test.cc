// Steps from a real PyTorch job under `iotap run --torch-steps`, and the
// Python helper's markers with and without the shim.

#include <set>
#include <string>
#include <vector>

#include "analyzer/read/trace_set.h"
#include "analyzer/steps/marker_steps.h"
#include "analyzer/steps/step_log.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

using analyzer::StepLog;
using analyzer::StepSpan;
using ::testing::HasSubstr;

RunResult RunWithTorchSteps(const std::vector<std::string>& argv, const std::string& trace_dir,
                            const RunOptions& options = {}) {
  std::vector<std::string> full = {IotapBinary(), "run", "--torch-steps", "-o", trace_dir, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return RunProgram(full, options);
}

// Step logs of every trace file in `dir`, through MarkerCollector as the
// analysis uses it; `files` gets the number of trace files.
std::vector<StepLog> MarkerLogs(const std::string& dir, size_t* files) {
  auto list = analyzer::ListTraceFiles(dir);
  EXPECT_TRUE(list.ok()) << list.status();
  if (!list.ok()) return {};
  *files = list->size();
  analyzer::MarkerCollector collector;
  for (const std::string& f : *list) {
    std::vector<analyzer::ReadIssue> issues;
    EXPECT_TRUE(analyzer::ReadTraceFile(f, &collector, &issues).ok()) << f;
    EXPECT_TRUE(issues.empty()) << issues[0].ToString();
  }
  return collector.TakeLogs();
}

// Every step of a --torch-steps run: numbered 0..n-1, one after another,
// each with exactly one data wait that lies inside it.
void ExpectTorchSteps(const StepLog& log, int steps) {
  ASSERT_EQ(log.spans.size(), static_cast<size_t>(steps));
  for (int i = 0; i < steps; ++i) {
    const StepSpan& s = log.spans[i];
    EXPECT_EQ(s.step, i);
    EXPECT_EQ(s.rank, -1);
    EXPECT_TRUE(s.has_data_wait);
    ASSERT_EQ(s.data_waits.size(), 1u) << "step " << i;
    EXPECT_LE(s.start_ns, s.data_waits[0].start_ns) << "step " << i;
    EXPECT_LT(s.data_waits[0].start_ns, s.data_waits[0].end_ns) << "step " << i;
    EXPECT_LE(s.data_waits[0].end_ns, s.end_ns) << "step " << i;
    if (i == 0) {
      EXPECT_EQ(s.start_ns, s.data_waits[0].start_ns);
    } else {
      EXPECT_EQ(s.start_ns, log.spans[i - 1].end_ns) << "step " << i;
    }
  }
}

// 2 epochs of 40 samples in batches of 8 with 2 forked workers: 10 optimizer
// steps, 2 epochs, 4 worker processes. The optimizer is a subclass calling
// super().step(): still one step per call.
TEST(TorchStepsTest, ForkedWorkers) {
  TempDir dir;
  RunResult r =
      RunWithTorchSteps({Python(), SourcePath("tests/integration/programs/train_steps.py"), "2",
                         "40", "8", "2", "fork", "custom"},
                        dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.err;
  EXPECT_EQ(r.out, "optimizer steps 10\n");
  size_t files = 0;
  std::vector<StepLog> logs = MarkerLogs(dir.Sub("trace"), &files);
  EXPECT_EQ(files, 5u);  // the job and 2 workers per epoch
  ASSERT_EQ(logs.size(), 1u);
  ExpectTorchSteps(logs[0], 10);
  ASSERT_EQ(logs[0].marks.size(), 2u);
  for (const analyzer::StepMark& m : logs[0].marks) EXPECT_EQ(m.name, "epoch");
  EXPECT_LT(logs[0].marks[0].time_ns, logs[0].spans[0].start_ns);
  EXPECT_LT(logs[0].marks[1].time_ns, logs[0].spans[5].end_ns);
  EXPECT_GT(logs[0].marks[1].time_ns, logs[0].spans[4].end_ns);
}

// Spawned workers start a new interpreter, which runs the sitecustomize too
// and instruments torch there; they must work and record no steps.
TEST(TorchStepsTest, SpawnedWorkers) {
  TempDir dir;
  RunResult r =
      RunWithTorchSteps({Python(), SourcePath("tests/integration/programs/train_steps.py"), "1",
                         "24", "8", "1", "spawn"},
                        dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.err;
  EXPECT_EQ(r.out, "optimizer steps 3\n");
  size_t files = 0;
  std::vector<StepLog> logs = MarkerLogs(dir.Sub("trace"), &files);
  ASSERT_EQ(logs.size(), 1u);
  ExpectTorchSteps(logs[0], 3);
  EXPECT_EQ(logs[0].marks.size(), 1u);
}

// An evaluation loop (no optimizer step) over 2 epochs of 5 batches with a
// forked worker: each loader iteration is a step, from one batch request to
// the next or to the second epoch's mark; the last batch begins none.
TEST(TorchStepsTest, LoopWithoutOptimizerStepsGetsAStepPerBatch) {
  TempDir dir;
  RunResult r =
      RunWithTorchSteps({Python(), SourcePath("tests/integration/programs/train_steps.py"), "2",
                         "40", "8", "1", "fork", "eval"},
                        dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.err;
  EXPECT_EQ(r.out, "batches 10\n");
  size_t files = 0;
  std::vector<StepLog> logs = MarkerLogs(dir.Sub("trace"), &files);
  ASSERT_EQ(logs.size(), 1u);
  const StepLog& log = logs[0];
  ASSERT_EQ(log.spans.size(), 9u);
  ASSERT_EQ(log.marks.size(), 2u);
  const int64_t second_epoch = log.marks[1].time_ns;
  for (int i = 0; i < 9; ++i) {
    const StepSpan& s = log.spans[i];
    EXPECT_EQ(s.step, i);
    ASSERT_EQ(s.data_waits.size(), 1u) << "step " << i;
    EXPECT_EQ(s.start_ns, s.data_waits[0].start_ns) << "step " << i;
    if (i == 4) {
      EXPECT_EQ(s.end_ns, second_epoch);  // the last batch of the first epoch
    } else if (i < 8) {
      EXPECT_EQ(s.end_ns, log.spans[i + 1].start_ns) << "step " << i;
    }
  }
  EXPECT_NE(log.step_definition.find("each iteration of the DataLoader is a step"),
            std::string::npos);
  RunResult report = RunProgram({IotapBinary(), "report", dir.Sub("trace")});
  EXPECT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("9 steps"));
  EXPECT_THAT(report.out, HasSubstr("each iteration of the DataLoader is a step"));
}

// A process that never imports torch gets neither torch nor the helper, and
// the sitecustomize that --torch-steps hides still runs.
TEST(TorchStepsTest, OtherPythonProcessesAreLeftAlone) {
  TempDir dir;
  ASSERT_EQ(RunProgram({"mkdir", dir.Sub("site")}).exit_code, 0);
  WriteFile(dir.Sub("site/sitecustomize.py"), "print('user sitecustomize')\n");
  RunOptions options;
  options.env["PYTHONPATH"] = dir.Sub("site");
  RunResult r =
      RunWithTorchSteps({Python(), "-c",
                         "import sys; print(sorted(m for m in sys.modules if m.split('.')[0] in "
                         "('torch', 'iotap', 'ctypes')))"},
                        dir.Sub("trace"), options);
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.err;
  EXPECT_EQ(r.out, "user sitecustomize\n[]\n");

  RunResult help = RunProgram({IotapBinary(), "run", "--help"});
  EXPECT_THAT(help.out, HasSubstr("--torch-steps"));
}

TEST(PythonHelperTest, RecordsMarkersWhenTheShimIsLoaded) {
  TempDir dir;
  RunOptions options;
  options.env["PYTHONPATH"] = SourcePath("interpose/python");
  RunResult r = RunPreloaded({Python(), SourcePath("tests/integration/programs/markers.py")},
                             dir.Sub("trace"), options);
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.err;
  EXPECT_EQ(r.out, "enabled True\nspan 0 0 -1 -1 -1\n");
  LoadedRun run = LoadRun(dir.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  std::vector<const LoadedEvent*> markers;
  for (const LoadedEvent& e : run.processes[0].events) {
    if (e.op >= OP_STEP_BEGIN && e.op <= OP_OPTIMIZER_STEP) markers.push_back(&e);
  }
  ASSERT_EQ(markers.size(), 8u);
  const Op kOps[] = {OP_STEP_BEGIN, OP_MARK,     OP_STEP_END,  OP_STEP_BEGIN,
                     OP_DATA_WAIT,  OP_STEP_END, OP_DATA_WAIT, OP_OPTIMIZER_STEP};
  const uint64_t kAux[] = {3, 0, 3, 4, 0, 4, 7, 8};
  for (size_t i = 0; i < markers.size(); ++i) {
    EXPECT_EQ(markers[i]->op, kOps[i]) << i;
    EXPECT_EQ(markers[i]->aux, kAux[i]) << i;
  }
  EXPECT_EQ(markers[1]->name, "checkpoint");
  // The wait inside step 4, timed by Python.
  EXPECT_LE(markers[3]->start_ns, markers[4]->start_ns);
  EXPECT_LE(markers[4]->end_ns, markers[5]->start_ns);
  EXPECT_EQ(markers[4]->flags, static_cast<uint32_t>(FLAG_EXPLICIT_TIMES));
  // Times given to iotap_span come back to the nanosecond (10 ns units).
  EXPECT_EQ(markers[6]->start_ns, 1000000000000);
  EXPECT_EQ(markers[6]->end_ns, 1000000001230);
  EXPECT_EQ(markers[7]->start_ns, 2000000000000);
  EXPECT_EQ(markers[7]->end_ns, 2000000000500);
  EXPECT_EQ(markers[7]->flags, static_cast<uint32_t>(FLAG_EXPLICIT_TIMES));

  // ReadStepLog reads the markers of a trace file.
  absl::StatusOr<StepLog> log = analyzer::ReadStepLog(run.processes[0].trace_file);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->source, analyzer::StepSource::kMarkers);
  ASSERT_EQ(log->spans.size(), 2u);
  EXPECT_EQ(log->spans[0].step, 3);
  EXPECT_EQ(log->spans[1].step, 4);
  EXPECT_EQ(log->spans[1].data_waits.size(), 1u);
  EXPECT_TRUE(log->spans[0].data_waits.empty());
  ASSERT_EQ(log->marks.size(), 1u);
  EXPECT_EQ(log->marks[0].name, "checkpoint");
}

TEST(PythonHelperTest, DoesNothingWithoutTheShim) {
  RunOptions options;
  options.env["PYTHONPATH"] = SourcePath("interpose/python");
  options.unset_env = {"LD_PRELOAD"};
  RunResult r =
      RunProgram({Python(), SourcePath("tests/integration/programs/markers.py")}, options);
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << "\n" << r.err;
  EXPECT_EQ(r.out, "enabled False\ninstrumented False\nno iotap_span\n");
  EXPECT_EQ(r.err, "");
}

}  // namespace
}  // namespace iotap::testing
