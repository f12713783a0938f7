// Part of a run: the report's analysis restricted to a time range
// (`iotap report --from S --to S`, and each window of `iotap top`).
//
// The same analysis as over the whole run, fed only what belongs to the
// range, with one rule for every figure:
// - an event (an I/O call, a CUDA copy, a TFRecord record) belongs to the
//   range its end lies in, so consecutive ranges count each event once; a
//   call that began before the range counts from the range's start (its
//   busy time and call time are the part inside the range);
// - a step belongs to the range its end lies in, clipped the same way (its
//   duration and data waits are the parts inside the range); the run's first
//   step is left out of the statistics only where the range holds it;
// - CPU samples and step markers are read whole (they say what happened when,
//   and are measured over the steps and waits kept);
// - the run's duration is the range's part of the run.
//
//   AnalysisOptions options;
//   options.range = TimeRange{.from_ns = 60'000'000'000, .to_ns = 70'000'000'000};
//   absl::StatusOr<report::Report> r = AnalyzeRun("run/", options);
//   // r->run().range_from_s() == 60, r->run().range_to_s() == 70; duration_s()
//   // is 10 for a run longer than 70 s

#ifndef IOTAP_ANALYZER_ANALYSIS_TIME_RANGE_H_
#define IOTAP_ANALYZER_ANALYSIS_TIME_RANGE_H_

#include <cstdint>
#include <vector>

#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

// [from_ns, to_ns) in ns from the run's start; the default is the whole run.
struct TimeRange {
  int64_t from_ns = 0;
  int64_t to_ns = INT64_MAX;

  bool whole() const { return from_ns <= 0 && to_ns == INT64_MAX; }
};

// Passes to `inner` what of a trace belongs to [start_unix_ns, end_unix_ns)
// (wall clock): events that end in it, starts clipped to it, and step
// markers whatever their time; every other callback as it comes.
class RangeFilter : public TraceVisitor {
 public:
  RangeFilter(TraceVisitor* inner, int64_t start_unix_ns, int64_t end_unix_ns)
      : inner_(inner), start_(start_unix_ns), end_(end_unix_ns) {}

  void OnProcess(const ProcessTrace& process) override { inner_->OnProcess(process); }
  void OnEvents(const ProcessTrace& process, const EventBatch& batch) override;
  void OnPacket(const ProcessTrace& process, const Packet& packet) override {
    inner_->OnPacket(process, packet);
  }
  void OnFileEnd(const ProcessTrace& process) override { inner_->OnFileEnd(process); }
  bool Satisfied() const override { return inner_->Satisfied(); }

 private:
  TraceVisitor* inner_;
  int64_t start_;
  int64_t end_;
  EventBatch kept_;
};

// Keeps the steps that end in [start_unix_ns, end_unix_ns), clipped to start
// there (their data waits too). `steps` is in time order; returns whether
// the first of them (the run's warm-up step) is among those kept.
bool KeepStepsInRange(std::vector<StepSpan>* steps, int64_t start_unix_ns, int64_t end_unix_ns);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_TIME_RANGE_H_
