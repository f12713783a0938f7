// A robust line through clock offsets: how far one host's clock is from
// another's, and how that changes, from moments both saw.
//
// Each anchor is one moment read on both clocks (a synchronous step's end on
// a rank of each host, an exchange of time stamps). Their differences are the
// offset plus noise: either side may be late (a rank descheduled after the
// all-reduce, a slow optimizer step), so the noise is about symmetric, with
// outliers, rather than one-sided as NTP's round trips are. So the fit is a
// median line:
// - drift: the median of the slopes between anchor i and anchor i + n/2
//   (time order), a Theil-Sen estimate over the pairs that are far apart, in
//   O(n log n); kept only when it differs from 0 by more than twice its
//   standard error and is one a clock can have (at most 500 ppm, NTP's limit);
// - offset: the median of what the anchors say once the drift is taken out,
//   or, when they form two clusters with a gap no noise explains (each host
//   sometimes the last into the all-reduce, the other one then ending a
//   message's delay later), the middle of that gap;
// - spread: the median absolute deviation of the anchors from the line;
// - uncertainty: about two standard errors of the line (95%), at the worst
//   point of [from_ns, to_ns], from the anchors' robust scale
//   (1.4826 x spread, times 1.2533 for medians in place of means), the
//   standard errors grown for noise correlated from one anchor to the next
//   (spells of late ranks: fewer independent anchors, Student's t for
//   them), which is also what the drift must stand out from; a slope the
//   anchors show but that is not kept as a drift (too short a span, see
//   FitClockLine) counts in full;
// - wander: whether the anchors are moments both saw at all. A synchronous
//   job's differences scatter about the line the same way whatever the
//   distance between two steps; ranks that run on their own (no collective
//   ends their steps) drift apart like a random walk, so differences L steps
//   apart grow like sqrt(L) times those of neighbours. `wander` is the mean
//   |r(i + L) - r(i)| over the mean |r(i + 1) - r(i)| of the residuals r in
//   time order, L = kWanderLag (about 1 for scatter, 5 for a walk).
//
//   std::vector<ClockAnchor> anchors = {{host_ns, host_ns - reference_ns}, ...};
//   ClockFit fit = FitClockLine(anchors, run_start_ns, run_end_ns);
//   if (fit.anchors >= kMinClockAnchors) {
//     int64_t on_reference = fit.correction.Apply(host_ns);
//   }

#ifndef IOTAP_ANALYZER_CLOCKS_CLOCK_FIT_H_
#define IOTAP_ANALYZER_CLOCKS_CLOCK_FIT_H_

#include <cstdint>
#include <vector>

#include "analyzer/read/clock_correction.h"

namespace iotap::analyzer {

// Fewer anchors than this fit nothing.
inline constexpr int kMinClockAnchors = 5;
// The largest drift a working clock has (NTP refuses to slew faster).
inline constexpr double kMaxClockDrift = 500e-6;
// The lag of the wander test (above), which needs 4 x kWanderLag anchors.
inline constexpr int kWanderLag = 25;
// Residuals wander more than this: the anchors are no common moments.
inline constexpr double kMaxClockWander = 2.5;
// Step ends fit a drift only over at least this long. Ranks fall in and out
// of step for reasons of their own (warm-up, a busy host), and the trend
// that leaves in their step ends over a few seconds, a millisecond or so
// (0.2 and 0.7 ms over 2 s in two DDP runs here), is as steep as a drift of
// hundreds of ppm; over half a minute it is tens of ppm at most.
inline constexpr int64_t kMinStepDriftSpanNs = 30'000'000'000;

struct ClockAnchor {
  int64_t host_ns = 0;    // the moment on the host's clock
  int64_t offset_ns = 0;  // the host's reading minus the reference's
};

struct ClockFit {
  int anchors = 0;             // anchors used (all of them)
  ClockCorrection correction;  // at_ns: the anchors' middle
  bool drift_fitted = false;   // false: the drift was set to 0 (see above)
  double spread_ns = 0;        // median |anchor - line|
  double uncertainty_ns = 0;   // worst over [from_ns, to_ns]
  double wander = 0;           // 0: too few anchors to tell
};

// Fits `anchors` (any order). With fewer than kMinClockAnchors, returns a fit
// with `anchors` set and nothing else. Anchors that span less than
// `min_drift_span_ns` fit no drift: the slope they show is left in the
// uncertainty instead (up to kMaxClockDrift).
ClockFit FitClockLine(std::vector<ClockAnchor> anchors, int64_t from_ns, int64_t to_ns,
                      int64_t min_drift_span_ns = 0);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_CLOCKS_CLOCK_FIT_H_
