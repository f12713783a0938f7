// `iotap diff` on two synthetic runs whose figures are known by
// construction, on a saved report, and on bad input.

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "iotap/diff.pb.h"
#include "tests/integration/testing.h"

namespace iotap::analyzer {
namespace {

using iotap::testing::IotapBinary;
using iotap::testing::RunProgram;
using iotap::testing::RunResult;
using iotap::testing::TempDir;
using report::FindingDiff;
using report::MetricDiff;
using ::testing::HasSubstr;

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

// A trainer without loaders that reads /data/x.bin itself: five steps of
// 20 ms starting at 10, 30, ... 90 ms, each beginning with a data wait, and
// an end at 120 ms (without `markers`, the same run with no steps). Per step it reads `bytes`
// during the wait from wait_start + 0.25 ms for `fetch_us`, and as much again after compute starts
// (at +5 ms) for `hidden_us` (none if 0).
void WriteRun(const std::string& dir, int64_t wait_us, int64_t fetch_us, int64_t hidden_us,
              uint64_t bytes, bool markers = true) {
  std::filesystem::create_directories(dir);
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  uint32_t f = trainer.Path("/data/x.bin");
  int64_t offset = 0;
  for (int step = 0; step < 5; ++step) {
    int64_t start = kT0 + (10 + 20 * step) * kMs;
    if (markers) {
      trainer.Marker(OP_STEP_BEGIN, start, start, step);
      trainer.Marker(OP_DATA_WAIT, start, start + wait_us * kUs, step);
    }
    trainer.Read(OP_PREAD, start + 250 * kUs, start + (250 + fetch_us) * kUs, f, offset, bytes);
    offset += static_cast<int64_t>(bytes);
    if (hidden_us > 0) {
      trainer.Read(OP_PREAD, start + 5 * kMs, start + 5 * kMs + hidden_us * kUs, f, offset, bytes);
      offset += static_cast<int64_t>(bytes);
    }
    if (markers) trainer.Marker(OP_STEP_END, start + 20 * kMs, start + 20 * kMs, step);
  }
  trainer.End(EndOfTrace::REASON_EXIT, 0, kT0 + 120 * kMs);
  trainer.WriteTo(dir + "/trainer.iotap");
}

class DiffCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Before: waits 10 ms a step, 8 ms of it reading 4 KiB.
    WriteRun(dir_.Sub("before"), 10'000, 8'000, 0, 4096);
    // After: waits 1 ms, 0.5 ms of it reading 64 KiB; 1.5 ms more hidden.
    WriteRun(dir_.Sub("after"), 1'000, 500, 1'500, 65536);
  }

  RunResult Iotap(std::vector<std::string> args) {
    args.insert(args.begin(), IotapBinary());
    return RunProgram(args);
  }

  report::ReportDiff JsonDiff(const std::string& a, const std::string& b) {
    RunResult r = Iotap({"diff", a, b, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    report::ReportDiff d;
    auto status = google::protobuf::util::JsonStringToMessage(r.out, &d);
    EXPECT_TRUE(status.ok()) << status << "\n" << r.out;
    return d;
  }

  TempDir dir_;
};

const MetricDiff& Metric(const report::ReportDiff& d, const std::string& id) {
  for (const MetricDiff& m : d.metrics()) {
    if (m.id() == id) return m;
  }
  ADD_FAILURE() << "no metric " << id;
  return MetricDiff::default_instance();
}

void ExpectFigure(const report::ReportDiff& d, const std::string& id, double a, double b,
                  MetricDiff::Verdict verdict) {
  const MetricDiff& m = Metric(d, id);
  EXPECT_DOUBLE_EQ(m.a(), a) << id;
  EXPECT_DOUBLE_EQ(m.b(), b) << id;
  EXPECT_DOUBLE_EQ(m.change(), b - a) << id;
  EXPECT_EQ(m.verdict(), verdict) << id << ": " << MetricDiff::Verdict_Name(m.verdict());
}

// The figures both runs have by construction. Step statistics leave out each
// trainer's first step: 4 counted steps of 20 ms.
void ExpectKnownFigures(const report::ReportDiff& d) {
  ExpectFigure(d, "steps", 5, 5, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "median_step_s", 0.020, 0.020, MetricDiff::SAME);
  ExpectFigure(d, "steps_per_s", 50, 50, MetricDiff::SAME);
  ExpectFigure(d, "duration_s", 0.120, 0.120, MetricDiff::SAME);
  // Waits of 40 ms, then 4 ms, in 80 ms of counted steps.
  ExpectFigure(d, "data_stall_share", 0.5, 0.05, MetricDiff::BETTER);
  ExpectFigure(d, "median_data_wait_s", 0.010, 0.001, MetricDiff::BETTER);
  ExpectFigure(d, "data_wait_s", 0.040, 0.004, MetricDiff::BETTER);
  // The trainer itself read during the waits: fetch; it used no CPU: no prep.
  ExpectFigure(d, "fetch_s", 0.032, 0.002, MetricDiff::BETTER);
  ExpectFigure(d, "prep_s", 0, 0, MetricDiff::SAME);
  ExpectFigure(d, "other_s", 0.008, 0.002, MetricDiff::BETTER);
  // Overlap counts every step, the first one too.
  ExpectFigure(d, "exposed_io_s", 0.040, 0.0025, MetricDiff::BETTER);
  ExpectFigure(d, "hidden_io_s", 0, 0.0075, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "hidden_share", 0, 0.75, MetricDiff::BETTER);
  ExpectFigure(d, "io_busy_s", 0.040, 0.010, MetricDiff::BETTER);
  ExpectFigure(d, "bytes_read", 5 * 4096, 10 * 65536, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "read_bytes_per_s", 5 * 4096 / 0.120, 10 * 65536 / 0.120, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "reads", 5, 10, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "data_files", 1, 1, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "median_read_bytes", 4096, 65536, MetricDiff::BETTER);
  ExpectFigure(d, "mean_read_latency_s", 0.008, 0.001, MetricDiff::BETTER);
  ExpectFigure(d, "loaders", 0, 0, MetricDiff::NOT_JUDGED);
  ExpectFigure(d, "dropped_events", 0, 0, MetricDiff::SAME);
  EXPECT_DOUBLE_EQ(Metric(d, "median_step_s").relative_change(), 0);
  EXPECT_DOUBLE_EQ(Metric(d, "data_stall_share").relative_change(), -0.9);
}

// Before: fetch-bound (stall 50%) and the trainer's own reads cost half the
// step time (CRITICAL). After: stall 5%, below the 10% warning line; the
// trainer still reads itself, but its reads cost 2.5 ms of waiting: INFO;
// nothing alarms, so "no bottleneck" appears.
void ExpectKnownFindings(const report::ReportDiff& d) {
  ASSERT_EQ(d.findings_size(), 3);
  EXPECT_EQ(d.findings(0).id(), "no_bottleneck");
  EXPECT_EQ(d.findings(0).status(), FindingDiff::NEW);
  EXPECT_EQ(d.findings(0).verdict(), MetricDiff::NOT_JUDGED);
  const FindingDiff& trainer = d.findings(1);
  EXPECT_EQ(trainer.id(), "io_in_trainer");
  EXPECT_EQ(trainer.status(), FindingDiff::PERSISTS);
  EXPECT_EQ(trainer.severity_a(), report::Finding::CRITICAL);
  EXPECT_EQ(trainer.severity_b(), report::Finding::INFO);
  EXPECT_EQ(trainer.verdict(), MetricDiff::BETTER);
  ASSERT_EQ(trainer.evidence_size(), 1);
  EXPECT_EQ(trainer.evidence(0).name(), "trainer's time in data I/O");
  EXPECT_DOUBLE_EQ(trainer.evidence(0).a(), 0.040);
  EXPECT_DOUBLE_EQ(trainer.evidence(0).b(), 0.010);
  EXPECT_EQ(d.findings(2).id(), "data_stall_fetch");
  EXPECT_EQ(d.findings(2).status(), FindingDiff::RESOLVED);
  EXPECT_EQ(d.findings(2).severity_a(), report::Finding::CRITICAL);
  EXPECT_EQ(d.findings(2).verdict(), MetricDiff::BETTER);
}

TEST_F(DiffCommandTest, TwoTracedRuns) {
  report::ReportDiff d = JsonDiff(dir_.Sub("before"), dir_.Sub("after"));
  EXPECT_EQ(d.a().path(), dir_.Sub("before"));
  EXPECT_EQ(d.a().source(), "traces");
  EXPECT_EQ(d.b().source(), "traces");
  EXPECT_EQ(d.a().command(1), "train.py");
  ExpectKnownFigures(d);
  ExpectKnownFindings(d);
}

TEST_F(DiffCommandTest, SavedReportAgainstTraces) {
  std::string saved = dir_.Sub("after.json");
  RunResult report = Iotap({"report", dir_.Sub("after"), "--format", "json", "-o", saved});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  report::ReportDiff d = JsonDiff(dir_.Sub("before"), saved);
  EXPECT_EQ(d.a().source(), "traces");
  EXPECT_EQ(d.b().source(), "saved report");
  EXPECT_EQ(d.b().path(), saved);
  ExpectKnownFigures(d);
  ExpectKnownFindings(d);
}

// The text table's row `name`, split into its cells.
std::vector<std::string> TextRow(const std::string& text, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, "    " + name + "  ")) continue;
    std::vector<std::string> cells = {name};
    for (absl::string_view c : absl::StrSplit(line, "  ", absl::SkipWhitespace())) {
      cells.emplace_back(absl::StripAsciiWhitespace(c));
    }
    return cells;
  }
  return {};
}

TEST_F(DiffCommandTest, TextAndMarkdown) {
  RunResult text = Iotap({"diff", dir_.Sub("before"), dir_.Sub("after")});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("  A: " + dir_.Sub("before") + " (traces): python3 train.py\n"));
  EXPECT_EQ(TextRow(text.out, "data stall (share of step time)"),
            (std::vector<std::string>{"data stall (share of step time)", "50.0%", "5.0%",
                                      "-45.0 pp", "-90.0%", "better"}));
  EXPECT_EQ(TextRow(text.out, "median step time"),
            (std::vector<std::string>{"median step time", "20.0 ms", "20.0 ms", "0.00 s", "0.0%",
                                      "same"}));
  EXPECT_THAT(text.out, HasSubstr("  resolved  CRITICAL -> -  Training waits for data: "
                                  "fetch-bound  (better)\n"));
  EXPECT_THAT(text.out, HasSubstr("            - trainer's time in data I/O: 40.0 ms (33% of its "
                                  "run) -> 10.0 ms (8% of its run) (-30.0 ms, -75.0%)\n"));

  std::string md_path = dir_.Sub("diff.md");
  RunResult md =
      Iotap({"diff", dir_.Sub("before"), dir_.Sub("after"), "--format", "markdown", "-o", md_path});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  EXPECT_EQ(md.out, "");
  EXPECT_THAT(iotap::testing::ReadFile(md_path),
              HasSubstr("| data stall (share of step time) | 50.0% | 5.0% | -45.0 pp | -90.0% | "
                        "better |\n"));
}

TEST_F(DiffCommandTest, StepLogsGoToTheirRun) {
  // The after run again, without markers, and its steps as a JSON-lines log.
  WriteRun(dir_.Sub("unmarked"), 1'000, 500, 1'500, 65536, /*markers=*/false);
  std::string log;
  for (int step = 0; step < 5; ++step) {
    int start_ms = 10 + 20 * step;
    log += absl::StrFormat(
        "{\"step\": %d, \"start\": 1700000000.%03d, \"end\": 1700000000.%03d, "
        "\"data_waits\": [[1700000000.%03d, 1700000000.%03d]]}\n",
        step, start_ms, start_ms + 20, start_ms, start_ms + 1);
  }
  iotap::testing::WriteFile(dir_.Sub("steps.jsonl"), log);

  report::ReportDiff d = JsonDiff(dir_.Sub("before"), dir_.Sub("unmarked"));
  EXPECT_FALSE(Metric(d, "median_step_s").has_b());
  EXPECT_THAT(d.notes(), ::testing::Contains(HasSubstr("B has no steps")));

  RunResult r = Iotap({"diff", dir_.Sub("before"), dir_.Sub("unmarked"), "--steps-b",
                       dir_.Sub("steps.jsonl"), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &d).ok());
  ExpectKnownFigures(d);

  // --steps-a is A's alone.
  r = Iotap({"diff", dir_.Sub("unmarked"), dir_.Sub("unmarked"), "--steps-a",
             dir_.Sub("steps.jsonl"), "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &d).ok());
  EXPECT_DOUBLE_EQ(Metric(d, "data_stall_share").a(), 0.05);
  EXPECT_FALSE(Metric(d, "data_stall_share").has_b());
}

TEST_F(DiffCommandTest, RulesApplyToBothRunsSavedReportsToo) {
  std::string saved = dir_.Sub("after.json");
  ASSERT_EQ(Iotap({"report", dir_.Sub("after"), "--format", "json", "-o", saved}).exit_code, 0);
  // One rule, with a warning line at 1% of step time: B's 5% stall counts.
  iotap::testing::WriteFile(dir_.Sub("rules.textproto"), R"(
rule {
  id: "data_stall_fetch"
  title: "fetch-bound"
  summary: "stall {stall_share}"
  threshold { key: "warning_share" value: 0.01 }
  threshold { key: "critical_share" value: 0.30 }
})");
  RunResult r = Iotap({"diff", dir_.Sub("before"), saved, "--rules", dir_.Sub("rules.textproto"),
                       "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report::ReportDiff d;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &d).ok());
  ASSERT_EQ(d.findings_size(), 1);
  EXPECT_EQ(d.findings(0).id(), "data_stall_fetch");
  EXPECT_EQ(d.findings(0).status(), FindingDiff::PERSISTS);
  EXPECT_EQ(d.findings(0).severity_a(), report::Finding::CRITICAL);
  EXPECT_EQ(d.findings(0).severity_b(), report::Finding::WARNING);
  EXPECT_EQ(d.findings(0).summary_b(), "stall 5%");

  r = Iotap({"diff", dir_.Sub("before"), saved, "--rules", dir_.Sub("missing.textproto")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(dir_.Sub("missing.textproto") + ": cannot open"));
}

TEST_F(DiffCommandTest, BadInput) {
  std::string missing = dir_.Sub("no-such-run");
  RunResult r = Iotap({"diff", dir_.Sub("before"), missing});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("iotap diff: run B: " + missing + ": no such file or directory"));
  EXPECT_EQ(r.out, "");

  std::string corrupt = dir_.Sub("corrupt.json");
  iotap::testing::WriteFile(corrupt, "{\"schema_version\": 1, \"run\": {\"steps\": ");
  r = Iotap({"diff", corrupt, dir_.Sub("after")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("iotap diff: run A: " + corrupt +
                               ": not a report saved by `iotap report --format json`"));

  r = Iotap({"diff", dir_.Sub("before")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("give two runs, RUN_A and RUN_B"));
  r = Iotap({"diff", dir_.Sub("before"), dir_.Sub("after"), "--format", "html"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("bad --format"));

  std::string saved = dir_.Sub("before.json");
  ASSERT_EQ(Iotap({"report", dir_.Sub("before"), "--format", "json", "-o", saved}).exit_code, 0);
  r = Iotap({"diff", saved, dir_.Sub("after"), "--steps-a", dir_.Sub("steps.jsonl")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("--steps-a: " + saved + " is a saved report"));
}

TEST_F(DiffCommandTest, Help) {
  RunResult r = Iotap({"diff", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: iotap diff RUN_A RUN_B"));
  RunResult top = Iotap({"--help"});
  EXPECT_THAT(top.out, HasSubstr("  diff RUN_A RUN_B"));
}

}  // namespace
}  // namespace iotap::analyzer
