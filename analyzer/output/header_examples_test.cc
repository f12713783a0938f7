// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <sstream>
#include <string>
#include <vector>

#include "analyzer/output/report_condense.h"
#include "analyzer/output/report_diff.h"
#include "analyzer/output/report_diff_output.h"
#include "analyzer/output/report_html.h"
#include "analyzer/output/report_output.h"
#include "analyzer/output/saved_report.h"
#include "analyzer/output/stats_output.h"
#include "analyzer/output/top_view.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::WriteTemp;

// A report of `steps` steps of a second.
report::Report StepsReport(int steps) {
  report::Report r;
  r.set_schema_version(1);
  r.mutable_run()->add_command("python3");
  r.mutable_run()->set_steps(steps);
  r.mutable_step_statistics()->set_steps(steps);
  r.mutable_step_statistics()->set_median_step_s(1);
  for (int i = 0; i < steps; ++i) r.add_steps()->set_duration_s(1);
  return r;
}

TEST(HeaderExamplesTest, ReportOutput) {
  const report::Report report = StepsReport(3);
  std::ostringstream out;
  // report_output.h
  out << ReportToText(report);
  EXPECT_EQ(out.str().rfind("iotap report: python3\n", 0), 0u) << out.str();
}

TEST(HeaderExamplesTest, ReportHtml) {
  const report::Report report = StepsReport(3);
  // report_html.h
  std::string page = ReportToHtml(report);   // write it to report.html
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(HeaderExamplesTest, ReportCondense) {
  const report::Report full = StepsReport(5000);
  // report_condense.h
  report::Report small = CondenseReport(full, CondenseOptions{});
  std::string page = ReportToHtml(small);
  EXPECT_LT(small.steps_size(), full.steps_size());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(HeaderExamplesTest, ReportDiff) {
  const report::Report before = StepsReport(3), after = StepsReport(4);
  int figures = 0;
  std::ostringstream out;
  // report_diff.h
  report::ReportDiff d = DiffReports(before, after);
  for (const report::MetricDiff& m : d.metrics()) figures += m.id() == "steps";
  // report_diff_output.h
  out << DiffToText(DiffReports(before, after));

  EXPECT_EQ(figures, 1);
  EXPECT_NE(out.str().find("steps"), std::string::npos) << out.str();
}

TEST(HeaderExamplesTest, SavedReport) {
  const std::string path = WriteTemp("example-report.json", ReportToJson(StepsReport(2)));
  double steps = 0;
  // saved_report.h
  if (LooksLikeSavedReport(path)) {
    absl::StatusOr<report::Report> r = ReadSavedReport(path);
    ASSERT_TRUE(r.ok()) << r.status();
    steps = r->run().steps();
  }
  EXPECT_EQ(steps, 2);
}

TEST(HeaderExamplesTest, StatsOutput) {
  std::ostringstream out;
  // stats_output.h
  stats::Stats stats;  // as the analysis fills it (RunCounts, run_analysis.h)
  stats.set_processes(2);
  std::vector<stats::File> files(1);  // or the analysis's RunCounts::FillFileRow
  files[0].set_path("/data/a");
  StatsFileRows rows{files.size(), [&](size_t i, stats::File* row) { *row = files[i]; }};
  out << StatsToText(stats, rows);
  EXPECT_EQ(out.str().rfind("2 processes, 0 events recorded, 0 dropped\n\nfiles: 1,", 0), 0u)
      << out.str();
}

TEST(HeaderExamplesTest, TopView) {
  report::Report window_report = StepsReport(2);
  window_report.mutable_run()->set_range_to_s(11);
  window_report.mutable_run()->set_duration_s(10);
  window_report.mutable_run()->set_data_stall_share(0.431);
  // top_view.h
  TopTotals totals;
  totals.AddSteps(window_report, 10.0, 11.0);  // the steps new since 10 s
  TopFigures f = TopFiguresOf(window_report, totals);
  std::string line = TopLine(f);           // "t_s=11.0 window_s=10.0 stall_pct=43.1 ..."
  std::string screen = TopScreen(f, /*width=*/100);
  std::string metrics = TopMetrics(f, MetricsFormat::kOpenMetrics);  // ends "# EOF\n"
  EXPECT_EQ(line.rfind("t_s=11.0 window_s=10.0 stall_pct=43.1 ", 0), 0u) << line;
  EXPECT_NE(screen.find("data stall 43.1%"), std::string::npos) << screen;
  EXPECT_EQ(metrics.substr(metrics.size() - 6), "# EOF\n");
}

}  // namespace
}  // namespace iotap::analyzer
