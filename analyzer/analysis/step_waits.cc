// The steps' data waits where the step source gives none, inferred from the
// trace (wait_inference.h); their comparison with measured waits where the
// source gives them too; and the gaps a source leaves between its steps.

#include <algorithm>

#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer::run_state {

namespace {

int64_t Total(const std::vector<TimeWindow>& windows) {
  int64_t total = 0;
  for (const TimeWindow& w : windows) total += w.duration_ns();
  return total;
}

// Time both sorted, disjoint lists cover.
int64_t Common(const std::vector<TimeWindow>& a, const std::vector<TimeWindow>& b) {
  int64_t common = 0;
  size_t j = 0;
  for (const TimeWindow& w : a) {
    while (j < b.size() && b[j].end_ns <= w.start_ns) ++j;
    for (size_t k = j; k < b.size() && b[k].start_ns < w.end_ns; ++k) {
      common += std::max<int64_t>(
          0, std::min(w.end_ns, b[k].end_ns) - std::max(w.start_ns, b[k].start_ns));
    }
  }
  return common;
}

// The first step of each trainer warms up and is left out of statistics.
size_t FirstCounted(const TrainerGroup& g) { return g.steps.size() > 1 ? 1 : 0; }

struct Totals {
  double measured_steps = 0, inferred_steps = 0, compared_steps = 0;
  double measured_ns = 0, inferred_ns = 0, agreed_ns = 0, compared_step_ns = 0;
  double kind_ns[kWaitKinds] = {};
  std::vector<std::string> measured_by;
};

void InferGroup(TrainerGroup& g, Totals* t) {
  g.step_waits.assign(g.steps.size(), StepWaits{});
  for (size_t k = 1; k < g.steps.size(); ++k) {
    int64_t from = g.steps[k - 1].end_ns, to = g.steps[k].start_ns;
    if (to > from) g.step_waits[k].gap = TimeWindow{from, to};
  }
  const size_t first = FirstCounted(g);
  bool measured = false;
  for (size_t k = first; k < g.steps.size(); ++k) measured |= g.steps[k].has_data_wait;
  if (measured && g.step_source != nullptr &&
      std::find(t->measured_by.begin(), t->measured_by.end(), g.step_source) ==
          t->measured_by.end()) {
    t->measured_by.push_back(g.step_source);
  }
  WaitInput in{&g.waits, &g.loader_channels, !g.loaders.empty(), g.io.get(), g.own_io.get()};
  if (!CanInferWaits(in)) {
    for (size_t k = first; k < g.steps.size(); ++k) t->measured_steps += g.steps[k].has_data_wait;
    return;
  }
  g.inferred = InferWaitWindows(in, g.steps);
  std::vector<TimeWindow> merged = MergeWindows(g.inferred);
  for (size_t k = 0; k < g.steps.size(); ++k) {
    StepSpan& span = g.steps[k];
    StepWaits& w = g.step_waits[k];
    std::vector<TimeWindow> inside = WaitsInside(merged, span.start_ns, span.end_ns);
    bool counted = k >= first;
    if (!span.has_data_wait) {
      span.data_waits = std::move(inside);
      span.has_data_wait = true;
      w.inferred = true;
      t->inferred_steps += counted;
      continue;
    }
    w.inferred_ns = Total(inside);
    w.agreed_ns = Common(span.data_waits, inside);
    if (!counted) continue;
    t->measured_steps += 1;
    t->compared_steps += 1;
    t->measured_ns += static_cast<double>(span.data_wait_ns());
    t->inferred_ns += static_cast<double>(w.inferred_ns);
    t->agreed_ns += static_cast<double>(w.agreed_ns);
    t->compared_step_ns += static_cast<double>(span.duration_ns());
  }
  // Each kind's own windows over the counted steps.
  if (g.steps.size() <= first) return;
  int64_t lo = g.steps[first].start_ns, hi = g.steps.back().end_ns;
  for (const InferredWindow& w : g.inferred) {
    int64_t start = std::max(w.start_ns, lo), end = std::min(w.end_ns, hi);
    if (end > start) t->kind_ns[static_cast<int>(w.kind)] += static_cast<double>(end - start);
  }
}

}  // namespace

void InferWaits(RunState& s, report::StepStatistics* st) {
  Totals t;
  for (auto& [index, g] : s.groups) InferGroup(g, &t);
  report::DataWaits* out = st->mutable_data_waits();
  out->set_measured_steps(t.measured_steps);
  for (const std::string& by : t.measured_by) out->add_measured_by(by);
  out->set_inferred_steps(t.inferred_steps);
  for (int k = 0; k < kWaitKinds; ++k) {
    if (t.kind_ns[k] <= 0) continue;
    report::InferredWaits* by = out->add_inferred_by();
    by->set_how(WaitKindText(static_cast<WaitKind>(k)));
    by->set_wait_s(Seconds(t.kind_ns[k]));
  }
  out->set_compared_steps(t.compared_steps);
  if (t.compared_steps > 0) {
    out->set_measured_wait_s(Seconds(t.measured_ns));
    out->set_inferred_wait_s(Seconds(t.inferred_ns));
    out->set_measured_stall_share(Ratio(t.measured_ns, t.compared_step_ns));
    out->set_inferred_stall_share(Ratio(t.inferred_ns, t.compared_step_ns));
    out->set_agreement_share(Ratio(t.agreed_ns, t.measured_ns));
  }
}

}  // namespace iotap::analyzer::run_state
