#include "analyzer/steps/marker_steps.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "analyzer/steps/span_building.h"

namespace iotap::analyzer {

namespace {

struct Extent {
  int64_t step = 0;
  TimeWindow time;  // CLOCK_MONOTONIC
};

template <typename Marker>
std::vector<Extent> ExplicitSteps(const std::vector<Marker>& markers,
                                  std::vector<std::string>* notes) {
  std::vector<Extent> steps;
  std::map<int64_t, int64_t> open;  // step -> begin time
  int64_t ends_alone = 0, begun_twice = 0;
  for (const Marker& m : markers) {
    if (m.op == OP_STEP_BEGIN) {
      auto [it, added] = open.emplace(m.step, m.start_ns);
      if (!added) {
        ++begun_twice;
        it->second = m.start_ns;
      }
    } else if (m.op == OP_STEP_END) {
      auto it = open.find(m.step);
      if (it == open.end()) {
        ++ends_alone;
        continue;
      }
      steps.push_back({m.step, {it->second, m.start_ns}});
      open.erase(it);
    }
  }
  notes->push_back(
      "steps from iotap_step_begin/iotap_step_end markers: a step spans from its begin marker "
      "to the end marker with its number");
  if (!open.empty()) {
    notes->push_back(absl::StrCat(open.size(),
                                  " steps began but never ended (the process ended first?) "
                                  "and are left out, the first step ",
                                  open.begin()->first));
  }
  if (ends_alone > 0) {
    notes->push_back(absl::StrCat(ends_alone, " end markers without a begin are left out"));
  }
  if (begun_twice > 0) {
    notes->push_back(absl::StrCat(begun_twice,
                                  " steps began again before they ended; the later begin "
                                  "counts"));
  }
  return steps;
}

template <typename Marker>
std::vector<Extent> OptimizerSteps(const std::vector<Marker>& markers,
                                   std::vector<std::string>* notes) {
  std::vector<Extent> steps;  // time = (start of its first event, end of its last optimizer step)
  for (const Marker& m : markers) {
    if (m.op != OP_OPTIMIZER_STEP) continue;
    if (!steps.empty() && steps.back().step == m.step) {
      steps.back().time.end_ns = std::max(steps.back().time.end_ns, m.end_ns);
    } else {
      steps.push_back({m.step, {m.start_ns, m.end_ns}});
    }
  }
  if (steps.empty()) return steps;
  // The first step begins with its first event, a data wait as a rule.
  for (const Marker& m : markers) {
    if (m.step == steps[0].step && (m.op == OP_DATA_WAIT || m.op == OP_OPTIMIZER_STEP)) {
      steps[0].time.start_ns = std::min(steps[0].time.start_ns, m.start_ns);
      break;
    }
  }
  for (size_t i = 1; i < steps.size(); ++i) steps[i].time.start_ns = steps[i - 1].time.end_ns;
  notes->push_back(
      "steps from the optimizer steps the iotap Python helper recorded: a step spans from the "
      "end of the previous step's optimizer step to the end of its own (the first from its "
      "first data wait); work between epochs (evaluation, checkpoints) falls into the next "
      "epoch's first step");
  return steps;
}

// Without optimizer steps (an evaluation or inference loop, an update by
// hand), each iteration of the loader is a step: from one batch request (its
// data wait's start) to the next, or to the next "epoch" mark (a new
// iteration of the loader) if that comes first. The last request of the run
// has no end and gives no step. Steps are numbered in order from 0.
template <typename Marker>
std::vector<Extent> LoaderIterationSteps(const std::vector<Marker>& markers,
                                         std::vector<int64_t> epochs,
                                         std::vector<std::string>* notes) {
  std::vector<TimeWindow> waits;
  for (const Marker& m : markers) {
    if (m.op == OP_DATA_WAIT) waits.push_back({m.start_ns, m.end_ns});
  }
  std::sort(epochs.begin(), epochs.end());
  std::vector<Extent> steps;
  for (size_t k = 0; k + 1 < waits.size(); ++k) {
    int64_t end = waits[k + 1].start_ns;
    auto epoch = std::upper_bound(epochs.begin(), epochs.end(), waits[k].end_ns);
    if (epoch != epochs.end() && *epoch < end) end = *epoch;
    steps.push_back({static_cast<int64_t>(steps.size()), {waits[k].start_ns, end}});
  }
  if (steps.empty()) return steps;
  notes->push_back(
      "no optimizer step was recorded (an evaluation or inference loop, or weights updated by "
      "hand): each iteration of the DataLoader is a step, from one batch request to the next "
      "(the wait for the batch, then the work on it); the run's last batch has no step");
  return steps;
}

}  // namespace

void MarkerCollector::OnProcess(const ProcessTrace& process) {
  if (process.path() == path_) return;
  path_ = process.path();
  markers_.clear();
  marks_.clear();
}

void MarkerCollector::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  if (process.path() != path_) OnProcess(process);
  for (const Event& e : batch.events) {
    if (e.op < OP_STEP_BEGIN || e.op > OP_OPTIMIZER_STEP) continue;
    if (e.op == OP_MARK) {
      // Resolved now: the shim may reuse ids after it resets its string table.
      marks_.push_back({std::string(process.Text(e.file)), e.start_ns});
    } else {
      markers_.push_back({e.op, e.start_ns, e.end_ns, static_cast<int64_t>(e.aux)});
    }
  }
}

void MarkerCollector::OnFileEnd(const ProcessTrace& process) {
  if (process.path() != path_) OnProcess(process);
  path_.clear();
  if (markers_.empty() && marks_.empty()) return;
  StepLog log;
  log.source = StepSource::kMarkers;
  log.path = absl::StrCat("markers of pid ", process.pid(), " in ", process.path());
  const int rank = process.header().rank();
  // Threads deliver their chunks one after another; put markers in time order.
  std::stable_sort(markers_.begin(), markers_.end(),
                   [](const Marker& a, const Marker& b) { return a.start_ns < b.start_ns; });
  std::vector<TimeWindow> waits;
  bool explicit_steps = false;
  for (const Marker& m : markers_) {
    if (m.op == OP_DATA_WAIT) waits.push_back({m.start_ns, m.end_ns});
    explicit_steps = explicit_steps || m.op == OP_STEP_BEGIN || m.op == OP_STEP_END;
  }
  std::vector<Extent> steps =
      explicit_steps ? ExplicitSteps(markers_, &log.notes) : OptimizerSteps(markers_, &log.notes);
  bool loader_iterations = false;  // the last wait begins no step: not "outside"
  if (steps.empty() && !explicit_steps && !waits.empty()) {
    std::vector<int64_t> epochs;
    for (const Mark& m : marks_) {
      if (m.name == "epoch") epochs.push_back(m.time_ns);
    }
    steps = LoaderIterationSteps(markers_, std::move(epochs), &log.notes);
    loader_iterations = !steps.empty();
    if (loader_iterations) log.step_definition = log.notes.back();
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Extent& a, const Extent& b) {
    return a.time.start_ns < b.time.start_ns;
  });
  size_t cursor = 0;
  std::vector<TimeWindow> extents;
  for (const Extent& e : steps) {
    StepSpan span;
    span.step = e.step;
    span.rank = rank;
    span.pid = process.pid();
    span.start_ns = e.time.start_ns;
    span.end_ns = e.time.end_ns;
    span.has_data_wait = !waits.empty();
    internal::AddWaitsInside(waits, &cursor, &span);
    // Each boundary is converted on its own, so that a step starts exactly
    // where the one before it ended; the waits move with the step's start
    // and stay inside it.
    const int64_t offset = process.ToRealtimeNs(span.start_ns) - span.start_ns;
    span.start_ns += offset;
    span.end_ns = std::max(span.start_ns, process.ToRealtimeNs(span.end_ns));
    for (TimeWindow& w : span.data_waits) {
      w.start_ns = std::min(w.start_ns + offset, span.end_ns);
      w.end_ns = std::min(w.end_ns + offset, span.end_ns);
    }
    log.spans.push_back(std::move(span));
    extents.push_back(e.time);
  }
  if (!waits.empty()) {
    if (steps.empty()) {
      log.notes.push_back(absl::StrCat(waits.size(),
                                       " data waits but no step markers, optimizer steps or "
                                       "second batch: no steps"));
    } else if (int64_t outside = internal::CountOutside(waits, extents);
               outside > 0 && !loader_iterations) {
      log.notes.push_back(absl::StrCat(outside, " of ", waits.size(),
                                       " data waits lie outside every step (after the last "
                                       "one, or between explicit steps)"));
    }
  }
  for (const Mark& m : marks_) {
    log.marks.push_back({m.name, process.ToRealtimeNs(m.time_ns), rank, process.pid()});
  }
  log.notes.push_back(
      "times are CLOCK_MONOTONIC readings placed on the wall clock through the process's "
      "clock snapshots");
  internal::SortStepLog(&log);
  logs_.push_back(std::move(log));
  markers_.clear();
  marks_.clear();
}

std::vector<StepLog> MarkerCollector::TakeLogs() { return std::exchange(logs_, {}); }

absl::StatusOr<StepLog> ReadMarkerSteps(const std::string& trace_path) {
  MarkerCollector collector;
  std::vector<ReadIssue> issues;
  if (absl::Status s = ReadTraceFile(trace_path, &collector, &issues); !s.ok()) return s;
  std::vector<StepLog> logs = collector.TakeLogs();
  StepLog log;
  if (logs.empty()) {
    log.source = StepSource::kMarkers;
    log.path = trace_path;
    log.notes.push_back(
        "the trace has no step markers (iotap_step_begin/end, iotap_span, iotap_mark): run the "
        "job with `iotap run --torch-steps` or call the markers");
  } else {
    log = std::move(logs[0]);
  }
  for (const ReadIssue& issue : issues) log.errors.push_back(issue.ToString());
  return internal::FinishStepLog(std::move(log));
}

}  // namespace iotap::analyzer
