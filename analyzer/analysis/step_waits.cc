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

}  // namespace

void InferWaits(TrainerGroup& g, WaitTotals* t) {
  g.step_waits.assign(g.steps.size(), StepWaits{});
  for (size_t k = 1; k < g.steps.size(); ++k) {
    int64_t from = g.steps[k - 1].end_ns, to = g.steps[k].start_ns;
    if (to > from) g.step_waits[k].gap = TimeWindow{from, to};
  }
  const size_t first = FirstCounted(g);
  bool measured = false;
  for (size_t k = first; k < g.steps.size(); ++k) measured |= g.steps[k].has_data_wait;
  if (measured && g.step_source != nullptr) t->measured_by = g.step_source;
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
    AddTo(&t->measured_ns, span.data_wait_ns());
    AddTo(&t->inferred_ns, w.inferred_ns);
    AddTo(&t->agreed_ns, w.agreed_ns);
    AddTo(&t->compared_step_ns, span.duration_ns());
  }
  // Each kind's own windows over the counted steps.
  if (g.steps.size() <= first) return;
  int64_t lo = g.steps[first].start_ns, hi = g.steps.back().end_ns;
  for (const InferredWindow& w : g.inferred) {
    int64_t start = std::max(w.start_ns, lo), end = std::min(w.end_ns, hi);
    if (end > start) AddTo(&t->kind_ns[static_cast<int>(w.kind)], end - start);
  }
}

void CombineWaits(const RunState& s, report::StepStatistics* st) {
  // Integers, added as such: the same in any grouping, and the same as
  // one running sum of doubles while it stays below 2^53.
  WaitTotals t;
  std::vector<std::string> measured_by;  // each source once, in group order
  for (const auto& [index, g] : s.groups) {
    const WaitTotals& w = s.results.at(index).waits;
    AddTo(&t.measured_steps, w.measured_steps);
    AddTo(&t.inferred_steps, w.inferred_steps);
    AddTo(&t.compared_steps, w.compared_steps);
    AddTo(&t.measured_ns, w.measured_ns);
    AddTo(&t.inferred_ns, w.inferred_ns);
    AddTo(&t.agreed_ns, w.agreed_ns);
    AddTo(&t.compared_step_ns, w.compared_step_ns);
    for (int k = 0; k < kWaitKinds; ++k) AddTo(&t.kind_ns[k], w.kind_ns[k]);
    if (!w.measured_by.empty() &&
        std::find(measured_by.begin(), measured_by.end(), w.measured_by) == measured_by.end()) {
      measured_by.push_back(w.measured_by);
    }
  }
  auto d = [](int64_t v) { return static_cast<double>(v); };
  report::DataWaits* out = st->mutable_data_waits();
  out->set_measured_steps(d(t.measured_steps));
  for (const std::string& by : measured_by) out->add_measured_by(by);
  out->set_inferred_steps(d(t.inferred_steps));
  for (int k = 0; k < kWaitKinds; ++k) {
    if (t.kind_ns[k] <= 0) continue;
    report::InferredWaits* by = out->add_inferred_by();
    by->set_how(WaitKindText(static_cast<WaitKind>(k)));
    by->set_wait_s(Seconds(d(t.kind_ns[k])));
  }
  out->set_compared_steps(d(t.compared_steps));
  if (t.compared_steps > 0) {
    out->set_measured_wait_s(Seconds(d(t.measured_ns)));
    out->set_inferred_wait_s(Seconds(d(t.inferred_ns)));
    out->set_measured_stall_share(Ratio(d(t.measured_ns), d(t.compared_step_ns)));
    out->set_inferred_stall_share(Ratio(d(t.inferred_ns), d(t.compared_step_ns)));
    out->set_agreement_share(Ratio(d(t.agreed_ns), d(t.measured_ns)));
  }
}

}  // namespace iotap::analyzer::run_state
