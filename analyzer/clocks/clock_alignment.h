// Hosts on one clock: each host's clock offset and drift against a reference
// host's, fitted from moments every host saw, and the corrections the
// analysis applies before it computes any figure across hosts.
//
// The ranks of a synchronous job (DDP, FSDP, Horovod: every step ends with
// an all-reduce) end each step at the same moment, give or take what each
// does after the collective. So a step's end on two hosts is one moment read
// on two clocks: an anchor. So is the end of each collective that a profiler
// trace records (gloo's, NCCL's kernels), matched by step and order. The ends come from the step source the analysis
// uses: the step logs given (--steps) where their steps name ranks, else the
// markers in the ranked trainers' traces (read here, before the analysis
// reads every trace). Per host and step, the median end over the host's
// ranks; the reference host is the lowest rank's. Each other host's anchors
// (the steps both hosts ended) get a median line (clock_fit.h), which
// corrects the host's times if it rests on kMinClockAnchors anchors or more,
// the anchors do not wander apart as independent ranks' steps do (then the
// steps were not synchronous and say nothing of the clocks), and the offset
// it finds is larger than its uncertainty somewhere in the run (otherwise
// the clocks agree as far as the steps can tell, and a correction would only
// move the host by the fit's noise).
//
//   RunClocks clocks = FitRunClocks(catalog, step_logs, /*threads=*/2);
//   CorrectCatalogClocks(clocks.corrections, &catalog);
//   ReadTraceFile(path, &visitor, &issues, &clocks.corrections);
//   for (const HostClockFit& h : clocks.hosts) ... h.fit.correction, h.why_not ...

#ifndef IOTAP_ANALYZER_CLOCKS_CLOCK_ALIGNMENT_H_
#define IOTAP_ANALYZER_CLOCKS_CLOCK_ALIGNMENT_H_

#include <string>
#include <vector>

#include "analyzer/clocks/clock_fit.h"
#include "analyzer/read/clock_correction.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

struct HostClockFit {
  std::string host;
  std::vector<int> ranks;  // the host's ranks whose steps were compared
  int steps = 0;           // steps both hosts' ranks ended
  int collectives = 0;     // collectives both ended (profiler traces: CollectiveEnd)
  ClockFit fit;            // fit.anchors: those steps, or the exchanges picked
  // When the fit rests on time exchanges (clock_exchanges.h): how many, with
  // which instance, and the fastest round trip.
  int exchanges = 0;
  std::string exchanged_with;
  double round_trip_ns = 0;
  std::string source;      // as RunClocks::source, for this host
  bool corrected = false;
  std::string why_not;     // when not corrected: "only 3 steps in common with node0's ranks"
};

struct RunClocks {
  std::string reference_host;  // the lowest rank's host; else the exchanges' server
  std::string source;          // "the step ends of iotap markers", "the step ends in PATH"
  std::vector<HostClockFit> hosts;   // every host but the reference, by name
  HostClockCorrections corrections;  // the hosts corrected, by name
  std::vector<std::string> problems;  // exchange files that could not be read, and why
};

// Fits every host's clock against the reference host's (see above). Where
// `iotap run --clock-sync` left time exchanges beside the traces
// (clock_exchanges.h), a host with enough of them is fitted from those
// instead of the steps: they are moments both clocks read, a round trip
// apart, whatever the job does. A run on one host gets an empty RunClocks,
// and reads no file.
RunClocks FitRunClocks(const RunCatalog& catalog, const std::vector<StepLog>& step_logs,
                       int threads);

// Keeps the fits but corrects nothing, each host saying `why`.
void DropClockCorrections(const std::string& why, RunClocks* clocks);

// A step of a process on a corrected host, on the reference clock.
void CorrectStepSpan(const ClockCorrection& correction, StepSpan* span);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_CLOCKS_CLOCK_ALIGNMENT_H_
