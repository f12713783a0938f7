// Rules about the data path: stalls, storage, file layout, access sizes.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/findings/findings_internal.h"

namespace iotap::analyzer::internal {

namespace {

// The data-stall symptoms: one rule per dominant component of the wait.
std::optional<Result> DataStall(const Context& c, const std::string& component) {
  const report::StepStatistics& st = c.report().step_statistics();
  if (st.data_stall_share() < 0 || st.total_data_wait_s() <= 0) return std::nullopt;
  double fetch = st.fetch_share(), prep = st.prep_share(), other = st.other_share();
  std::string dominant = fetch >= prep && fetch >= other ? "fetch" : prep >= other ? "prep" : "other";
  if (dominant != component || st.data_stall_share() < c.T("warning_share", 0.10)) {
    return std::nullopt;
  }
  Result res;
  res.cause = false;
  res.severity = st.data_stall_share() >= c.T("critical_share", 0.30) ? Finding::CRITICAL
                                                                     : Finding::WARNING;
  double share = component == "fetch" ? fetch : component == "prep" ? prep : other;
  res.score = st.total_data_wait_s() * share;
  const report::Workers& w = c.report().workers();
  if (w.trainers() > 0 && w.loaders() == 0) res.summary_case = "no_workers";
  res.values = {{"stall_share", Pct(st.data_stall_share())},
                {"wait", HumanDuration(st.total_data_wait_s())},
                {"steps", absl::StrCat(static_cast<int64_t>(st.steps()))},
                {"fetch_share", Pct(fetch)},
                {"prep_share", Pct(prep)},
                {"other_share", Pct(other)}};
  if (component == "prep") AddPyCosts(c.report(), &res);
  AddEvidence(res, "data wait, share of step time", st.data_stall_share(), "share",
           absl::StrFormat("%s (%s of %s)", Pct(st.data_stall_share()),
                           HumanDuration(st.total_data_wait_s()), HumanDuration(c.total_step_s())));
  AddEvidence(res, "median data wait per step", st.median_data_wait_s(), "s",
           HumanDuration(st.median_data_wait_s()));
  AddEvidence(res, "wait split: fetch / preparation / other", fetch, "share",
           absl::StrFormat("%s / %s / %s", Pct(fetch), Pct(prep), Pct(other)));
  const report::BetweenSteps& between = st.between_steps();
  if (between.share() >= 0.01) {
    AddEvidence(res, "time between logged steps, counted as waiting", between.share(), "share",
                absl::StrFormat("%s of the trainers' time (%s)", Pct(between.share()),
                                HumanDuration(between.total_s())));
  }
  const report::DataWaits& waits = st.data_waits();
  if (waits.inferred_steps() > 0) {
    AddEvidence(res, "steps whose waits were inferred from the trace", waits.inferred_steps(),
                "steps",
                absl::StrFormat("%d of %d (the step source does not say when steps waited)",
                                static_cast<int64_t>(waits.inferred_steps()),
                                static_cast<int64_t>(st.steps())));
  }
  return res;
}

std::optional<Result> StorageSlow(const Context& c) {
  const report::DataFiles& d = c.report().data_files();
  bool bypass = d.direct_opens() > 0 || d.dontneed_advice() > 0;
  // Reads that are mostly page faults are mapped_reads_storage's (its advice
  // is for mappings).
  for (const report::Layer& l : c.report().layers()) {
    if (l.name() == "MAPPED" && l.time_s() >= 0.5 * d.read_time_s() && l.time_s() > 0) {
      return std::nullopt;
    }
  }
  if (d.reads() < c.T("min_reads", 100) ||
      (d.mean_read_latency_s() < c.T("latency_s", 0.0005) && !bypass)) {
    return std::nullopt;
  }
  Result res;
  double run = c.run_s();
  res.score = c.steps_known() ? FetchSeconds(c.report()) : d.read_time_s();
  res.severity = c.Impact(res.score, c.report().run().io_busy_s() / run);
  std::string how;
  if (d.direct_opens() > 0) how += absl::StrFormat("; %d opens bypassed the page cache with O_DIRECT", static_cast<int64_t>(d.direct_opens()));
  if (d.dontneed_advice() > 0) how += absl::StrFormat("; the job dropped its data from the page cache %d times (POSIX_FADV_DONTNEED)", static_cast<int64_t>(d.dontneed_advice()));
  res.values = {{"latency", HumanDuration(d.mean_read_latency_s())},
                {"reads", absl::StrCat(static_cast<int64_t>(d.reads()))},
                {"read_time", HumanDuration(d.read_time_s())},
                {"bypass", how}};
  AddEvidence(res, "mean read latency", d.mean_read_latency_s(), "s", HumanDuration(d.mean_read_latency_s()));
  AddEvidence(res, "time in data reads", d.read_time_s(), "s", HumanDuration(d.read_time_s()));
  if (c.steps_known()) {
    AddEvidence(res, "time the trainers waited while loaders read", res.score, "s", HumanDuration(res.score));
  }
  return res;
}

// The result of a rule whose cause took `io_s` of I/O time: scored by the
// part of the steps' fetching it can explain (all of it where no step says
// when it waited), its severity by that and by its share of the run.
Result ScoredByIoTime(const Context& c, double io_s) {
  Result res;
  const bool steps = c.steps_known();
  res.score = steps ? std::min(FetchSeconds(c.report()), io_s) : io_s;
  res.severity = c.Impact(steps ? FetchSeconds(c.report()) : io_s, io_s / c.run_s());
  return res;
}

std::optional<Result> Hdf5Amplification(const Context& c) {
  const report::Dataset* worst = nullptr;
  for (const report::Dataset& d : c.report().datasets()) {
    if (d.reads() < c.T("min_calls", 100)) continue;
    if (d.reads_per_call() < c.T("reads_per_call", 4) &&
        d.byte_amplification() < c.T("byte_amplification", 1.5)) {
      continue;
    }
    if (worst == nullptr || d.read_time_s() > worst->read_time_s()) worst = &d;
  }
  if (worst == nullptr) return std::nullopt;
  Result res = ScoredByIoTime(c, worst->read_time_s());
  std::string chunk = worst->chunk_bytes() > 0
                          ? absl::StrCat(", chunks of ", HumanBytes(worst->chunk_bytes()))
                          : "";
  res.values = {{"logical", HumanBytes(worst->logical_bytes() / worst->reads())},
                {"dataset", absl::StrCat(worst->file(), ":", worst->name())},
                {"reads_per_call", absl::StrFormat("%.1f", worst->reads_per_call())},
                {"posix_size", HumanBytes(worst->posix_reads() > 0
                                              ? worst->posix_bytes() / worst->posix_reads()
                                              : 0)},
                {"layout", worst->layout()},
                {"chunk", chunk},
                {"amplification", absl::StrFormat("%.2fx", worst->byte_amplification())}};
  res.objects.push_back(absl::StrCat(worst->file(), ":", worst->name()));
  AddEvidence(res, "POSIX reads per H5Dread", worst->reads_per_call(), "calls",
           absl::StrFormat("%.1f", worst->reads_per_call()));
  AddEvidence(res, "bytes read per byte asked for", worst->byte_amplification(), "ratio",
           absl::StrFormat("%.2f", worst->byte_amplification()));
  AddEvidence(res, "time in H5Dread", worst->read_time_s(), "s", HumanDuration(worst->read_time_s()));
  return res;
}

std::optional<Result> ManySmallFiles(const Context& c) {
  const report::DataFiles& d = c.report().data_files();
  double io = d.metadata_s() + d.read_time_s();
  double meta_share = Ratio(d.metadata_s(), io);
  if (d.read_files() < c.T("min_files", 500) ||
      d.median_file_bytes() > c.T("max_file_bytes", 1048576) ||
      meta_share < c.T("metadata_share", 0.3)) {
    return std::nullopt;
  }
  Result res = ScoredByIoTime(c, io);
  // Opening and closing every file weighs beside the fetching it explains.
  if (c.steps_known()) res.score += d.metadata_s();
  res.values = {{"files", absl::StrCat(static_cast<int64_t>(d.read_files()))},
                {"file_size", HumanBytes(d.median_file_bytes())},
                {"metadata_share", Pct(meta_share)},
                {"metadata_ops", absl::StrCat(static_cast<int64_t>(d.metadata_ops()))}};
  for (int i = 0; i < c.report().directories_size() && i < 3; ++i) {
    res.objects.push_back(c.report().directories(i).path());
  }
  AddEvidence(res, "data files read", d.read_files(), "files", absl::StrCat(static_cast<int64_t>(d.read_files())));
  AddEvidence(res, "metadata calls (open, stat, close, ...)", d.metadata_ops(), "calls",
           absl::StrFormat("%d, %s", static_cast<int64_t>(d.metadata_ops()), HumanDuration(d.metadata_s())));
  AddEvidence(res, "metadata share of data I/O time", meta_share, "share", Pct(meta_share));
  return res;
}

std::optional<Result> SmallTransfers(const Context& c) {
  const report::DataFiles& d = c.report().data_files();
  bool hdf5 = d.hdf5_posix_reads() * 2 > d.reads();
  if (hdf5 || d.reads() < c.T("min_reads", 10000) ||
      d.median_read_bytes() >= c.T("max_read_bytes", 65536) ||
      d.median_file_bytes() < c.T("min_file_bytes", 1048576)) {
    return std::nullopt;
  }
  Result res = ScoredByIoTime(c, d.read_time_s());
  res.values = {{"reads", absl::StrCat(static_cast<int64_t>(d.reads()))},
                {"read_size", HumanBytes(d.median_read_bytes())},
                {"file_size", HumanBytes(d.median_file_bytes())},
                {"read_time", HumanDuration(d.read_time_s())}};
  AddEvidence(res, "median read size", d.median_read_bytes(), "bytes", HumanBytes(d.median_read_bytes()));
  AddEvidence(res, "data reads", d.reads(), "calls", absl::StrCat(static_cast<int64_t>(d.reads())));
  return res;
}

std::optional<Result> RandomSmallReads(const Context& c) {
  const report::DataFiles& d = c.report().data_files();
  const report::AccessPattern& p = d.read_pattern();
  double total = p.consecutive() + p.sequential() + p.strided() + p.random();
  double random = Ratio(p.random(), total);
  if (d.reads() < c.T("min_reads", 1000) || random < c.T("random_share", 0.5) ||
      d.median_read_bytes() >= c.T("max_read_bytes", 65536) ||
      d.hdf5_posix_reads() * 2 > d.reads()) {
    return std::nullopt;
  }
  Result res = ScoredByIoTime(c, d.read_time_s());
  res.values = {{"random_share", Pct(random)},
                {"reads", absl::StrCat(static_cast<int64_t>(d.reads()))},
                {"read_size", HumanBytes(d.median_read_bytes())}};
  AddEvidence(res, "reads that jumped (random)", random, "share", Pct(random));
  return res;
}

}  // namespace

void RegisterDataRules(std::map<std::string, RuleFn>* rules) {
  (*rules)["data_stall_fetch"] = [](const Context& c) { return DataStall(c, "fetch"); };
  (*rules)["data_stall_prep"] = [](const Context& c) { return DataStall(c, "prep"); };
  (*rules)["data_stall_other"] = [](const Context& c) { return DataStall(c, "other"); };
  (*rules)["storage_slow"] = StorageSlow;
  (*rules)["hdf5_amplification"] = Hdf5Amplification;
  (*rules)["many_small_files"] = ManySmallFiles;
  (*rules)["small_transfers"] = SmallTransfers;
  (*rules)["random_small_reads"] = RandomSmallReads;
}

}  // namespace iotap::analyzer::internal
