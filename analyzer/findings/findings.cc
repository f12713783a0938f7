#include "analyzer/findings/findings.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/findings/findings_internal.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace iotap::analyzer {

// The text of analyzer/findings/findings.textproto, compiled in (findings_rules.cc).
extern const char kDefaultRulesText[];

namespace internal {

double Context::T(const std::string& name, double fallback) const {
  auto it = rule_.threshold().find(name);
  return it == rule_.threshold().end() ? fallback : it->second;
}

double Context::run_s() const { return std::max(1e-9, r_.run().duration_s()); }

Finding::Severity Context::Impact(double seconds, double share_of_run) const {
  double share = steps_known() ? Ratio(seconds, total_step_s()) : share_of_run;
  if (share >= T("critical_share", 0.30)) return Finding::CRITICAL;
  if (share >= T("warning_share", 0.10)) return Finding::WARNING;
  return Finding::INFO;
}

std::string Pct(double share) { return absl::StrFormat("%.0f%%", share * 100); }

void AddEvidence(Result& res, std::string name, double value, std::string unit, std::string text) {
  report::Evidence e;
  e.set_name(std::move(name));
  e.set_value(value);
  e.set_unit(std::move(unit));
  e.set_text(std::move(text));
  res.evidence.push_back(std::move(e));
}

double FetchSeconds(const Report& r) {
  double s = 0;
  for (const report::Step& st : r.steps()) s += std::max(0.0, st.fetch_s()) + st.gap_fetch_s();
  return s;
}

}  // namespace internal

namespace {

using internal::Result;
using report::Finding;

// Replaces each {name} in `text` with values[name]; unknown names stay.
std::string Fill(const std::string& text, const std::map<std::string, std::string>& values) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') {
      size_t close = text.find('}', i);
      if (close != std::string::npos) {
        auto it = values.find(text.substr(i + 1, close - i - 1));
        if (it != values.end()) {
          out += it->second;
          i = close;
          continue;
        }
      }
    }
    out += text[i];
  }
  return out;
}

// The verdict when nothing is alarming, with the figure that shows it.
Result Verdict(const report::Report& r) {
  Result res;
  res.cause = false;
  const report::StepStatistics& st = r.step_statistics();
  std::string verdict;
  if (st.data_stall_share() >= 0) {
    verdict = absl::StrFormat(
        "Training waited for data %s of step time; %s of the I/O (%s) was hidden behind "
        "compute.",
        internal::Pct(st.data_stall_share()), internal::Pct(r.overlap().hidden_share()),
        HumanDuration(r.overlap().hidden_io_s() + r.overlap().exposed_io_s()));
    internal::AddEvidence(res, "data wait, share of step time", st.data_stall_share(), "share",
                          internal::Pct(st.data_stall_share()));
    internal::AddEvidence(res, "I/O hidden behind compute", r.overlap().hidden_share(), "share",
                          internal::Pct(r.overlap().hidden_share()));
  } else {
    verdict = absl::StrFormat(
        "Nothing stands out in the I/O calls (%s of I/O over %s). Without step information "
        "iotap cannot tell whether training waited: trace with --torch-steps or pass --steps.",
        HumanDuration(r.run().io_busy_s()), HumanDuration(r.run().duration_s()));
  }
  res.values = {{"verdict", verdict}};
  return res;
}

int SeverityRank(Finding::Severity s) {
  return s == Finding::CRITICAL ? 3 : s == Finding::WARNING ? 2 : 1;
}

}  // namespace

absl::StatusOr<rules::RuleSet> DefaultRules() {
  rules::RuleSet rules;
  if (!google::protobuf::TextFormat::ParseFromString(kDefaultRulesText, &rules)) {
    return absl::InternalError("the built-in findings rules do not parse");
  }
  return rules;
}

absl::StatusOr<rules::RuleSet> LoadRules(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream text;
  text << in.rdbuf();
  struct Collector : google::protobuf::io::ErrorCollector {
    void AddError(int line, int column, const std::string& message) override {
      if (first.empty()) first = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ", message);
    }
    std::string first;
  } errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  rules::RuleSet rules;
  if (!parser.ParseFromString(text.str(), &rules)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", errors.first));
  }
  return rules;
}

void AddFindings(const rules::RuleSet& rules, report::Report* report) {
  std::map<std::string, internal::RuleFn> fns;
  internal::RegisterDataRules(&fns);
  internal::RegisterRunRules(&fns);
  internal::RegisterMappedRules(&fns);
  struct Found {
    const rules::Rule* rule;
    Result result;
  };
  std::vector<Found> found;
  const rules::Rule* verdict_rule = nullptr;
  for (const rules::Rule& rule : rules.rule()) {
    if (rule.disabled()) continue;
    if (rule.id() == "no_bottleneck") {
      verdict_rule = &rule;
      continue;
    }
    auto fn = fns.find(rule.id());
    if (fn == fns.end()) continue;  // a rule of a newer iotap: ignored
    internal::Context context(*report, rule);
    if (std::optional<Result> r = fn->second(context)) found.push_back(Found{&rule, std::move(*r)});
  }
  bool alarming = std::any_of(found.begin(), found.end(), [](const Found& f) {
    return f.result.severity != Finding::INFO;
  });
  if (!alarming && verdict_rule != nullptr) found.push_back(Found{verdict_rule, Verdict(*report)});
  // Alarming causes first, then symptoms, then the rest; seconds at stake
  // break ties.
  std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    auto key = [](const Found& f) {
      int alarming = f.result.severity != Finding::INFO;
      return std::make_tuple(alarming, alarming && f.result.cause, SeverityRank(f.result.severity),
                             f.result.score);
    };
    return key(a) > key(b);
  });
  report->clear_findings();
  for (const Found& f : found) {
    Finding* out = report->add_findings();
    out->set_id(f.rule->id());
    out->set_title(f.rule->title());
    out->set_severity(f.result.severity);
    auto wording = f.rule->summary_for().find(f.result.summary_case);
    const std::string& summary =
        wording != f.rule->summary_for().end() ? wording->second : f.rule->summary();
    out->set_summary(ValidUtf8(Fill(summary, f.result.values)));
    out->set_recommendation(ValidUtf8(Fill(f.rule->recommendation(), f.result.values)));
    out->set_score(f.result.score);
    for (const report::Evidence& e : f.result.evidence) *out->add_evidence() = e;
    for (const std::string& o : f.result.objects) out->add_objects(ValidUtf8(o));
  }
}

}  // namespace iotap::analyzer
