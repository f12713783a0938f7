// Each trainer group's part of the report, from the group's state alone
// (AnalyzeGroups, run_state.h): the stages of group_steps.cc, step_waits.cc,
// timeline.cc, tables.cc and py_profile_report.cc in the order their
// run-wide halves need them, then the group's state freed; groups side by
// side on a pool of threads.

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "analyzer/analysis/run_state.h"
#include "analyzer/analysis/time_range.h"

namespace iotap::analyzer::run_state {

namespace {

// Frees what `x` holds (a cleared vector keeps its memory).
template <typename T>
void Free(T& x) {
  x = T();
}

// What reading left in group `index` and its processes, which its result
// now stands for. The summary flags of the Python samples stay: the run's
// notes name processes that could not be sampled (AddSamplingNotes).
void Release(RunState& s, int index, TrainerGroup& g) {
  for (std::unique_ptr<TimeBitmap>* b : {&g.io, &g.writes, &g.own_io}) b->reset();
  for (std::unique_ptr<AdaptiveSeries>* series :
       {&g.read_bytes, &g.read_calls, &g.read_ns, &g.trainer_cpu}) {
    series->reset();
  }
  Free(g.loader_cpu);
  Free(g.loader_run_queue);
  Free(g.steps);
  Free(g.waits);
  Free(g.loader_channels);
  Free(g.step_waits);
  Free(g.inferred);
  Free(g.cuda_copies);
  Free(g.epochs);
  Free(s.marker_steps[index]);
  std::vector<int> members = g.loaders;
  members.push_back(index);
  for (int m : members) {
    if (static_cast<size_t>(m) >= s.py_samples.size()) continue;
    PySamples& p = s.py_samples[m];
    Free(p.functions);
    Free(p.stacks);
    Free(p.samples);
  }
}

}  // namespace

void AnalyzeGroups(RunState& s, const std::vector<int>& groups, int timeline_bins, int threads) {
  if (groups.empty()) return;
  const StepLogSpans logs = AssignStepLogs(s);
  // Groups share nothing but what the analysis only reads (the catalog, the
  // step logs, the clocks) and the run's busy time, under its lock; their
  // results are made here, so that the threads only look them up.
  for (int index : groups) s.results[index];
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t k = next++; k < groups.size(); k = next++) {
      const int index = groups[k];
      TrainerGroup& g = s.groups.at(index);
      GroupResult& out = s.results.at(index);
      CollectSteps(s, index, g, logs, &out);
      const bool warmup = KeepStepsInRange(&g.steps, s.range_start_ns, s.range_end_ns);
      InferWaits(g, &out.waits);
      ComputeSteps(s, g, warmup, &out);
      ComputeTimeline(s, index, g, timeline_bins, &out);
      ComputeCudaInSteps(g, &out);
      ComputePyProfile(s, g, &out);
      {
        std::lock_guard<std::mutex> lock(s.all_io_mu);
        s.all_io->Or(*g.io);
      }
      Release(s, index, g);
    }
  };
  threads = std::max(1, std::min<int>(threads, static_cast<int>(groups.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace iotap::analyzer::run_state
