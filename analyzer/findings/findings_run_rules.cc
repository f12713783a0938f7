// Rules about processes and the training loop: who reads, how many
// workers, GPU copies, checkpoints, the first epoch.

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/findings/findings_internal.h"

namespace iotap::analyzer::internal {

namespace {

std::optional<Result> IoInTrainer(const Context& c) {
  const Report& r = c.report();
  const report::Process* worst = nullptr;
  for (const report::Process& p : r.processes()) {
    if (p.role() != report::TRAINER) continue;
    bool has_loaders = std::any_of(r.processes().begin(), r.processes().end(),
                                   [&](const report::Process& l) {
                                     return l.role() == report::LOADER && l.trainer_pid() == p.pid();
                                   });
    if (has_loaders || p.io_busy_s() <= 0) continue;
    if (worst == nullptr || p.io_busy_s() > worst->io_busy_s()) worst = &p;
  }
  if (worst == nullptr) return std::nullopt;
  double lifetime = std::max(1e-9, worst->end_s() - worst->start_s());
  double busy_share = worst->io_busy_s() / lifetime;
  if (busy_share < c.T("busy_share", 0.05)) return std::nullopt;
  Result res;
  res.score = c.steps_known() ? FetchSeconds(r) : worst->io_busy_s();
  res.severity = c.Impact(res.score, busy_share);
  res.values = {{"trainer", absl::StrCat("pid ", worst->pid())},
                {"reads", absl::StrCat(static_cast<int64_t>(worst->reads()))},
                {"busy", HumanDuration(worst->io_busy_s())},
                {"busy_share", Pct(busy_share)}};
  res.objects.push_back(absl::StrCat("pid ", worst->pid()));
  AddEvidence(res, "trainer's time in data I/O", worst->io_busy_s(), "s",
              absl::StrFormat("%s (%s of its run)", HumanDuration(worst->io_busy_s()), Pct(busy_share)));
  return res;
}

std::optional<Result> TooFewWorkers(const Context& c) {
  const Report& r = c.report();
  const report::StepStatistics& st = r.step_statistics();
  if (!c.steps_known() || st.prep_share() < c.T("prep_share", 0.5)) return std::nullopt;
  if (r.workers().loaders_per_trainer_size() == 0) return std::nullopt;
  double loaders = *std::min_element(r.workers().loaders_per_trainer().begin(),
                                     r.workers().loaders_per_trainer().end());
  double cpus = r.run().host_cpus();
  double trainers = std::max(1.0, r.workers().trainers());
  // Room for more workers: cores the trainers and loaders leave idle while
  // the trainers wait (a waiting trainer uses little of its core). Loaders
  // queued for a CPU mean the cores are not idle (cpu_starved_loaders).
  if (st.loader_run_queue_cores() >= c.T("max_run_queue_cores", 0.25)) return std::nullopt;
  double spare = cpus - st.loader_cores() - st.trainer_cores();
  if (cpus > 0 && spare < c.T("spare_cores", 0.5)) return std::nullopt;
  Result res;
  res.score = st.total_data_wait_s() * st.prep_share();
  res.severity = c.Impact(res.score, 0);
  double per_trainer = loaders + std::max(1.0, std::floor(spare / trainers));
  if (loaders == 0) res.summary_case = "no_workers";
  res.values = {{"loader_cpu", absl::StrFormat("%.1f cores", st.loader_cores())},
                {"prep_share", Pct(st.prep_share())},
                {"trainer_cpu", absl::StrFormat("%.1f cores", st.trainer_cores())},
                {"loaders", absl::StrCat(static_cast<int64_t>(loaders))},
                {"cpus", cpus > 0 ? absl::StrCat(static_cast<int64_t>(cpus)) : "an unknown number of"},
                {"spare", absl::StrFormat("%.1f", std::max(0.0, spare))},
                {"suggested", absl::StrCat("num_workers=", static_cast<int64_t>(per_trainer))}};
  AddPyCosts(r, &res);
  AddEvidence(res, "loaders per trainer", loaders, "processes", absl::StrCat(static_cast<int64_t>(loaders)));
  AddEvidence(res, "share of the wait the loaders were computing", st.prep_share(), "share",
              Pct(st.prep_share()));
  if (cpus > 0) AddEvidence(res, "online CPUs", cpus, "cpus", absl::StrCat(static_cast<int64_t>(cpus)));
  AddEvidence(res, "cores in use during steps: loaders + trainers",
              st.loader_cores() + st.trainer_cores(), "cores",
              absl::StrFormat("%.1f + %.1f", st.loader_cores(), st.trainer_cores()));
  return res;
}

std::optional<Result> CpuStarvedLoaders(const Context& c) {
  const report::StepStatistics& st = c.report().step_statistics();
  double busy = st.loader_cores() + st.loader_run_queue_cores();
  if (!c.steps_known() || busy <= 0 || st.prep_share() < c.T("prep_share", 0.5)) return std::nullopt;
  double queued_share = st.loader_run_queue_cores() / busy;
  if (queued_share < c.T("queued_share", 0.2)) return std::nullopt;
  Result res;
  res.score = st.total_data_wait_s() * st.prep_share() * queued_share;
  res.severity = c.Impact(st.total_data_wait_s() * st.prep_share(), 0);
  res.values = {{"queued_share", Pct(queued_share)},
                {"queued_cores", absl::StrFormat("%.1f", st.loader_run_queue_cores())},
                {"cpus", absl::StrCat(static_cast<int64_t>(c.report().run().host_cpus()))}};
  AddEvidence(res, "share of the loaders' busy time spent waiting for a CPU", queued_share,
              "share", Pct(queued_share));
  AddEvidence(res, "cores in use by loaders / waited for", st.loader_cores(), "cores",
              absl::StrFormat("%.1f / %.1f", st.loader_cores(), st.loader_run_queue_cores()));
  return res;
}

std::optional<Result> ImbalancedWorkers(const Context& c) {
  const report::Workers& w = c.report().workers();
  // A ratio over loaders that read for a few milliseconds is noise (a
  // preempted call or two): the excess must be time the job could lose.
  double span = c.steps_known() ? c.total_step_s() : c.run_s();
  if (w.loaders() < 2 || w.max_over_mean_busy() < c.T("ratio", 1.5) ||
      w.excess_busy_s() < c.T("min_excess_s", 0.05) ||
      (span > 0 && w.excess_busy_s() < c.T("min_excess_share", 0.02) * span)) {
    return std::nullopt;
  }
  Result res;
  res.score = w.excess_busy_s();
  // It matters when the job waits on reading: fetch the largest part of a
  // stall worth a warning.
  const report::StepStatistics& st = c.report().step_statistics();
  bool fetch_bound = st.fetch_share() >= st.prep_share() && st.fetch_share() >= st.other_share();
  double stall = std::max(0.0, st.data_stall_share());
  res.severity = stall >= c.T("warning_share", 0.10) && fetch_bound ? Finding::WARNING
                                                                    : Finding::INFO;
  res.values = {{"ratio", absl::StrFormat("%.1fx", w.max_over_mean_busy())},
                {"excess", HumanDuration(w.excess_busy_s())}};
  AddEvidence(res, "busiest loader's I/O time over the mean", w.max_over_mean_busy(), "ratio",
              absl::StrFormat("%.2f", w.max_over_mean_busy()));
  AddEvidence(res, "busiest loader's I/O time beyond the mean", w.excess_busy_s(), "s",
              HumanDuration(w.excess_busy_s()));
  return res;
}

std::optional<Result> PageableHtoD(const Context& c) {
  double pageable = 0, total = 0, copies = 0, in_steps = 0;
  for (const report::CudaCopies& k : c.report().cuda_copies()) {
    if (k.direction() != "HtoD") continue;
    total += k.bytes();
    copies += k.copies();
    if (k.host_memory() == "pageable") {
      pageable += k.bytes();
      in_steps += k.in_steps_s();
    }
  }
  if (copies < c.T("min_copies", 10) || total <= 0 || pageable / total < c.T("pageable_share", 0.5)) {
    return std::nullopt;
  }
  Result res;
  res.score = in_steps;
  double step_share = Ratio(in_steps, c.total_step_s());
  res.severity = step_share >= c.T("step_share", 0.02) ? Finding::WARNING : Finding::INFO;
  res.values = {{"pageable_share", Pct(pageable / total)},
                {"bytes", HumanBytes(total)},
                {"copies", absl::StrCat(static_cast<int64_t>(copies))}};
  AddEvidence(res, "host-to-device bytes from pageable memory", pageable, "bytes", HumanBytes(pageable));
  AddEvidence(res, "time in pageable copies inside steps", in_steps, "s", HumanDuration(in_steps));
  return res;
}

std::optional<Result> SyncCopies(const Context& c) {
  double in_steps = 0;
  for (const report::CudaCopies& k : c.report().cuda_copies()) {
    if (k.direction() == "HtoD" && !k.async()) in_steps += k.in_steps_s();
  }
  double share = Ratio(in_steps, c.total_step_s());
  if (share < c.T("step_share", 0.05)) return std::nullopt;
  Result res;
  res.score = in_steps;
  res.severity = Finding::WARNING;
  res.values = {{"time", HumanDuration(in_steps)}, {"step_share", Pct(share)}};
  AddEvidence(res, "synchronous host-to-device copy time in steps", in_steps, "s", HumanDuration(in_steps));
  return res;
}

std::optional<Result> CheckpointStall(const Context& c) {
  std::vector<double> writing, other;
  double write_time = 0;
  // A step "writes" when writing took a real part of it: a log line flushed
  // each step (a step log, stdout to a file) does not make every step one.
  for (const report::Step& s : c.report().steps()) {
    bool writes = s.write_busy_s() > 0 &&
                  s.write_busy_s() >= c.T("min_write_share", 0.05) * s.duration_s();
    (writes ? writing : other).push_back(s.duration_s());
    if (writes) write_time += s.write_busy_s();
  }
  if (writing.empty() || other.empty()) return std::nullopt;
  double slow = Median(writing), normal = Median(other);
  double share = Ratio(write_time, c.total_step_s());
  if (normal <= 0 || slow / normal < c.T("slowdown", 1.5) || share < c.T("step_share", 0.02)) {
    return std::nullopt;
  }
  Result res;
  res.score = (slow - normal) * static_cast<double>(writing.size());
  res.severity = Finding::WARNING;
  res.values = {{"write_steps", absl::StrCat(writing.size())},
                {"slow", HumanDuration(slow)},
                {"normal", HumanDuration(normal)},
                {"write_time", HumanDuration(write_time)}};
  AddEvidence(res, "median step with writes / without", slow / normal, "ratio",
              absl::StrFormat("%s / %s", HumanDuration(slow), HumanDuration(normal)));
  return res;
}

std::optional<Result> ColdFirstEpoch(const Context& c) {
  const auto& epochs = c.report().epochs().epoch();
  if (epochs.size() < 2) return std::nullopt;
  double later_latency = 0, later_step = 0;
  int later = 0;
  for (int i = 1; i < epochs.size(); ++i) {
    later_latency += epochs[i].mean_read_latency_s();
    later_step += epochs[i].median_step_s();
    ++later;
  }
  later_latency /= later;
  later_step /= later;
  const report::Epoch& first = epochs[0];
  if (later_latency <= 0 || first.mean_read_latency_s() < c.T("latency_ratio", 3) * later_latency ||
      (later_step > 0 && first.median_step_s() < c.T("step_ratio", 1.2) * later_step)) {
    return std::nullopt;
  }
  Result res;
  res.score = (first.median_step_s() - later_step) * first.steps();
  res.severity = Finding::INFO;
  res.values = {{"first_latency", HumanDuration(first.mean_read_latency_s())},
                {"later_latency", HumanDuration(later_latency)},
                {"first_step", HumanDuration(first.median_step_s())},
                {"later_step", HumanDuration(later_step)}};
  AddEvidence(res, "read latency, epoch 0 / later", first.mean_read_latency_s() / later_latency,
              "ratio", absl::StrFormat("%.1fx", first.mean_read_latency_s() / later_latency));
  return res;
}

}  // namespace

void RegisterRunRules(std::map<std::string, RuleFn>* rules) {
  (*rules)["io_in_trainer"] = IoInTrainer;
  (*rules)["too_few_workers"] = TooFewWorkers;
  (*rules)["cpu_starved_loaders"] = CpuStarvedLoaders;
  (*rules)["imbalanced_workers"] = ImbalancedWorkers;
  (*rules)["pageable_htod"] = PageableHtoD;
  (*rules)["sync_copies"] = SyncCopies;
  (*rules)["checkpoint_stall"] = CheckpointStall;
  (*rules)["cold_first_epoch"] = ColdFirstEpoch;
}

}  // namespace iotap::analyzer::internal
