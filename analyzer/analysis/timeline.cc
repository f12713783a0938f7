// The timeline: binned series for charts, and exact spans of steps and waits.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer::run_state {

namespace {

void FillSeries(report::Series* s, std::string name, std::string group, std::string unit,
                std::vector<double> values, int pid) {
  s->set_name(std::move(name));
  s->set_group(std::move(group));
  s->set_unit(std::move(unit));
  s->set_pid(pid);
  for (double v : values) s->add_values(v);
}

void AddSeries(report::Timeline* t, std::string name, std::string group, std::string unit,
               std::vector<double> values) {
  FillSeries(t->add_series(), std::move(name), std::move(group), std::move(unit), std::move(values),
             0);
}

// A group's series, in its result.
void AddSeries(GroupResult* out, std::string name, std::string group, std::string unit,
               std::vector<double> values, int pid) {
  FillSeries(&out->series.emplace_back(), std::move(name), std::move(group), std::move(unit),
             std::move(values), pid);
}

// The timeline's bins: `bins` of them from the run's start to its end.
struct Grid {
  int bins = 1;
  int64_t width = 1;  // ns
};

Grid GridOf(const RunState& s, int bins) {
  Grid g;
  int64_t duration = std::max<int64_t>(1, s.end_ns - s.origin_ns);
  g.bins = std::max(1, bins);
  g.width = std::max<int64_t>(1, (duration + g.bins - 1) / g.bins);
  return g;
}

void AddSpan(report::Timeline* t, const char* kind, int pid, const report::Step& step,
             double start_s, double end_s) {
  report::Span* span = t->add_spans();
  span->set_kind(kind);
  span->set_pid(pid);
  span->set_rank(step.rank());
  span->set_step(step.step());
  span->set_start_s(start_s);
  span->set_end_s(end_s);
}

// The spans of a group's steps (of `pid`'s group: those of `steps` from
// `first`), in time order: the gap before each (counted as waiting:
// step_waits.cc), the step, its waits. A gap runs from the previous step's
// end to this one's start, in seconds as the steps give them.
void AddStepSpans(const GroupResult& res, int pid,
                  const google::protobuf::RepeatedPtrField<report::Step>& steps, int first,
                  report::Timeline* t) {
  size_t wait = 0;
  for (int n = 0; n < static_cast<int>(res.waits_per_step.size()); ++n) {
    const report::Step& step = steps.Get(first + n);
    if (n > 0 && step.gap_before_s() > 0) {  // the first has none (step_waits.cc)
      AddSpan(t, "between_steps", pid, step, steps.Get(first + n - 1).end_s(), step.start_s());
    }
    AddSpan(t, "step", pid, step, step.start_s(), step.end_s());
    const char* kind = step.data_wait_inferred() ? "inferred_wait" : "data_wait";
    for (uint32_t k = 0; k < res.waits_per_step[n]; ++k, wait += 2) {
      AddSpan(t, kind, pid, step, res.wait_times_s[wait], res.wait_times_s[wait + 1]);
    }
  }
}

std::vector<double> PerSecond(std::vector<double> v, int64_t width_ns) {
  for (double& x : v) x /= Seconds(width_ns);
  return v;
}

// CPU nanoseconds per bin as cores busy on average over the bin.
std::vector<double> Cores(std::vector<double> cpu_ns, int64_t width_ns) {
  for (double& x : cpu_ns) x /= static_cast<double>(width_ns);
  return cpu_ns;
}

}  // namespace

void ComputeTimeline(const RunState& s, int index, const TrainerGroup& g, int bins,
                     GroupResult* out) {
  const Grid grid = GridOf(s, bins);
  const int64_t width = grid.width;
  bins = grid.bins;
  int pid = s.catalog.entries[index].header.pid();
  AddSeries(out, absl::StrCat("read by trainer ", pid, " and its loaders"), "process", "bytes/s",
            PerSecond(g.read_bytes->Resample(s.origin_ns, width, bins), width), pid);
  AddSeries(out, absl::StrCat("CPU of trainer ", pid), "cpu", "cores",
            Cores(g.trainer_cpu->Resample(s.origin_ns, width, bins), width), pid);
  if (!g.loader_cpu.empty()) {
    std::vector<double> loaders(bins, 0.0);
    for (const auto& [l, cpu] : g.loader_cpu) {
      std::vector<double> v = cpu.Resample(s.origin_ns, width, bins);
      for (int k = 0; k < bins; ++k) loaders[k] += v[k];
    }
    AddSeries(out, absl::StrCat("CPU of the loaders of ", pid), "cpu", "cores",
              Cores(loaders, width), pid);
  }
  std::vector<double> waiting(bins, 0.0);
  auto add_waiting = [&](const TimeWindow& w) {
    for (int64_t k = std::max<int64_t>(0, (w.start_ns - s.origin_ns) / width);
         k < bins && s.origin_ns + k * width < w.end_ns; ++k) {
      int64_t bs = s.origin_ns + k * width, be = bs + width;
      int64_t overlap = std::min(be, w.end_ns) - std::max(bs, w.start_ns);
      if (overlap > 0) waiting[k] += static_cast<double>(overlap) / static_cast<double>(width);
    }
  };
  for (size_t n = 0; n < g.steps.size(); ++n) {
    // The time since the previous step, counted as waiting (step_waits.cc).
    const TimeWindow& gap = g.step_waits[n].gap;
    if (gap.end_ns > gap.start_ns) add_waiting(gap);
    out->waits_per_step.push_back(static_cast<uint32_t>(g.steps[n].data_waits.size()));
    for (const TimeWindow& w : g.steps[n].data_waits) {
      out->wait_times_s.push_back(Seconds(w.start_ns - s.origin_ns));
      out->wait_times_s.push_back(Seconds(w.end_ns - s.origin_ns));
      add_waiting(w);
    }
  }
  if (!g.steps.empty()) {
    AddSeries(out, absl::StrCat("trainer ", pid, " waiting for data"), "wait", "share", waiting,
              pid);
  }
}

void BuildTimeline(RunState& s, int bins, report::Report* r) {
  report::Timeline* t = r->mutable_timeline();
  const Grid grid = GridOf(s, bins);
  const int64_t width = grid.width;
  bins = grid.bins;
  t->set_start_s(0);
  t->set_bin_width_s(Seconds(width));
  t->set_bins(bins);
  for (int i = 0; i < kLayerCount; ++i) {
    if (s.layers[i].reads == 0) continue;
    std::vector<double> v = s.layer_read_bytes[i].Resample(s.origin_ns, width, bins);
    AddSeries(t, absl::StrCat("read ", LayerName(static_cast<Layer>(i))), "layer", "bytes/s",
              PerSecond(v, width));
  }
  std::vector<double> busy(bins);
  for (int k = 0; k < bins; ++k) {
    int64_t start = s.origin_ns + k * width;
    busy[k] = static_cast<double>(s.all_io->Count(start, start + width)) / static_cast<double>(width);
  }
  AddSeries(t, "I/O busy (any process)", "io", "share", busy);
  int first_step = 0;
  for (const auto& [index, g] : s.groups) {
    GroupResult& res = s.results.at(index);
    for (report::Series& series : res.series) *t->add_series() = std::move(series);
    res.series.clear();
    AddStepSpans(res, s.catalog.entries[index].header.pid(), r->steps(), first_step, t);
    first_step += static_cast<int>(res.waits_per_step.size());
  }
  if (s.layers[static_cast<int>(Layer::kCuda)].ops > 0) {
    std::vector<double> v =
        s.layer_read_bytes[static_cast<int>(Layer::kCuda)].Resample(s.origin_ns, width, bins);
    AddSeries(t, "CUDA copies", "cuda", "bytes/s", PerSecond(v, width));
  }
}

}  // namespace iotap::analyzer::run_state
