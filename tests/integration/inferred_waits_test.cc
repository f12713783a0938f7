// Inferred data waits (issue 14) on real PyTorch jobs: without --torch-steps,
// with the step sources other jobs leave (JSON lines of compute spans alone,
// a TensorBoard scalar per step), iotap must reach the diagnosis it reaches
// from measured waits.
//
// - The planted bottlenecks (examples/planted, run.sh with
//   STEP_SOURCES=logs): the job logs its own steps with the wait for each
//   batch it measured; step_sources.py turns that log into the other
//   sources. With each, the first finding is the planted cause (the one
//   planted_test finds with --torch-steps) and the data stall is within 10
//   points of the measured one.
// - DataLoaders with 0, 1 and 2 workers, forked and spawned: the trainer's
//   waits are inferred, of the kind the loader makes them, and their stall
//   is within 10 points of the measured one.
//
// These run one at a time (SERIAL): a job that competes with other tests for
// the two cores is a different job.

#include <cmath>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "iotap/report.pb.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

using report::Finding;

constexpr int kSkip = 77;  // run.sh: the case cannot run on this machine
constexpr double kTolerance = 0.10;  // the judged bound on the stall, in share

const char* const kSources[] = {"measured", "start-end", "tensorboard"};

struct Reports {
  report::Report by[3];  // kSources' order
  std::string text[3];
};

report::Report LoadJson(const std::string& path) {
  report::Report r;
  auto status = google::protobuf::util::JsonStringToMessage(ReadFile(path), &r);
  EXPECT_TRUE(status.ok()) << path << ": " << status.ToString();
  return r;
}

bool Alarming(const Finding& f) { return f.severity() != Finding::INFO; }

std::string FirstAlarming(const report::Report& r) {
  for (const Finding& f : r.findings()) {
    if (Alarming(f)) return f.id();
  }
  return "";
}

class PlantedSourcesTest : public ::testing::Test {
 protected:
  bool Run(const std::string& name, Reports* out) {
    RunOptions options;
    options.env["IOTAP"] = IotapBinary();
    options.env["PYTHON"] = Python();
    options.env["STEP_SOURCES"] = "logs";
    options.timeout_seconds = 600;
    RunResult run =
        RunProgram({SourcePath("examples/planted/run.sh"), name, dir_.path()}, options);
    if (run.exit_code == kSkip) {
      ADD_FAILURE() << name << " cannot run here: " << run.err;
      return false;
    }
    EXPECT_EQ(run.exit_code, 0) << run.err;
    if (run.exit_code != 0) return false;
    for (int k = 0; k < 3; ++k) {
      std::string base = dir_.Sub("report-" + name + "-" + kSources[k]);
      out->by[k] = LoadJson(base + ".json");
      out->text[k] = ReadFile(base + ".txt");
    }
    return true;
  }

  // With each unmeasured source: the first finding is `first` (empty: none
  // alarming), as with the measured waits, and the stall within kTolerance
  // of the measured one.
  void Check(const Reports& p, const std::string& first) {
    const report::Report& measured = p.by[0];
    double stall = measured.step_statistics().data_stall_share();
    ASSERT_GE(stall, 0) << p.text[0];
    for (int k = 1; k < 3; ++k) {
      SCOPED_TRACE(kSources[k]);
      const report::Report& r = p.by[k];
      ASSERT_GT(r.findings_size(), 0) << p.text[k];
      if (first.empty()) {
        EXPECT_EQ(FirstAlarming(r), "") << p.text[k];
      } else {
        EXPECT_EQ(r.findings(0).id(), first) << p.text[k];
        EXPECT_TRUE(Alarming(r.findings(0))) << p.text[k];
      }
      EXPECT_NEAR(r.step_statistics().data_stall_share(), stall, kTolerance)
          << p.text[k] << "\nmeasured:\n" << p.text[0];
      EXPECT_EQ(r.run().steps(), measured.run().steps());
    }
    // Compute spans leave the waits between them; one time per step leaves
    // them inside the steps, inferred from the trace.
    const report::StepStatistics& gaps = p.by[1].step_statistics();
    EXPECT_EQ(gaps.between_steps().gaps(), gaps.steps()) << p.text[1];
    const report::StepStatistics& tb = p.by[2].step_statistics();
    EXPECT_EQ(tb.data_waits().inferred_steps(), tb.steps()) << p.text[2];
    EXPECT_NE(p.text[2].find("inferred from the trace"), std::string::npos) << p.text[2];
  }

  TempDir dir_;
};

TEST_F(PlantedSourcesTest, PrepBound) {
  Reports p;
  if (!Run("prep-bound", &p)) return;
  if (p.by[0].findings_size() > 0 && p.by[0].findings(0).id() == "cpu_starved_loaders") {
    GTEST_SKIP() << "the host was busy during the job; iotap reported: "
                 << p.by[0].findings(0).summary();
  }
  Check(p, "too_few_workers");
}

TEST_F(PlantedSourcesTest, FetchBound) {
  Reports p;
  if (!Run("fetch-bound", &p)) return;
  Check(p, "storage_slow");
}

TEST_F(PlantedSourcesTest, TinyChunks) {
  Reports p;
  if (!Run("tiny-chunks", &p)) return;
  Check(p, "hdf5_amplification");
}

TEST_F(PlantedSourcesTest, SmallFiles) {
  Reports p;
  if (!Run("small-files", &p)) return;
  Check(p, "many_small_files");
}

TEST_F(PlantedSourcesTest, CleanRaisesNothingAlarming) {
  Reports p;
  if (!Run("clean", &p)) return;
  Check(p, "");
}

// examples/imagefolder with 200 PNGs of 64x64 in batches of 20 and the heavy
// transform: the loop waits for every batch.
struct Loader {
  int workers;
  const char* start_method;
  const char* kind;  // the InferredWaits.how expected
};

class WorkerCountsTest : public ::testing::TestWithParam<Loader> {};

TEST_P(WorkerCountsTest, WaitsAreInferred) {
  const Loader& l = GetParam();
  TempDir dir;
  std::string train = SourcePath("examples/imagefolder/train.py");
  RunResult gen = RunProgram({Python(), train, "--data", dir.Sub("images"), "--generate-only",
                              "--images", "200", "--image-size", "64"});
  ASSERT_EQ(gen.exit_code, 0) << gen.err;
  RunResult run = RunProgram(
      {IotapBinary(), "run", "-o", dir.Sub("trace"), "--", Python(), train, "--data",
       dir.Sub("images"), "--num-workers", std::to_string(l.workers), "--start-method",
       l.start_method, "--transform-cost", "heavy", "--batch-size", "20", "--step-log",
       dir.Sub("steps.log")});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  RunResult convert = RunProgram({Python(), SourcePath("examples/planted/step_sources.py"),
                                  dir.Sub("steps.log"), dir.Sub("steps")});
  ASSERT_EQ(convert.exit_code, 0) << convert.err;
  auto report = [&](const std::string& log) {
    RunResult r = RunProgram({IotapBinary(), "report", dir.Sub("trace"), "--steps", log,
                              "--format", "json", "-o", dir.Sub("report.json")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return LoadJson(dir.Sub("report.json"));
  };
  report::Report measured = report(dir.Sub("steps-measured.jsonl"));
  report::Report tb = report(dir.Sub("steps-tensorboard/events.out.tfevents.0.planted"));
  report::Report gaps = report(dir.Sub("steps-start-end.jsonl"));
  ASSERT_EQ(measured.run().steps(), 200 / 20);
  ASSERT_EQ(tb.run().steps(), 200 / 20);
  const report::DataWaits& w = tb.step_statistics().data_waits();
  EXPECT_EQ(w.inferred_steps(), 200 / 20 - 1);  // the first step warms up
  double kind_s = 0;
  for (const report::InferredWaits& by : w.inferred_by()) {
    if (by.how() == l.kind) kind_s = by.wait_s();
  }
  EXPECT_GT(kind_s, 0) << l.kind;
  double stall = measured.step_statistics().data_stall_share();
  EXPECT_NEAR(tb.step_statistics().data_stall_share(), stall, kTolerance);
  EXPECT_NEAR(gaps.step_statistics().data_stall_share(), stall, kTolerance);
}

INSTANTIATE_TEST_SUITE_P(
    Loaders, WorkerCountsTest,
    ::testing::Values(Loader{0, "fork", "the trainer loading its batch itself"},
                      Loader{1, "fork", "the trainer blocked on its loaders' queues"},
                      Loader{2, "fork", "the trainer blocked on its loaders' queues"},
                      Loader{1, "spawn", "the trainer blocked on its loaders' queues"},
                      Loader{2, "spawn", "the trainer blocked on its loaders' queues"}),
    [](const ::testing::TestParamInfo<Loader>& info) {
      return std::to_string(info.param.workers) + "_" + info.param.start_method;
    });

}  // namespace
}  // namespace iotap::testing
