// Internal to the findings: what a rule computes and the context it reads.
// Rules are plain functions registered by name (see findings.cc).

#ifndef IOTAP_ANALYZER_FINDINGS_FINDINGS_INTERNAL_H_
#define IOTAP_ANALYZER_FINDINGS_FINDINGS_INTERNAL_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "iotap/report.pb.h"
#include "iotap/rules.pb.h"

namespace iotap::analyzer::internal {

using report::Finding;
using report::Report;

// What a rule found: its severity, the seconds at stake, whether it is a
// cause (ranked before symptoms), the values its summary names, and the
// evidence and objects to show.
struct Result {
  Finding::Severity severity = Finding::INFO;
  double score = 0;
  bool cause = true;
  // A case the rule's data file may word apart (Rule.summary_for).
  std::string summary_case;
  std::map<std::string, std::string> values;
  std::vector<report::Evidence> evidence;
  std::vector<std::string> objects;
};

class Context {
 public:
  Context(const Report& r, const rules::Rule& rule) : r_(r), rule_(rule) {}
  const Report& report() const { return r_; }
  // The rule's threshold `name`, or `fallback` if the data file has none.
  double T(const std::string& name, double fallback) const;
  bool steps_known() const { return r_.step_statistics().data_stall_share() >= 0; }
  // The trainers' time: their steps, and the time between steps where the
  // source leaves gaps (counted as waiting).
  double total_step_s() const {
    return r_.step_statistics().total_step_s() + r_.step_statistics().between_steps().total_s();
  }
  double run_s() const;
  // Severity of a cause costing `seconds` of waiting (with steps known), or
  // `share_of_run` of the run (without).
  Finding::Severity Impact(double seconds, double share_of_run) const;

 private:
  const Report& r_;
  const rules::Rule& rule_;
};

using RuleFn = std::function<std::optional<Result>(const Context&)>;

std::string Pct(double share);
void AddEvidence(Result& res, std::string name, double value, std::string unit, std::string text);
// Seconds trainers waited while their group was in I/O, over every step and
// the gaps between steps.
double FetchSeconds(const Report& r);

// Sets the values "costs" (": 62% in PIL decoding (ImageFile.load), 21% in
// RandomResizedCrop", or " (decoding, transforms)" without Python samples)
// "top_costs" (" Preparation's largest costs: ...", or ""), and "advice" (a sentence for the largest cost, or "") from the report's
// Python profiles, with evidence (findings_py_costs.cc).
void AddPyCosts(const Report& r, Result* res);

// Rule functions by id.
void RegisterDataRules(std::map<std::string, RuleFn>* rules);
void RegisterRunRules(std::map<std::string, RuleFn>* rules);
void RegisterMappedRules(std::map<std::string, RuleFn>* rules);

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_FINDINGS_FINDINGS_INTERNAL_H_
