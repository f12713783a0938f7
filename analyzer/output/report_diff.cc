#include "analyzer/output/report_diff.h"

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iotap::analyzer {

namespace {

using report::EvidenceDiff;
using report::Finding;
using report::FindingDiff;
using report::MetricDiff;
using report::Report;

using Value = std::optional<double>;

bool HasSteps(const Report& r) { return r.step_statistics().steps() > 0; }

// Whether a step source said when the counted steps waited for data.
bool StallKnown(const Report& r) {
  return HasSteps(r) && r.step_statistics().data_stall_share() >= 0;
}

Value IfSteps(const Report& r, double v) { return HasSteps(r) ? Value(v) : std::nullopt; }
Value IfStall(const Report& r, double v) { return StallKnown(r) ? Value(v) : std::nullopt; }
Value IfReads(const Report& r, double v) {
  return r.data_files().reads() > 0 ? Value(v) : std::nullopt;
}

Value StepsPerSecond(const Report& r) {
  const report::StepStatistics& st = r.step_statistics();
  if (!HasSteps(r) || st.total_step_s() <= 0) return std::nullopt;
  return st.steps() / st.total_step_s();
}

Value HiddenShare(const Report& r) {
  double hidden = r.overlap().hidden_io_s(), exposed = r.overlap().exposed_io_s();
  if (!StallKnown(r) || hidden + exposed <= 0) return std::nullopt;
  return hidden / (hidden + exposed);
}

double LoaderCpuSeconds(const Report& r) {
  double s = 0;
  for (const report::Process& p : r.processes()) {
    if (p.role() == report::LOADER) s += p.cpu_user_s() + p.cpu_system_s();
  }
  return s;
}

struct MetricSpec {
  const char* id;
  const char* name;
  const char* group;
  const char* unit;
  MetricDiff::Direction direction;
  bool scales_with_work;
  Value (*get)(const Report&);
};

constexpr MetricDiff::Direction kLower = MetricDiff::LOWER_IS_BETTER;
constexpr MetricDiff::Direction kHigher = MetricDiff::HIGHER_IS_BETTER;
constexpr MetricDiff::Direction kNeither = MetricDiff::NEITHER;

// The figures compared, in the order they are shown (see report_diff.h).
const std::vector<MetricSpec>& Specs() {
  static const std::vector<MetricSpec> specs = {
      {"steps", "steps", "steps", "steps", kNeither, false,
       [](const Report& r) -> Value { return r.run().steps(); }},
      {"median_step_s", "median step time", "steps", "s", kLower, false,
       [](const Report& r) { return IfSteps(r, r.step_statistics().median_step_s()); }},
      {"p90_step_s", "p90 step time", "steps", "s", kLower, false,
       [](const Report& r) { return IfSteps(r, r.step_statistics().p90_step_s()); }},
      {"steps_per_s", "step rate (1 / mean step time)", "steps", "steps/s", kHigher, false,
       StepsPerSecond},
      {"duration_s", "run duration", "steps", "s", kLower, true,
       [](const Report& r) -> Value { return r.run().duration_s(); }},

      {"data_stall_share", "data stall (share of step time)", "data stalls", "share", kLower, false,
       [](const Report& r) { return IfStall(r, r.step_statistics().data_stall_share()); }},
      {"median_data_wait_s", "median data wait per step", "data stalls", "s", kLower, false,
       [](const Report& r) { return IfStall(r, r.step_statistics().median_data_wait_s()); }},
      {"data_wait_s", "data wait, total", "data stalls", "s", kLower, true,
       [](const Report& r) { return IfStall(r, r.step_statistics().total_data_wait_s()); }},
      {"fetch_s", "data wait: fetch (I/O)", "data stalls", "s", kLower, true,
       [](const Report& r) {
         const report::StepStatistics& st = r.step_statistics();
         return IfStall(r, st.fetch_share() * st.total_data_wait_s());
       }},
      {"prep_s", "data wait: preparation (CPU)", "data stalls", "s", kLower, true,
       [](const Report& r) {
         const report::StepStatistics& st = r.step_statistics();
         return IfStall(r, st.prep_share() * st.total_data_wait_s());
       }},
      {"other_s", "data wait: other", "data stalls", "s", kLower, true,
       [](const Report& r) {
         const report::StepStatistics& st = r.step_statistics();
         return IfStall(r, st.other_share() * st.total_data_wait_s());
       }},
      {"exposed_io_s", "I/O exposed (trainers waited)", "data stalls", "s", kLower, true,
       [](const Report& r) { return IfStall(r, r.overlap().exposed_io_s()); }},
      {"hidden_io_s", "I/O hidden behind compute", "data stalls", "s", kNeither, true,
       [](const Report& r) { return IfStall(r, r.overlap().hidden_io_s()); }},
      {"hidden_share", "I/O hidden (share of trainers' I/O)", "data stalls", "share", kHigher,
       false, HiddenShare},

      {"io_busy_s", "I/O busy (union of calls)", "I/O", "s", kLower, true,
       [](const Report& r) -> Value { return r.run().io_busy_s(); }},
      {"read_bytes_per_s", "read throughput (over the run)", "I/O", "bytes/s", kNeither, false,
       [](const Report& r) -> Value {
         if (r.run().duration_s() <= 0) return std::nullopt;
         return r.run().bytes_read() / r.run().duration_s();
       }},
      {"bytes_read", "bytes read", "I/O", "bytes", kNeither, false,
       [](const Report& r) -> Value { return r.run().bytes_read(); }},
      {"bytes_written", "bytes written", "I/O", "bytes", kNeither, false,
       [](const Report& r) -> Value { return r.run().bytes_written(); }},

      {"data_files", "data files", "data files", "files", kNeither, false,
       [](const Report& r) -> Value { return r.data_files().files(); }},
      {"reads", "reads", "data files", "calls", kNeither, false,
       [](const Report& r) -> Value { return r.data_files().reads(); }},
      {"opens", "opens", "data files", "calls", kNeither, false,
       [](const Report& r) -> Value { return r.data_files().opens(); }},
      {"metadata_ops", "metadata calls", "data files", "calls", kNeither, false,
       [](const Report& r) -> Value { return r.data_files().metadata_ops(); }},
      {"metadata_s", "time in metadata calls", "data files", "s", kLower, true,
       [](const Report& r) -> Value { return r.data_files().metadata_s(); }},
      {"median_read_bytes", "median read size", "data files", "bytes", kHigher, false,
       [](const Report& r) { return IfReads(r, r.data_files().median_read_bytes()); }},
      {"mean_read_latency_s", "mean read latency", "data files", "s", kLower, false,
       [](const Report& r) { return IfReads(r, r.data_files().mean_read_latency_s()); }},

      {"trainers", "trainers", "loaders", "processes", kNeither, false,
       [](const Report& r) -> Value { return r.workers().trainers(); }},
      {"loaders", "loaders", "loaders", "processes", kNeither, false,
       [](const Report& r) -> Value { return r.workers().loaders(); }},
      {"loader_cores", "loader CPU in use during steps", "loaders", "cores", kNeither, false,
       [](const Report& r) { return IfSteps(r, r.step_statistics().loader_cores()); }},
      {"loader_run_queue_cores", "loaders waiting for a CPU", "loaders", "cores", kLower, false,
       [](const Report& r) { return IfSteps(r, r.step_statistics().loader_run_queue_cores()); }},
      {"loader_cpu_s", "loader CPU time (user + system)", "loaders", "s", kNeither, false,
       [](const Report& r) -> Value { return LoaderCpuSeconds(r); }},

      {"dropped_events", "events dropped by the tracer", "trace", "events", kLower, false,
       [](const Report& r) -> Value { return r.run().dropped_events(); }},
  };
  return specs;
}

// Fills a, b, change and relative_change of any message with those fields.
template <typename Diff>
void SetValues(Value a, Value b, Diff* d) {
  if (a) d->set_a(*a);
  if (b) d->set_b(*b);
  if (!a || !b) return;
  d->set_change(*b - *a);
  if (*a == *b) {
    d->set_relative_change(0);
  } else if (*a != 0) {
    d->set_relative_change((*b - *a) / std::fabs(*a));
  }
}

bool BelowNoise(const MetricDiff& m) {
  if (m.unit() == "share") return std::fabs(m.change()) < kNoiseShare;
  if (m.a() == 0) return m.change() == 0;
  return std::fabs(m.change()) / std::fabs(m.a()) < kNoiseRelative;
}

MetricDiff::Verdict Judge(const MetricDiff& m, bool same_work) {
  if (!m.has_change() || m.direction() == MetricDiff::NEITHER) return MetricDiff::NOT_JUDGED;
  if (m.scales_with_work() && !same_work) return MetricDiff::NOT_JUDGED;
  if (BelowNoise(m)) return MetricDiff::SAME;
  bool lower = m.change() < 0;
  return lower == (m.direction() == MetricDiff::LOWER_IS_BETTER) ? MetricDiff::BETTER
                                                                 : MetricDiff::WORSE;
}

// INFO and absent findings do not alarm; WARNING and CRITICAL do, in order.
int Alarm(Finding::Severity s) {
  return s == Finding::CRITICAL ? 2 : s == Finding::WARNING ? 1 : 0;
}

void DiffEvidence(const Finding& a, const Finding& b, FindingDiff* d) {
  std::vector<bool> used(b.evidence_size(), false);
  for (const report::Evidence& ea : a.evidence()) {
    EvidenceDiff* e = d->add_evidence();
    e->set_name(ea.name());
    e->set_unit(ea.unit());
    e->set_text_a(ea.text());
    const report::Evidence* eb = nullptr;
    for (int k = 0; k < b.evidence_size(); ++k) {
      if (!used[k] && b.evidence(k).name() == ea.name()) {
        used[k] = true;
        eb = &b.evidence(k);
        break;
      }
    }
    if (eb != nullptr) e->set_text_b(eb->text());
    SetValues(ea.value(), eb != nullptr ? Value(eb->value()) : std::nullopt, e);
  }
  for (int k = 0; k < b.evidence_size(); ++k) {
    if (used[k]) continue;
    EvidenceDiff* e = d->add_evidence();
    e->set_name(b.evidence(k).name());
    e->set_unit(b.evidence(k).unit());
    e->set_text_b(b.evidence(k).text());
    SetValues(std::nullopt, b.evidence(k).value(), e);
  }
}

// A finding of A, of B, or of both (either pointer may be null).
FindingDiff DiffFinding(const Finding* a, const Finding* b) {
  FindingDiff d;
  const Finding& shown = b != nullptr ? *b : *a;
  d.set_id(shown.id());
  d.set_title(shown.title());
  d.set_status(a == nullptr   ? FindingDiff::NEW
               : b == nullptr ? FindingDiff::RESOLVED
                              : FindingDiff::PERSISTS);
  if (a != nullptr) {
    d.set_severity_a(a->severity());
    d.set_summary_a(a->summary());
    d.set_score_a(a->score());
  }
  if (b != nullptr) {
    d.set_severity_b(b->severity());
    d.set_summary_b(b->summary());
    d.set_score_b(b->score());
  }
  const Finding& none = Finding::default_instance();
  DiffEvidence(a != nullptr ? *a : none, b != nullptr ? *b : none, &d);
  int before = a != nullptr ? Alarm(a->severity()) : 0;
  int after = b != nullptr ? Alarm(b->severity()) : 0;
  d.set_verdict(after < before   ? MetricDiff::BETTER
                : after > before ? MetricDiff::WORSE
                : a && b         ? MetricDiff::SAME
                                 : MetricDiff::NOT_JUDGED);
  return d;
}

void DiffFindings(const Report& a, const Report& b, report::ReportDiff* out) {
  // The n-th finding of an id in A goes with the n-th of that id in B.
  std::map<std::string, std::vector<int>> in_b;
  for (int k = 0; k < b.findings_size(); ++k) in_b[b.findings(k).id()].push_back(k);
  std::vector<int> partner_of_b(b.findings_size(), -1);
  std::vector<int> resolved;
  std::map<std::string, size_t> taken;
  for (int k = 0; k < a.findings_size(); ++k) {
    const std::string& id = a.findings(k).id();
    size_t& n = taken[id];
    auto it = in_b.find(id);
    if (it != in_b.end() && n < it->second.size()) {
      partner_of_b[it->second[n++]] = k;
    } else {
      resolved.push_back(k);
    }
  }
  for (int k = 0; k < b.findings_size(); ++k) {
    if (partner_of_b[k] < 0) *out->add_findings() = DiffFinding(nullptr, &b.findings(k));
  }
  for (int k = 0; k < b.findings_size(); ++k) {
    if (partner_of_b[k] >= 0) {
      *out->add_findings() = DiffFinding(&a.findings(partner_of_b[k]), &b.findings(k));
    }
  }
  for (int k : resolved) *out->add_findings() = DiffFinding(&a.findings(k), nullptr);
}

void FillSide(const Report& r, report::DiffSide* side) {
  *side->mutable_command() = r.run().command();
  side->set_session(r.run().session());
  side->set_start_unix_s(r.run().start_unix_s());
  *side->mutable_step_sources() = r.run().step_sources();
}

std::string Count(double v) { return absl::StrFormat("%.0f", v); }

void AddNotes(const Report& a, const Report& b, bool same_work, report::ReportDiff* out) {
  const std::pair<const char*, const Report*> sides[] = {{"A", &a}, {"B", &b}};
  for (const auto& [name, r] : sides) {
    if (r->schema_version() != 1) {
      out->add_notes(absl::StrCat(name, " is a report of schema version ", r->schema_version(),
                                  "; this iotap reads version 1, and figures it lacks show as 0"));
    }
    if (!HasSteps(*r)) {
      out->add_notes(absl::StrCat(
          name,
          " has no steps: its step and stall figures are n/a (give its step log with --steps-",
          name == std::string("A") ? "a" : "b", ", or trace with `iotap run --torch-steps`)"));
    } else if (!StallKnown(*r)) {
      out->add_notes(absl::StrCat(name,
                                  "'s step source does not say when steps waited for data: "
                                  "its stall figures are n/a"));
    }
    if (r->run().dropped_events() > 0) {
      out->add_notes(absl::StrCat(name, "'s tracer dropped ", Count(r->run().dropped_events()),
                                  " events: its counts and times are lower bounds"));
    }
  }
  if (!same_work) {
    out->add_notes(absl::StrCat(
        "Totals that grow with the work done (duration, seconds of I/O and of waiting) are not "
        "judged better or worse: ",
        HasSteps(a) && HasSteps(b)
            ? absl::StrCat("the runs ran different numbers of steps (A ", Count(a.run().steps()),
                           ", B ", Count(b.run().steps()), ")")
            : "without steps in both, iotap cannot tell whether the runs "
              "did the same work"));
  }
}

}  // namespace

report::ReportDiff DiffReports(const Report& a, const Report& b) {
  report::ReportDiff out;
  out.set_schema_version(1);
  out.set_noise_relative(kNoiseRelative);
  out.set_noise_share(kNoiseShare);
  FillSide(a, out.mutable_a());
  FillSide(b, out.mutable_b());
  bool same_work = a.run().steps() > 0 && a.run().steps() == b.run().steps();
  for (const MetricSpec& spec : Specs()) {
    MetricDiff* m = out.add_metrics();
    m->set_id(spec.id);
    m->set_name(spec.name);
    m->set_group(spec.group);
    m->set_unit(spec.unit);
    m->set_direction(spec.direction);
    m->set_scales_with_work(spec.scales_with_work);
    SetValues(spec.get(a), spec.get(b), m);
    m->set_verdict(Judge(*m, same_work));
  }
  DiffFindings(a, b, &out);
  AddNotes(a, b, same_work, &out);
  return out;
}

}  // namespace iotap::analyzer
