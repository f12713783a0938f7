// A trainer group's steps and their figures, from the group's state alone
// (AnalyzeGroups, run_state.h): where the steps come from, the split of
// each step's data wait and of the gap before it, and what the run's
// overlap, cores used and epochs sum over the group (step_analysis.cc adds
// the groups up; run_analysis.h defines the figures).

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer::run_state {

namespace {

// The part of data wait `w` inside `span` (empty if none of it is).
TimeWindow WaitInStep(const TimeWindow& w, const StepSpan& span) {
  return TimeWindow{std::max(w.start_ns, span.start_ns), std::min(w.end_ns, span.end_ns)};
}

// For each of `waits` (in time order), how busy the group's busiest loader
// was during it (0..1): running on a CPU, or runnable and waiting for one
// (an oversubscribed host). The trainer's own CPU when it has no loaders (it
// loads its data itself). Loader by loader, each loader's series walked
// once in time order: a run may have thousands of loaders and steps.
std::vector<double> LoaderBusy(const TrainerGroup& g, const std::vector<TimeWindow>& waits) {
  std::vector<double> busiest(waits.size(), 0.0);
  auto busy = [&](const AdaptiveSeries& cpu, const AdaptiveSeries* queued) {
    for (size_t i = 0; i < waits.size(); ++i) {
      const TimeWindow& w = waits[i];
      if (w.end_ns <= w.start_ns) continue;
      double ns = cpu.SumOver(w.start_ns, w.end_ns);
      if (queued != nullptr) ns += queued->SumOver(w.start_ns, w.end_ns);
      busiest[i] = std::max(busiest[i], ns / static_cast<double>(w.end_ns - w.start_ns));
    }
  };
  if (g.loader_cpu.empty()) {
    busy(*g.trainer_cpu, nullptr);
  } else {
    for (const auto& [index, cpu] : g.loader_cpu) {
      auto queued = g.loader_run_queue.find(index);
      busy(cpu, queued != g.loader_run_queue.end() ? &queued->second : nullptr);
    }
  }
  for (double& b : busiest) b = std::min(1.0, b);
  return busiest;
}

// Every data wait of the group's steps, in order (a step's waits side by
// side), cut to its step.
std::vector<TimeWindow> StepWaitWindows(const TrainerGroup& g) {
  std::vector<TimeWindow> waits;
  for (const StepSpan& span : g.steps) {
    for (const TimeWindow& w : span.data_waits) waits.push_back(WaitInStep(w, span));
  }
  return waits;
}

// The gaps before the group's steps, one per step (empty where none).
std::vector<TimeWindow> GapWindows(const TrainerGroup& g) {
  std::vector<TimeWindow> gaps;
  for (const StepWaits& w : g.step_waits) gaps.push_back(w.gap);
  return gaps;
}

void Epochs(TrainerGroup& g, const std::vector<StepMark>& marks, int64_t run_end) {
  std::vector<int64_t> starts;
  for (const StepMark& m : marks) {
    if (m.name == "epoch") starts.push_back(m.time_ns);
  }
  std::sort(starts.begin(), starts.end());
  g.epochs.clear();
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t end = k + 1 < starts.size() ? starts[k + 1] : std::max(run_end, starts[k]);
    g.epochs.push_back(TimeWindow{starts[k], end});
  }
}

// A step log's marks, as the trainer at `index` wrote them (on its host's
// clock), on the reference clock.
std::vector<StepMark> MarksOnReferenceClock(const RunState& s, int index,
                                            std::vector<StepMark> marks) {
  auto clock = s.clocks.corrections.find(s.catalog.entries[index].header.hostname());
  if (clock == s.clocks.corrections.end()) return marks;
  for (StepMark& m : marks) m.time_ns = clock->second.Apply(m.time_ns);
  return marks;
}

// The gap before a step, split as a wait is; `busy`: LoaderBusy's figure
// for it.
void ComputeGap(const TrainerGroup& g, const TimeWindow& gap, double busy, report::Step* out) {
  if (gap.end_ns <= gap.start_ns) return;
  int64_t fetch = g.io->Count(gap.start_ns, gap.end_ns);
  double prep = static_cast<double>(gap.duration_ns() - fetch) * busy;
  out->set_gap_before_s(Seconds(gap.duration_ns()));
  out->set_gap_fetch_s(Seconds(fetch));
  out->set_gap_prep_s(Seconds(prep));
  out->set_gap_other_s(Seconds(gap.duration_ns() - fetch) - Seconds(prep));
}

// `loader_busy`: LoaderBusy's figures for the span's waits; `compute_s`:
// the step less its wait, where the wait is known.
report::Step ComputeStep(const RunState& s, const TrainerGroup& g, const StepSpan& span,
                         const StepWaits& waits, const double* loader_busy, double* compute_s) {
  report::Step out;
  out.set_rank(span.rank);
  out.set_pid(span.pid != 0 ? span.pid : s.catalog.entries[g.trainer].header.pid());
  out.set_step(static_cast<double>(span.step));
  out.set_start_s(Seconds(span.start_ns - s.origin_ns));
  out.set_end_s(Seconds(span.end_ns - s.origin_ns));
  out.set_duration_s(Seconds(span.duration_ns()));
  out.set_epoch(-1);
  for (size_t k = 0; k < g.epochs.size(); ++k) {
    if (span.start_ns >= g.epochs[k].start_ns && span.start_ns < g.epochs[k].end_ns) {
      out.set_epoch(static_cast<double>(k));
    }
  }
  int64_t io_busy = g.io->Count(span.start_ns, span.end_ns);
  out.set_io_busy_s(Seconds(io_busy));
  out.set_write_busy_s(Seconds(g.writes->Count(span.start_ns, span.end_ns)));
  out.set_read_bytes(g.read_bytes->SumOver(span.start_ns, span.end_ns));
  out.set_data_wait_inferred(waits.inferred);
  out.set_inferred_wait_s(waits.inferred_ns >= 0 ? Seconds(waits.inferred_ns) : -1);
  if (!span.has_data_wait) {
    out.set_data_wait_s(-1);
    out.set_hidden_io_s(Seconds(io_busy));
    return out;
  }
  int64_t wait = 0, fetch = 0;
  double prep = 0;
  for (size_t j = 0; j < span.data_waits.size(); ++j) {
    TimeWindow w = WaitInStep(span.data_waits[j], span);
    int64_t start = w.start_ns, end = w.end_ns;
    if (end <= start) continue;
    int64_t f = g.io->Count(start, end);
    AddTo(&wait, end - start);
    AddTo(&fetch, f);
    prep += static_cast<double>(end - start - f) * loader_busy[j];
  }
  out.set_data_wait_s(Seconds(wait));
  out.set_fetch_s(Seconds(fetch));
  out.set_prep_s(Seconds(prep));
  out.set_other_s(Seconds(wait - fetch) - Seconds(prep));
  out.set_exposed_io_s(Seconds(fetch));
  out.set_hidden_io_s(Seconds(io_busy - fetch));
  *compute_s = Seconds(span.duration_ns() - wait);
  return out;
}

// The CPU time of the group's processes over its counted steps, step by
// step; each series walked once, in time order.
void CpuTerms(const TrainerGroup& g, GroupResult* out) {
  const size_t first = g.steps.size() > 1 ? 1 : 0;
  auto per_step = [&](const std::map<int, AdaptiveSeries>& series, std::vector<double>* sums) {
    sums->assign((g.steps.size() - first) * series.size(), 0.0);
    size_t l = 0;
    for (const auto& [loader, one] : series) {
      for (size_t k = first; k < g.steps.size(); ++k) {
        (*sums)[(k - first) * series.size() + l] =
            one.SumOver(g.steps[k].start_ns, g.steps[k].end_ns);
      }
      ++l;
    }
  };
  per_step(g.loader_cpu, &out->loader_cpu_ns);
  per_step(g.loader_run_queue, &out->loader_queued_ns);
  for (size_t k = first; k < g.steps.size(); ++k) {
    const StepSpan& span = g.steps[k];
    AddTo(&out->step_ns, span.duration_ns());
    out->trainer_cpu_ns.push_back(g.trainer_cpu->SumOver(span.start_ns, span.end_ns));
  }
}

void EpochRows(const RunState& s, const TrainerGroup& g, GroupResult* out) {
  for (size_t k = 0; k < g.epochs.size(); ++k) {
    const TimeWindow& w = g.epochs[k];
    report::Epoch& e = out->epochs.emplace_back();
    e.set_index(static_cast<double>(k));
    e.set_start_s(Seconds(w.start_ns - s.origin_ns));
    e.set_end_s(Seconds(w.end_ns - s.origin_ns));
    e.set_read_bytes(g.read_bytes->SumOver(w.start_ns, w.end_ns));
    double calls = g.read_calls->SumOver(w.start_ns, w.end_ns);
    double read_ns = g.read_ns->SumOver(w.start_ns, w.end_ns);
    e.set_read_time_s(Seconds(read_ns));
    e.set_mean_read_latency_s(Seconds(Ratio(read_ns, calls)));
  }
}

}  // namespace

StepLogSpans AssignStepLogs(const RunState& s) {
  // The first group (by trainer index) of each rank and of each pid.
  std::map<int, int> by_rank, by_pid;
  for (const auto& [index, g] : s.groups) {
    const ProcessHeader& h = s.catalog.entries[index].header;
    by_rank.emplace(h.rank(), index);
    by_pid.emplace(h.pid(), index);
  }
  StepLogSpans out;
  for (const auto& [path, log] : s.step_logs) {
    const bool used = log.ok() && log->wall_clock;
    out.used.push_back(used);
    std::map<int, std::vector<size_t>>& spans = out.of_group.emplace_back();
    bool unmatched = false;
    for (size_t j = 0; used && j < log->spans.size(); ++j) {
      const StepSpan& span = log->spans[j];
      int target = -1;
      if (auto r = by_rank.find(span.rank); span.rank >= 0 && r != by_rank.end()) {
        target = r->second;
      }
      if (auto p = by_pid.find(span.pid); span.pid > 0 && p != by_pid.end()) {
        if (target < 0 || p->second < target) target = p->second;
      }
      if (target < 0 && !s.groups.empty()) {
        unmatched = unmatched || s.groups.size() > 1;
        target = s.groups.begin()->first;
      }
      if (target >= 0) spans[target].push_back(j);
    }
    out.unmatched.push_back(unmatched);
  }
  return out;
}

void CollectSteps(const RunState& s, int index, TrainerGroup& g, const StepLogSpans& logs,
                  GroupResult* out) {
  const ProcessHeader& trainer = s.catalog.entries[index].header;
  for (const StepLog& log : s.marker_steps[index]) {
    if (log.spans.empty()) continue;
    g.steps.insert(g.steps.end(), log.spans.begin(), log.spans.end());
    g.step_source = StepSourceName(log.source);
    if (!log.step_definition.empty()) {
      out->notes.push_back(absl::StrCat("pid ", trainer.pid(), ": ", log.step_definition));
    }
    Epochs(g, log.marks, s.end_ns);
    out->step_sources.push_back(absl::StrCat("markers of pid ", trainer.pid()));
  }
  // The rank that ran a step wrote its time, on its host's clock.
  auto clock = s.clocks.corrections.find(trainer.hostname());
  bool logs_used = false;
  for (size_t k = 0; k < s.step_logs.size(); ++k) {
    if (!logs.used[k]) continue;
    const StepLog& log = *s.step_logs[k].second;
    if (!logs_used) {
      // The user's logs win over markers; several logs (one per rank) add up.
      g.steps.clear();
      out->step_sources.clear();
      logs_used = true;
    }
    auto mine = logs.of_group[k].find(index);
    if (mine != logs.of_group[k].end()) {
      for (size_t j : mine->second) {
        g.steps.push_back(log.spans[j]);
        if (clock != s.clocks.corrections.end()) CorrectStepSpan(clock->second, &g.steps.back());
      }
    }
    if (!g.steps.empty()) g.step_source = StepSourceName(log.source);
    if (g.epochs.empty()) Epochs(g, MarksOnReferenceClock(s, index, log.marks), s.end_ns);
  }
  out->has_steps = !g.steps.empty();
  for (StepSpan& span : g.steps) {
    if (span.rank < 0) span.rank = trainer.rank();
  }
  std::sort(g.steps.begin(), g.steps.end(),
            [](const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; });
}

void ComputeSteps(const RunState& s, const TrainerGroup& g, bool warmup, GroupResult* out) {
  std::vector<double> loader_busy = LoaderBusy(g, StepWaitWindows(g));
  std::vector<double> gap_busy = LoaderBusy(g, GapWindows(g));
  size_t first_wait = 0;
  for (size_t k = 0; k < g.steps.size(); ++k) {
    double compute_s = 0;
    report::Step step =
        ComputeStep(s, g, g.steps[k], g.step_waits[k], loader_busy.data() + first_wait, &compute_s);
    first_wait += g.steps[k].data_waits.size();
    const TimeWindow& gap = g.step_waits[k].gap;
    ComputeGap(g, gap, gap_busy[k], &step);
    AddTo(&out->in_steps_io_ns, g.io->Count(g.steps[k].start_ns, g.steps[k].end_ns) +
                                    g.io->Count(gap.start_ns, gap.end_ns));
    out->steps.push_back(std::move(step));
    out->compute_s.push_back(compute_s);
  }
  // The first step of each trainer starts its workers and warms caches.
  out->warmup_skipped = g.steps.size() > 1 && warmup;
  out->io_ns = g.io->Total();
  CpuTerms(g, out);
  EpochRows(s, g, out);
}

}  // namespace iotap::analyzer::run_state
