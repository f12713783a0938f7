// What comparing two runs finds: each figure's change and verdict, and the
// findings resolved, new and persisting (their printing:
// report_diff_output_test.cc).

#include "analyzer/output/report_diff.h"

#include <string>

#include "analyzer/testing/sample_reports.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using report::Finding;
using report::FindingDiff;
using report::MetricDiff;
using report::Report;
using ::testing::HasSubstr;
using testing::AddFinding;
using testing::SampleReport;

const MetricDiff& Metric(const report::ReportDiff& d, const std::string& id) {
  for (const MetricDiff& m : d.metrics()) {
    if (m.id() == id) return m;
  }
  ADD_FAILURE() << "no metric " << id;
  return MetricDiff::default_instance();
}

void AddEvidence(Finding* f, const std::string& name, double value, const std::string& unit,
                 const std::string& text) {
  report::Evidence* e = f->add_evidence();
  e->set_name(name);
  e->set_value(value);
  e->set_unit(unit);
  e->set_text(text);
}

TEST(ReportDiffTest, ChangesAndVerdictsOfStepFigures) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(9, 0.25, 0.0625);
  b.mutable_step_statistics()->set_p90_step_s(0.625);
  b.mutable_run()->set_duration_s(48);
  report::ReportDiff d = DiffReports(a, b);

  const MetricDiff& median = Metric(d, "median_step_s");
  EXPECT_EQ(median.a(), 0.5);
  EXPECT_EQ(median.b(), 0.25);
  EXPECT_EQ(median.change(), -0.25);
  EXPECT_EQ(median.relative_change(), -0.5);
  EXPECT_EQ(median.unit(), "s");
  EXPECT_EQ(median.verdict(), MetricDiff::BETTER);

  const MetricDiff& p90 = Metric(d, "p90_step_s");
  EXPECT_EQ(p90.change(), 0.125);
  EXPECT_EQ(p90.relative_change(), 0.25);
  EXPECT_EQ(p90.verdict(), MetricDiff::WORSE);

  // 8 counted steps over 4 s, then over 2 s.
  const MetricDiff& rate = Metric(d, "steps_per_s");
  EXPECT_EQ(rate.a(), 2);
  EXPECT_EQ(rate.b(), 4);
  EXPECT_EQ(rate.relative_change(), 1);
  EXPECT_EQ(rate.verdict(), MetricDiff::BETTER);

  // The same 9 steps in both: the duration is judged.
  const MetricDiff& duration = Metric(d, "duration_s");
  EXPECT_EQ(duration.change(), -16);
  EXPECT_EQ(duration.relative_change(), -0.25);
  EXPECT_TRUE(duration.scales_with_work());
  EXPECT_EQ(duration.verdict(), MetricDiff::BETTER);

  const MetricDiff& steps = Metric(d, "steps");
  EXPECT_EQ(steps.change(), 0);
  EXPECT_EQ(steps.relative_change(), 0);
  EXPECT_EQ(steps.verdict(), MetricDiff::NOT_JUDGED);  // no direction
}

TEST(ReportDiffTest, StallSplitAndOverlap) {
  Report a = SampleReport(9, 0.5, 0.25);    // waits 2 s of 4 s
  Report b = SampleReport(9, 0.5, 0.0625);  // waits 0.5 s of 4 s
  b.mutable_overlap()->set_exposed_io_s(3);
  b.mutable_overlap()->set_hidden_io_s(1);
  report::ReportDiff d = DiffReports(a, b);
  const MetricDiff& share = Metric(d, "data_stall_share");
  EXPECT_EQ(share.a(), 0.5);
  EXPECT_EQ(share.b(), 0.125);
  EXPECT_EQ(share.change(), -0.375);
  EXPECT_EQ(share.verdict(), MetricDiff::BETTER);
  EXPECT_EQ(Metric(d, "data_wait_s").a(), 2);
  EXPECT_EQ(Metric(d, "data_wait_s").b(), 0.5);
  EXPECT_EQ(Metric(d, "fetch_s").a(), 1);
  EXPECT_EQ(Metric(d, "fetch_s").b(), 0.25);
  EXPECT_EQ(Metric(d, "prep_s").a(), 0.5);
  EXPECT_EQ(Metric(d, "other_s").b(), 0.125);
  EXPECT_EQ(Metric(d, "fetch_s").verdict(), MetricDiff::BETTER);
  // Hidden / (hidden + exposed): 3 of 4, then 1 of 4.
  const MetricDiff& hidden = Metric(d, "hidden_share");
  EXPECT_EQ(hidden.a(), 0.75);
  EXPECT_EQ(hidden.b(), 0.25);
  EXPECT_EQ(hidden.verdict(), MetricDiff::WORSE);
  EXPECT_EQ(Metric(d, "exposed_io_s").verdict(), MetricDiff::WORSE);
  EXPECT_EQ(Metric(d, "hidden_io_s").verdict(), MetricDiff::NOT_JUDGED);  // no direction
}

TEST(ReportDiffTest, ChangesBelowTheNoiseFloorAreTheSame) {
  Report a = SampleReport(9, 1.0, 0.5);
  Report b = SampleReport(9, 1.015, 0.5);                       // 1.5% slower
  b.mutable_step_statistics()->set_data_stall_share(0.505);  // half a point more
  a.mutable_run()->set_duration_s(100);
  b.mutable_run()->set_duration_s(97);  // 3% shorter
  report::ReportDiff d = DiffReports(a, b);
  EXPECT_EQ(Metric(d, "median_step_s").verdict(), MetricDiff::SAME);
  EXPECT_EQ(Metric(d, "data_stall_share").verdict(), MetricDiff::SAME);
  EXPECT_EQ(Metric(d, "duration_s").verdict(), MetricDiff::BETTER);
  EXPECT_EQ(d.noise_relative(), 0.02);
  EXPECT_EQ(d.noise_share(), 0.01);
}

TEST(ReportDiffTest, FiguresARunLacksAreAbsentNeverDividedByZero) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(0, 0, 0);  // no steps at all
  b.mutable_data_files()->set_reads(0);
  b.mutable_run()->set_duration_s(0);
  report::ReportDiff d = DiffReports(a, b);
  for (const char* id :
       {"median_step_s", "p90_step_s", "steps_per_s", "data_stall_share", "median_data_wait_s",
        "data_wait_s", "fetch_s", "exposed_io_s", "hidden_share", "loader_cores",
        "median_read_bytes", "mean_read_latency_s", "read_bytes_per_s"}) {
    const MetricDiff& m = Metric(d, id);
    EXPECT_TRUE(m.has_a()) << id;
    EXPECT_FALSE(m.has_b()) << id;
    EXPECT_FALSE(m.has_change()) << id;
    EXPECT_FALSE(m.has_relative_change()) << id;
    EXPECT_EQ(m.verdict(), MetricDiff::NOT_JUDGED) << id;
  }
  // Steps themselves are a figure: 9, then 0.
  EXPECT_EQ(Metric(d, "steps").b(), 0);
  EXPECT_EQ(Metric(d, "steps").change(), -9);
  EXPECT_THAT(d.notes(), ::testing::Contains(HasSubstr("B has no steps")));
}

TEST(ReportDiffTest, UnknownStallAndZeroBaselines) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(9, 0.5, 0.25);
  b.mutable_step_statistics()->set_data_stall_share(-1);  // the step source does not say
  b.mutable_run()->set_dropped_events(5);
  report::ReportDiff d = DiffReports(a, b);
  EXPECT_FALSE(Metric(d, "data_stall_share").has_b());
  EXPECT_FALSE(Metric(d, "hidden_share").has_b());
  EXPECT_TRUE(Metric(d, "median_step_s").has_b());
  EXPECT_EQ(Metric(d, "median_step_s").verdict(), MetricDiff::SAME);
  // From 0: a change, but no relative change; any drop is worse.
  const MetricDiff& dropped = Metric(d, "dropped_events");
  EXPECT_EQ(dropped.change(), 5);
  EXPECT_FALSE(dropped.has_relative_change());
  EXPECT_EQ(dropped.verdict(), MetricDiff::WORSE);
  // 0 and 0: no change at all.
  const MetricDiff& written = Metric(d, "bytes_written");
  EXPECT_EQ(written.change(), 0);
  EXPECT_EQ(written.relative_change(), 0);
  EXPECT_THAT(d.notes(), ::testing::Contains(HasSubstr("B's step source does not say")));
  EXPECT_THAT(d.notes(), ::testing::Contains(HasSubstr("B's tracer dropped 5 events")));
}

TEST(ReportDiffTest, HiddenShareOfNoIoIsNotAvailable) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(9, 0.5, 0.25);
  b.mutable_overlap()->set_exposed_io_s(0);
  b.mutable_overlap()->set_hidden_io_s(0);
  report::ReportDiff d = DiffReports(a, b);
  EXPECT_EQ(Metric(d, "hidden_share").a(), 0.75);
  EXPECT_FALSE(Metric(d, "hidden_share").has_b());
  EXPECT_EQ(Metric(d, "exposed_io_s").b(), 0);
}

TEST(ReportDiffTest, TotalsOfUnequalWorkAreNotJudged) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(17, 0.25, 0.125);
  b.mutable_run()->set_duration_s(32);
  report::ReportDiff d = DiffReports(a, b);
  EXPECT_EQ(Metric(d, "duration_s").change(), -32);
  EXPECT_EQ(Metric(d, "duration_s").verdict(), MetricDiff::NOT_JUDGED);
  EXPECT_EQ(Metric(d, "data_wait_s").verdict(), MetricDiff::NOT_JUDGED);
  EXPECT_EQ(Metric(d, "io_busy_s").verdict(), MetricDiff::NOT_JUDGED);
  // Per-step figures still are.
  EXPECT_EQ(Metric(d, "median_step_s").verdict(), MetricDiff::BETTER);
  EXPECT_THAT(d.notes(), ::testing::Contains(HasSubstr("different numbers of steps (A 9, B 17)")));
}

TEST(ReportDiffTest, FindingsResolvedNewAndPersisting) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(9, 0.5, 0.25);
  AddFinding(&a, "data_stall_fetch", Finding::WARNING);
  Finding* slow_a = AddFinding(&a, "storage_slow", Finding::CRITICAL);
  slow_a->set_score(4);
  AddEvidence(slow_a, "mean read latency", 0.002, "s", "2.0 ms");
  AddEvidence(slow_a, "time in data reads", 4, "s", "4.00 s");
  AddFinding(&a, "small_transfers", Finding::INFO);
  Finding* slow_b = AddFinding(&b, "storage_slow", Finding::WARNING);
  slow_b->set_score(1);
  AddEvidence(slow_b, "reads", 300, "calls", "300");
  AddEvidence(slow_b, "mean read latency", 0.001, "s", "1.0 ms");
  AddFinding(&b, "many_small_files", Finding::WARNING);

  report::ReportDiff d = DiffReports(a, b);
  ASSERT_EQ(d.findings_size(), 4);
  // New first, then persisting, then resolved.
  const FindingDiff& added = d.findings(0);
  EXPECT_EQ(added.id(), "many_small_files");
  EXPECT_EQ(added.status(), FindingDiff::NEW);
  EXPECT_EQ(added.severity_a(), Finding::SEVERITY_UNSPECIFIED);
  EXPECT_EQ(added.severity_b(), Finding::WARNING);
  EXPECT_EQ(added.summary_b(), "summary of many_small_files");
  EXPECT_FALSE(added.has_score_a());
  EXPECT_EQ(added.verdict(), MetricDiff::WORSE);

  const FindingDiff& kept = d.findings(1);
  EXPECT_EQ(kept.id(), "storage_slow");
  EXPECT_EQ(kept.status(), FindingDiff::PERSISTS);
  EXPECT_EQ(kept.severity_a(), Finding::CRITICAL);
  EXPECT_EQ(kept.severity_b(), Finding::WARNING);
  EXPECT_EQ(kept.score_a(), 4);
  EXPECT_EQ(kept.score_b(), 1);
  EXPECT_EQ(kept.verdict(), MetricDiff::BETTER);
  // Evidence matched by name: A's order, then what only B has.
  ASSERT_EQ(kept.evidence_size(), 3);
  EXPECT_EQ(kept.evidence(0).name(), "mean read latency");
  EXPECT_EQ(kept.evidence(0).a(), 0.002);
  EXPECT_EQ(kept.evidence(0).b(), 0.001);
  EXPECT_EQ(kept.evidence(0).change(), 0.001 - 0.002);
  EXPECT_EQ(kept.evidence(0).relative_change(), -0.5);
  EXPECT_EQ(kept.evidence(0).text_a(), "2.0 ms");
  EXPECT_EQ(kept.evidence(0).text_b(), "1.0 ms");
  EXPECT_EQ(kept.evidence(1).name(), "time in data reads");
  EXPECT_EQ(kept.evidence(1).a(), 4);
  EXPECT_FALSE(kept.evidence(1).has_b());
  EXPECT_FALSE(kept.evidence(1).has_change());
  EXPECT_EQ(kept.evidence(2).name(), "reads");
  EXPECT_FALSE(kept.evidence(2).has_a());
  EXPECT_EQ(kept.evidence(2).b(), 300);

  EXPECT_EQ(d.findings(2).id(), "data_stall_fetch");
  EXPECT_EQ(d.findings(2).status(), FindingDiff::RESOLVED);
  EXPECT_EQ(d.findings(2).severity_b(), Finding::SEVERITY_UNSPECIFIED);
  EXPECT_EQ(d.findings(2).summary_a(), "summary of data_stall_fetch");
  EXPECT_EQ(d.findings(2).verdict(), MetricDiff::BETTER);
  // An informational finding that went away is not judged.
  EXPECT_EQ(d.findings(3).id(), "small_transfers");
  EXPECT_EQ(d.findings(3).status(), FindingDiff::RESOLVED);
  EXPECT_EQ(d.findings(3).verdict(), MetricDiff::NOT_JUDGED);
}

TEST(ReportDiffTest, FindingsOfOneIdPairInOrder) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(9, 0.5, 0.25);
  AddFinding(&a, "io_in_trainer", Finding::WARNING)->set_summary("first");
  AddFinding(&a, "io_in_trainer", Finding::INFO)->set_summary("second");
  AddFinding(&b, "io_in_trainer", Finding::WARNING)->set_summary("only");
  report::ReportDiff d = DiffReports(a, b);
  ASSERT_EQ(d.findings_size(), 2);
  EXPECT_EQ(d.findings(0).status(), FindingDiff::PERSISTS);
  EXPECT_EQ(d.findings(0).summary_a(), "first");
  EXPECT_EQ(d.findings(0).summary_b(), "only");
  EXPECT_EQ(d.findings(0).verdict(), MetricDiff::SAME);
  EXPECT_EQ(d.findings(1).status(), FindingDiff::RESOLVED);
  EXPECT_EQ(d.findings(1).summary_a(), "second");
}

}  // namespace
}  // namespace iotap::analyzer
