// Steps, data stalls, overlap, epochs and worker balance (see run_analysis.h
// for the definitions).

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/analysis/time_range.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer::run_state {

namespace {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

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

// Assigns the spans of an external step log to trainer groups by rank, then
// pid; with one trainer, everything is its.
void AssignStepLog(RunState& s, const StepLog& log) {
  bool unmatched = false;
  for (const StepSpan& span : log.spans) {
    int target = -1;
    for (auto& [index, g] : s.groups) {
      const ProcessHeader& h = s.catalog.entries[index].header;
      if ((span.rank >= 0 && h.rank() == span.rank) || (span.pid > 0 && h.pid() == span.pid)) {
        target = index;
        break;
      }
    }
    if (target < 0 && !s.groups.empty()) {
      unmatched = unmatched || s.groups.size() > 1;
      target = s.groups.begin()->first;
    }
    if (target < 0) continue;
    s.groups[target].steps.push_back(span);
    // The rank that ran a step wrote its time, on its host's clock.
    auto clock = s.clocks.corrections.find(s.catalog.entries[target].header.hostname());
    if (clock != s.clocks.corrections.end()) {
      CorrectStepSpan(clock->second, &s.groups[target].steps.back());
    }
  }
  if (unmatched) {
    s.notes.push_back(absl::StrCat(log.path, ": some steps name no rank or process of this run; "
                                             "they were given to the first trainer"));
  }
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

void CollectSteps(RunState& s) {
  for (auto& [index, g] : s.groups) {
    for (const StepLog& log : s.marker_steps[index]) {
      if (log.spans.empty()) continue;
      g.steps.insert(g.steps.end(), log.spans.begin(), log.spans.end());
      g.step_source = StepSourceName(log.source);
      if (!log.step_definition.empty()) {
        s.notes.push_back(absl::StrCat("pid ", s.catalog.entries[index].header.pid(), ": ",
                                       log.step_definition));
      }
      Epochs(g, log.marks, s.end_ns);
      s.step_sources.push_back(absl::StrCat("markers of pid ",
                                            s.catalog.entries[index].header.pid()));
    }
  }
  bool logs_used = false;
  for (const auto& [path, log] : s.step_logs) {
    if (!log.ok()) {
      s.notes.push_back(absl::StrCat("step log not used: ", log.status().message()));
      continue;
    }
    for (const std::string& e : log->errors) s.notes.push_back(e);
    for (const std::string& n : log->notes) s.notes.push_back(absl::StrCat(path, ": ", n));
    if (!log->wall_clock) {
      s.notes.push_back(absl::StrCat(path, ": its times have no wall-clock origin, so its steps "
                                           "cannot be lined up with I/O; not used"));
      continue;
    }
    if (!logs_used) {
      // The user's logs win over markers; several logs (one per rank) add up.
      for (auto& [index, g] : s.groups) g.steps.clear();
      s.step_sources.clear();
      logs_used = true;
    }
    s.step_sources.push_back(path);
    AssignStepLog(s, *log);
    for (auto& [index, g] : s.groups) {
      if (!g.steps.empty()) g.step_source = StepSourceName(log->source);
    }
    for (auto& [index, g] : s.groups) {
      if (g.epochs.empty()) Epochs(g, MarksOnReferenceClock(s, index, log->marks), s.end_ns);
    }
  }
  bool any_steps = false;
  for (auto& [index, g] : s.groups) any_steps = any_steps || !g.steps.empty();
  if (!any_steps) return;
  // A "trainer" with neither steps nor loaders (torchrun's agent, a shell
  // script's python) is only helping.
  for (auto it = s.groups.begin(); it != s.groups.end();) {
    if (it->second.steps.empty() && it->second.loaders.empty()) {
      s.catalog.entries[it->first].role = report::HELPER;
      it = s.groups.erase(it);
    } else {
      for (auto& span : it->second.steps) {
        if (span.rank < 0) span.rank = s.catalog.entries[it->first].header.rank();
      }
      std::sort(it->second.steps.begin(), it->second.steps.end(),
                [](const StepSpan& a, const StepSpan& b) { return a.start_ns < b.start_ns; });
      ++it;
    }
  }
}

// The gap before a step, split as a wait is; `busy`: LoaderBusy's figure
// for it.
void ComputeGap(const TrainerGroup& g, const TimeWindow& gap, double busy, report::Step* out,
                report::Overlap* overlap) {
  if (gap.end_ns <= gap.start_ns) return;
  int64_t fetch = g.io->Count(gap.start_ns, gap.end_ns);
  double prep = static_cast<double>(gap.duration_ns() - fetch) * busy;
  out->set_gap_before_s(Seconds(gap.duration_ns()));
  out->set_gap_fetch_s(Seconds(fetch));
  out->set_gap_prep_s(Seconds(prep));
  out->set_gap_other_s(Seconds(gap.duration_ns() - fetch) - Seconds(prep));
  overlap->set_exposed_io_s(overlap->exposed_io_s() + Seconds(fetch));
  overlap->set_wait_s(overlap->wait_s() + Seconds(gap.duration_ns()));
}

// `loader_busy`: LoaderBusy's figures for the span's waits.
report::Step ComputeStep(const RunState& s, const TrainerGroup& g, const StepSpan& span,
                         const StepWaits& waits, const double* loader_busy,
                         report::Overlap* overlap) {
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
  overlap->set_wait_s(overlap->wait_s() + Seconds(wait));
  overlap->set_compute_s(overlap->compute_s() + Seconds(span.duration_ns() - wait));
  return out;
}

// Average cores the loaders and the trainers used over the counted steps.
void CpuUse(const RunState& s, report::StepStatistics* st) {
  double loader_ns = 0, queued_ns = 0, trainer_ns = 0, step_ns = 0;
  for (const auto& group : s.groups) {
    const TrainerGroup& g = group.second;  // a lambda below uses it
    const size_t first = g.steps.size() > 1 ? 1 : 0;
    // Summed step by step as before, but each series walked once, in time
    // order: loaders' figures per step first (steps x loaders).
    auto per_step = [&](const std::map<int, AdaptiveSeries>& series) {
      std::vector<double> sums((g.steps.size() - first) * series.size());
      size_t l = 0;
      for (const auto& [loader, one] : series) {
        for (size_t k = first; k < g.steps.size(); ++k) {
          sums[(k - first) * series.size() + l] = one.SumOver(g.steps[k].start_ns, g.steps[k].end_ns);
        }
        ++l;
      }
      return sums;
    };
    std::vector<double> loaders = per_step(g.loader_cpu);
    std::vector<double> queued = per_step(g.loader_run_queue);
    for (size_t k = first; k < g.steps.size(); ++k) {
      const StepSpan& span = g.steps[k];
      step_ns += static_cast<double>(span.duration_ns());
      trainer_ns += g.trainer_cpu->SumOver(span.start_ns, span.end_ns);
      for (size_t l = 0; l < g.loader_cpu.size(); ++l) {
        loader_ns += loaders[(k - first) * g.loader_cpu.size() + l];
      }
      for (size_t l = 0; l < g.loader_run_queue.size(); ++l) {
        queued_ns += queued[(k - first) * g.loader_run_queue.size() + l];
      }
    }
  }
  // Several trainers run side by side: their step time overlaps, so cores
  // are per trainer, summed.
  double trainers = std::max<double>(1, static_cast<double>(s.groups.size()));
  if (step_ns <= 0) return;
  st->set_loader_cores(loader_ns / step_ns * trainers);
  st->set_trainer_cores(trainer_ns / step_ns * trainers);
  st->set_loader_run_queue_cores(queued_ns / step_ns * trainers);
}

void Statistics(const std::vector<report::Step>& steps, size_t skipped,
                report::StepStatistics* st) {
  std::vector<double> durations, waits;
  double total = 0, total_wait = 0, fetch = 0, prep = 0, other = 0;
  double gaps = 0, gap_total = 0, gap_fetch = 0, gap_prep = 0, gap_other = 0;
  for (const report::Step& s : steps) {
    durations.push_back(s.duration_s());
    total += s.duration_s();
    if (s.data_wait_s() >= 0) {
      waits.push_back(s.data_wait_s());
      total_wait += s.data_wait_s();
      fetch += s.fetch_s();
      prep += s.prep_s();
      other += s.other_s();
    }
    if (s.gap_before_s() > 0) {
      ++gaps;
      gap_total += s.gap_before_s();
      gap_fetch += s.gap_fetch_s();
      gap_prep += s.gap_prep_s();
      gap_other += s.gap_other_s();
    }
  }
  st->set_steps(static_cast<double>(steps.size()));
  st->set_warmup_steps_skipped(static_cast<double>(skipped));
  st->set_median_step_s(Median(durations));
  st->set_p90_step_s(Quantile(durations, 0.9));
  st->set_total_step_s(total);
  report::BetweenSteps* between = st->mutable_between_steps();
  between->set_gaps(gaps);
  between->set_total_s(gap_total);
  between->set_share(Ratio(gap_total, total + gap_total));
  if (gap_total > 0) {
    between->set_fetch_share(gap_fetch / gap_total);
    between->set_prep_share(gap_prep / gap_total);
    between->set_other_share(gap_other / gap_total);
  }
  if (waits.empty()) {
    st->set_median_data_wait_s(-1);
    st->set_data_stall_share(-1);
    return;
  }
  // The time between steps is waiting too: the loop was not training.
  total_wait += gap_total;
  st->set_median_data_wait_s(Median(waits));
  st->set_total_data_wait_s(total_wait);
  st->set_data_stall_share(Ratio(total_wait, total + gap_total));
  if (total_wait > 0) {
    st->set_fetch_share((fetch + gap_fetch) / total_wait);
    st->set_prep_share((prep + gap_prep) / total_wait);
    st->set_other_share((other + gap_other) / total_wait);
  }
}

void Workers(const RunState& s, report::Report* r) {
  report::Workers* w = r->mutable_workers();
  double worst_bytes = 0, worst_busy = 0, excess_ns = 0;
  double loaders = 0;
  for (const auto& [index, g] : s.groups) {
    w->add_loaders_per_trainer(static_cast<double>(g.loaders.size()));
    loaders += static_cast<double>(g.loaders.size());
    if (g.loaders.size() < 2) continue;
    double sum_bytes = 0, max_bytes = 0, sum_busy = 0, max_busy = 0;
    for (int l : g.loaders) {
      double bytes = s.processes[l].summary.read_bytes();
      double busy = static_cast<double>(s.processes[l].io_busy_ns);
      sum_bytes += bytes;
      sum_busy += busy;
      max_bytes = std::max(max_bytes, bytes);
      max_busy = std::max(max_busy, busy);
    }
    double n = static_cast<double>(g.loaders.size());
    if (sum_bytes > 0) worst_bytes = std::max(worst_bytes, max_bytes / (sum_bytes / n));
    if (sum_busy > 0 && max_busy / (sum_busy / n) > worst_busy) {
      worst_busy = max_busy / (sum_busy / n);
      excess_ns = max_busy - sum_busy / n;
    }
  }
  w->set_trainers(static_cast<double>(s.groups.size()));
  w->set_loaders(loaders);
  w->set_max_over_mean_bytes(worst_bytes);
  w->set_max_over_mean_busy(worst_busy);
  w->set_excess_busy_s(Seconds(excess_ns));
}

void Epochs(const RunState& s, const std::vector<report::Step>& steps, report::Report* r) {
  for (const auto& [index, g] : s.groups) {
    for (size_t k = 0; k < g.epochs.size(); ++k) {
      const TimeWindow& w = g.epochs[k];
      report::Epoch* e = r->mutable_epochs()->add_epoch();
      e->set_index(static_cast<double>(k));
      e->set_start_s(Seconds(w.start_ns - s.origin_ns));
      e->set_end_s(Seconds(w.end_ns - s.origin_ns));
      e->set_read_bytes(g.read_bytes->SumOver(w.start_ns, w.end_ns));
      double calls = g.read_calls->SumOver(w.start_ns, w.end_ns);
      double read_ns = g.read_ns->SumOver(w.start_ns, w.end_ns);
      e->set_read_time_s(Seconds(read_ns));
      e->set_mean_read_latency_s(Seconds(Ratio(read_ns, calls)));
      std::vector<double> durations;
      for (const report::Step& st : steps) {
        if (st.epoch() == static_cast<double>(k)) durations.push_back(st.duration_s());
      }
      e->set_steps(static_cast<double>(durations.size()));
      e->set_median_step_s(Median(durations));
    }
    if (!g.epochs.empty()) break;  // one trainer's epochs speak for the run
  }
}

}  // namespace

int GroupOf(const RunState& state, int index) {
  const CatalogEntry& e = state.catalog.entries[index];
  if (e.role == report::TRAINER && state.groups.count(index)) return index;
  if (e.role == report::LOADER && e.trainer >= 0 && state.groups.count(e.trainer)) {
    return e.trainer;
  }
  return -1;
}

void BuildSteps(RunState& s, report::Report* r) {
  CollectSteps(s);
  // Per group: whether its first step is the run's warm-up step.
  std::map<int, bool> warmup;
  for (auto& [index, g] : s.groups) {
    warmup[index] = KeepStepsInRange(&g.steps, s.range_start_ns, s.range_end_ns);
  }
  InferWaits(s, r->mutable_step_statistics());
  report::Overlap* overlap = r->mutable_overlap();
  std::vector<report::Step> counted;
  size_t skipped = 0;
  int64_t in_steps_io = 0;
  for (const auto& [index, g] : s.groups) {
    std::vector<double> loader_busy = LoaderBusy(g, StepWaitWindows(g));
    std::vector<double> gap_busy = LoaderBusy(g, GapWindows(g));
    size_t first_wait = 0;
    for (size_t k = 0; k < g.steps.size(); ++k) {
      report::Step step = ComputeStep(s, g, g.steps[k], g.step_waits[k],
                                      loader_busy.data() + first_wait, overlap);
      first_wait += g.steps[k].data_waits.size();
      const TimeWindow& gap = g.step_waits[k].gap;
      ComputeGap(g, gap, gap_busy[k], &step, overlap);
      in_steps_io += g.io->Count(g.steps[k].start_ns, g.steps[k].end_ns) +
                     g.io->Count(gap.start_ns, gap.end_ns);
      overlap->set_exposed_io_s(overlap->exposed_io_s() + step.exposed_io_s());
      overlap->set_hidden_io_s(overlap->hidden_io_s() + step.hidden_io_s());
      // The first step of each trainer starts its workers and warms caches.
      if (k == 0 && g.steps.size() > 1 && warmup[index]) {
        ++skipped;
      } else {
        counted.push_back(step);
      }
      *r->add_steps() = std::move(step);
    }
  }
  int64_t group_io = 0;
  for (const auto& [index, g] : s.groups) group_io += g.io->Total();
  overlap->set_io_busy_s(Seconds(group_io));
  overlap->set_outside_steps_io_s(Seconds(group_io - in_steps_io));
  double hidden = overlap->hidden_io_s(), exposed = overlap->exposed_io_s();
  overlap->set_hidden_share(Ratio(hidden, hidden + exposed));
  Statistics(counted, skipped, r->mutable_step_statistics());
  CpuUse(s, r->mutable_step_statistics());
  Workers(s, r);
  Epochs(s, counted, r);
  // Roles may have changed (helpers among would-be trainers).
  for (int i = 0; i < r->processes_size(); ++i) {
    r->mutable_processes(i)->set_role(s.catalog.entries[i].role);
  }
}

}  // namespace iotap::analyzer::run_state
