// The run's steps, data stalls, overlap, epochs and worker balance (see
// run_analysis.h for the definitions), put together from the trainer
// groups' parts (GroupResult, worked out in group_steps.cc) in the order of
// the groups.

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer::run_state {

namespace {

double Quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
}

// What the groups' steps came from and what their sources said, in the
// order the sources are read: each group's markers, then each step log.
void StepNotes(RunState& s) {
  for (const auto& [index, g] : s.groups) {
    const GroupResult& res = s.results.at(index);
    s.notes.insert(s.notes.end(), res.notes.begin(), res.notes.end());
    s.step_sources.insert(s.step_sources.end(), res.step_sources.begin(), res.step_sources.end());
  }
  const StepLogSpans logs = AssignStepLogs(s);
  for (size_t k = 0; k < s.step_logs.size(); ++k) {
    const auto& [path, log] = s.step_logs[k];
    if (!log.ok()) {
      s.notes.push_back(absl::StrCat("step log not used: ", log.status().message()));
      continue;
    }
    for (const std::string& e : log->errors) s.notes.push_back(e);
    for (const std::string& n : log->notes) s.notes.push_back(absl::StrCat(path, ": ", n));
    if (!logs.used[k]) {
      s.notes.push_back(absl::StrCat(path, ": its times have no wall-clock origin, so its steps "
                                           "cannot be lined up with I/O; not used"));
      continue;
    }
    // The groups' marker sources are none where a log is used.
    s.step_sources.push_back(path);
    if (logs.unmatched[k]) {
      s.notes.push_back(absl::StrCat(path,
                                     ": some steps name no rank or process of this run; "
                                     "they were given to the first trainer"));
    }
  }
}

// A "trainer" with neither steps nor loaders (torchrun's agent, a shell
// script's python) is only helping, where other trainers have steps.
void DemoteHelpers(RunState& s) {
  bool any_steps = false;
  for (const auto& [index, res] : s.results) any_steps = any_steps || res.has_steps;
  if (!any_steps) return;
  for (auto it = s.groups.begin(); it != s.groups.end();) {
    if (!s.results.at(it->first).has_steps && it->second.loaders.empty()) {
      s.catalog.entries[it->first].role = report::HELPER;
      s.results.erase(it->first);
      it = s.groups.erase(it);
    } else {
      ++it;
    }
  }
}

// Average cores the loaders and the trainers used over the counted steps:
// the groups' addends, in order, into one running sum each.
void CpuUse(const RunState& s, report::StepStatistics* st) {
  double loader_ns = 0, queued_ns = 0, trainer_ns = 0;
  int64_t step_ns = 0;  // integers: the same as one running sum of doubles below 2^53
  for (const auto& [index, g] : s.groups) {
    const GroupResult& res = s.results.at(index);
    for (double ns : res.trainer_cpu_ns) trainer_ns += ns;
    for (double ns : res.loader_cpu_ns) loader_ns += ns;
    for (double ns : res.loader_queued_ns) queued_ns += ns;
    AddTo(&step_ns, res.step_ns);
  }
  // Several trainers run side by side: their step time overlaps, so cores
  // are per trainer, summed.
  double trainers = std::max<double>(1, static_cast<double>(s.groups.size()));
  if (step_ns <= 0) return;
  const double steps = static_cast<double>(step_ns);
  st->set_loader_cores(loader_ns / steps * trainers);
  st->set_trainer_cores(trainer_ns / steps * trainers);
  st->set_loader_run_queue_cores(queued_ns / steps * trainers);
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

// The first group's epochs with epochs speak for the run; their steps
// are every group's.
void Epochs(RunState& s, const std::vector<report::Step>& steps, report::Report* r) {
  for (const auto& [index, g] : s.groups) {
    std::vector<report::Epoch>& epochs = s.results.at(index).epochs;
    if (epochs.empty()) continue;
    for (size_t k = 0; k < epochs.size(); ++k) {
      report::Epoch* e = r->mutable_epochs()->add_epoch();
      *e = std::move(epochs[k]);
      std::vector<double> durations;
      for (const report::Step& st : steps) {
        if (st.epoch() == static_cast<double>(k)) durations.push_back(st.duration_s());
      }
      e->set_steps(static_cast<double>(durations.size()));
      e->set_median_step_s(Median(durations));
    }
    break;
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

void CombineGroups(RunState& s, report::Report* r) {
  StepNotes(s);
  DemoteHelpers(s);
  CombineWaits(s, r->mutable_step_statistics());
  // The overlap: each step's addends, step by step and group by group, as
  // one process adds them.
  report::Overlap* overlap = r->mutable_overlap();
  std::vector<report::Step> counted;
  size_t skipped = 0;
  int64_t in_steps_io = 0, group_io = 0;
  for (const auto& [index, g] : s.groups) {
    GroupResult& res = s.results.at(index);
    for (size_t k = 0; k < res.steps.size(); ++k) {
      report::Step& step = res.steps[k];
      if (step.data_wait_s() >= 0) {  // the wait is known
        overlap->set_wait_s(overlap->wait_s() + step.data_wait_s());
        overlap->set_compute_s(overlap->compute_s() + res.compute_s[k]);
      }
      if (step.gap_before_s() > 0) {
        overlap->set_exposed_io_s(overlap->exposed_io_s() + step.gap_fetch_s());
        overlap->set_wait_s(overlap->wait_s() + step.gap_before_s());
      }
      overlap->set_exposed_io_s(overlap->exposed_io_s() + step.exposed_io_s());
      overlap->set_hidden_io_s(overlap->hidden_io_s() + step.hidden_io_s());
      if (k == 0 && res.warmup_skipped) {
        ++skipped;
      } else {
        counted.push_back(step);
      }
      *r->add_steps() = std::move(step);
    }
    AddTo(&in_steps_io, res.in_steps_io_ns);
    AddTo(&group_io, res.io_ns);
  }
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
