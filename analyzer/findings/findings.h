// Findings: what is wrong with a run's data path, the evidence in numbers,
// and what to change.
//
//   absl::StatusOr<rules::RuleSet> rules = DefaultRules();
//   AddFindings(*rules, &report);   // fills report.findings, most important first
//
// Each rule in findings.textproto (schema proto/iotap/rules.proto) names a
// function (findings_data_rules.cc, findings_run_rules.cc) that computes its
// values from the report; the data file holds the wording and every
// threshold. Order: causes that matter (WARNING or CRITICAL), then
// data-stall symptoms, then the rest, each group by the seconds at stake. A
// cause is alarming only if the job measurably waits for data, or, without
// step information, if its cost is large on its own. When nothing is
// alarming, "no_bottleneck" says so with the overlap figure that shows it.

#ifndef IOTAP_ANALYZER_FINDINGS_FINDINGS_H_
#define IOTAP_ANALYZER_FINDINGS_FINDINGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "iotap/report.pb.h"
#include "iotap/rules.pb.h"

namespace iotap::analyzer {

// The rules built into iotap (findings.textproto).
absl::StatusOr<rules::RuleSet> DefaultRules();
// Rules from a text-format file; errors name the file and the line.
absl::StatusOr<rules::RuleSet> LoadRules(const std::string& path);

// Replaces report->findings with what `rules` find in the report.
void AddFindings(const rules::RuleSet& rules, report::Report* report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_FINDINGS_FINDINGS_H_
