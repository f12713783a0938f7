// The timeline: binned series for charts, and exact spans of steps and waits.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer::run_state {

namespace {

report::Series* AddSeries(report::Timeline* t, std::string name, std::string group,
                          std::string unit, std::vector<double> values, int pid = 0) {
  report::Series* s = t->add_series();
  s->set_name(std::move(name));
  s->set_group(std::move(group));
  s->set_unit(std::move(unit));
  s->set_pid(pid);
  for (double v : values) s->add_values(v);
  return s;
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

void BuildTimeline(RunState& s, int bins, report::Report* r) {
  report::Timeline* t = r->mutable_timeline();
  int64_t duration = std::max<int64_t>(1, s.end_ns - s.origin_ns);
  bins = std::max(1, bins);
  int64_t width = std::max<int64_t>(1, (duration + bins - 1) / bins);
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
  for (const auto& [index, g] : s.groups) {
    int pid = s.catalog.entries[index].header.pid();
    AddSeries(t, absl::StrCat("read by trainer ", pid, " and its loaders"), "process", "bytes/s",
              PerSecond(g.read_bytes->Resample(s.origin_ns, width, bins), width), pid);
    AddSeries(t, absl::StrCat("CPU of trainer ", pid), "cpu", "cores",
              Cores(g.trainer_cpu->Resample(s.origin_ns, width, bins), width), pid);
    if (!g.loader_cpu.empty()) {
      std::vector<double> loaders(bins, 0.0);
      for (const auto& [l, cpu] : g.loader_cpu) {
        std::vector<double> v = cpu.Resample(s.origin_ns, width, bins);
        for (int k = 0; k < bins; ++k) loaders[k] += v[k];
      }
      AddSeries(t, absl::StrCat("CPU of the loaders of ", pid), "cpu", "cores",
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
      const StepSpan& step = g.steps[n];
      // The time since the previous step, counted as waiting (step_waits.cc).
      const TimeWindow& gap = g.step_waits[n].gap;
      if (gap.end_ns > gap.start_ns) {
        report::Span* gs = t->add_spans();
        gs->set_kind("between_steps");
        gs->set_pid(pid);
        gs->set_rank(step.rank);
        gs->set_step(static_cast<double>(step.step));
        gs->set_start_s(Seconds(gap.start_ns - s.origin_ns));
        gs->set_end_s(Seconds(gap.end_ns - s.origin_ns));
        add_waiting(gap);
      }
      report::Span* span = t->add_spans();
      span->set_kind("step");
      span->set_pid(pid);
      span->set_rank(step.rank);
      span->set_step(static_cast<double>(step.step));
      span->set_start_s(Seconds(step.start_ns - s.origin_ns));
      span->set_end_s(Seconds(step.end_ns - s.origin_ns));
      for (const TimeWindow& w : step.data_waits) {
        report::Span* ws = t->add_spans();
        ws->set_kind(g.step_waits[n].inferred ? "inferred_wait" : "data_wait");
        ws->set_pid(pid);
        ws->set_rank(step.rank);
        ws->set_step(static_cast<double>(step.step));
        ws->set_start_s(Seconds(w.start_ns - s.origin_ns));
        ws->set_end_s(Seconds(w.end_ns - s.origin_ns));
        add_waiting(w);
      }
    }
    if (!g.steps.empty()) {
      AddSeries(t, absl::StrCat("trainer ", pid, " waiting for data"), "wait", "share", waiting,
                pid);
    }
  }
  if (s.layers[static_cast<int>(Layer::kCuda)].ops > 0) {
    std::vector<double> v =
        s.layer_read_bytes[static_cast<int>(Layer::kCuda)].Resample(s.origin_ns, width, bins);
    AddSeries(t, "CUDA copies", "cuda", "bytes/s", PerSecond(v, width));
  }
}

}  // namespace iotap::analyzer::run_state
