// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include "analyzer/findings/findings.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(HeaderExamplesTest, Findings) {
  // A run of 10 steps that never waited for data, with a stale finding.
  report::Report report;
  report.mutable_run()->set_duration_s(10);
  report.mutable_step_statistics()->set_steps(10);
  report.mutable_step_statistics()->set_total_step_s(10);
  report.mutable_overlap()->set_hidden_share(1);
  report.add_findings()->set_id("stale");
  // findings.h
  absl::StatusOr<rules::RuleSet> rules = DefaultRules();
  AddFindings(*rules, &report);   // fills report.findings, most important first

  ASSERT_EQ(report.findings_size(), 1);
  EXPECT_EQ(report.findings(0).id(), "no_bottleneck");
}

}  // namespace
}  // namespace iotap::analyzer
