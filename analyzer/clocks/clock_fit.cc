#include "analyzer/clocks/clock_fit.h"

#include <algorithm>
#include <cmath>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

namespace {

// The standard deviation of normal noise whose median absolute deviation is 1.
constexpr double kSigmaPerMad = 1.4826;
// A median's standard error over a mean's, for normal noise: sqrt(pi / 2).
constexpr double kMedianEfficiency = 1.2533;
// Two clusters (Middle): a gap in the central half of the levels this many
// times their median spacing there (for normal noise the widest of k
// spacings is about 1.44 ln(k) of them: 11 for 3600 anchors), over at least
// this many spacings.
constexpr double kGapOverSpacing = 30;
constexpr size_t kMinGapSpacings = 6;
// Residuals beyond this many robust standard deviations count as this many
// in Inflation's correlation (an outlier is no spell).
constexpr double kClipSigmas = 3;
// Inflation counts at least this many independent anchors.
constexpr double kMinIndependent = 4;

// Median |y - (offset + slope * x)|.
double Spread(const std::vector<double>& x, const std::vector<double>& y, double offset,
              double slope) {
  std::vector<double> d(x.size());
  for (size_t i = 0; i < x.size(); ++i) d[i] = std::fabs(y[i] - offset - slope * x[i]);
  return Median(std::move(d));
}

// The middle of the anchors' levels (offsets with the drift taken out).
// Usually their median. But an all-reduce ends later on the rank that
// arrived first: the last to arrive has everything when its data is sent,
// the other one a message's delay later. When each host is sometimes the
// last, the differences form two clusters, the offset plus or minus that
// delay, with a gap between them that no noise explains; the offset is then
// the gap's middle (NTP's reasoning for paths as fast both ways).
double Middle(std::vector<double> level) {
  std::sort(level.begin(), level.end());
  const size_t n = level.size(), lo = n / 4, hi = n - 1 - n / 4;
  double median = Median(level);
  if (hi < lo + kMinGapSpacings) return median;
  std::vector<double> spacings;
  size_t widest = lo;
  for (size_t k = lo; k < hi; ++k) {
    spacings.push_back(level[k + 1] - level[k]);
    if (spacings.back() > level[widest + 1] - level[widest]) widest = k;
  }
  const double gap = level[widest + 1] - level[widest];
  const double typical = std::max(1.0, Median(std::move(spacings)));
  if (gap < kGapOverSpacing * typical) return median;
  return level[widest] + gap / 2;
}

// How much larger the line's standard errors are than independent noise
// would make them, times t(0.975) / 2 for the anchors' worth. Noise that
// comes in spells (a rank slow for a stretch of steps, a host busy for a
// second) is correlated from one anchor to the next: with lag-1 correlation
// rho, n anchors are worth n (1 - rho) / (1 + rho) independent ones (the AR(1)
// effective sample size), and a spell can pass for a drift. The correlation
// is of the residuals in time order, each clipped at kClipSigmas; t from its
// Cornish-Fisher expansion (within 10% of the table from 2 degrees of
// freedom up). 1 for independent noise and many anchors.
double Inflation(const std::vector<double>& x, const std::vector<double>& y, double offset,
                 double slope, double sigma) {
  const size_t n = x.size();
  if (n < 3 || sigma <= 0) return 1;
  std::vector<double> r(n);
  double mean = 0;
  for (size_t i = 0; i < n; ++i) {
    r[i] = std::clamp(y[i] - offset - slope * x[i], -kClipSigmas * sigma, kClipSigmas * sigma);
    mean += r[i];
  }
  mean /= static_cast<double>(n);
  double lagged = 0, squares = 0;
  for (size_t i = 0; i < n; ++i) {
    squares += (r[i] - mean) * (r[i] - mean);
    if (i + 1 < n) lagged += (r[i] - mean) * (r[i + 1] - mean);
  }
  const double rho = squares > 0 ? std::clamp(lagged / squares, 0.0, 0.99) : 0;
  const double independent = std::max(
      std::min(kMinIndependent, static_cast<double>(n)),
      static_cast<double>(n) * (1 - rho) / (1 + rho));
  const double dof = std::max(1.0, independent - 2);
  constexpr double z = 1.959964;
  const double t = z + (z * z * z + z) / (4 * dof) +
                   (5 * std::pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * dof * dof);
  return std::sqrt(static_cast<double>(n) / independent) * std::max(1.0, t / z);
}

// See `wander` in clock_fit.h; 0 for fewer than 4 x kWanderLag anchors.
double Wander(const std::vector<double>& x, const std::vector<double>& y, double offset,
              double slope) {
  const size_t n = x.size(), lag = kWanderLag;
  if (n < 4 * lag) return 0;
  std::vector<double> r(n);
  for (size_t i = 0; i < n; ++i) r[i] = y[i] - offset - slope * x[i];
  double near = 0, far = 0;
  for (size_t i = 0; i + 1 < n; ++i) near += std::fabs(r[i + 1] - r[i]);
  for (size_t i = 0; i + lag < n; ++i) far += std::fabs(r[i + lag] - r[i]);
  near /= static_cast<double>(n - 1);
  far /= static_cast<double>(n - lag);
  if (near <= 0) return far > 0 ? INFINITY : 1;
  return far / near;
}

}  // namespace

ClockFit FitClockLine(std::vector<ClockAnchor> anchors, int64_t from_ns, int64_t to_ns,
                      int64_t min_drift_span_ns) {
  ClockFit fit;
  fit.anchors = static_cast<int>(anchors.size());
  if (fit.anchors < kMinClockAnchors) return fit;
  std::sort(anchors.begin(), anchors.end(), [](const ClockAnchor& a, const ClockAnchor& b) {
    return a.host_ns < b.host_ns;
  });
  const size_t n = anchors.size();
  // Times relative to the anchors' mean time, where the line's offset is
  // best known.
  const int64_t first = anchors.front().host_ns;
  double mean = 0;
  for (const ClockAnchor& a : anchors) mean += static_cast<double>(a.host_ns - first);
  const int64_t at = first + std::llround(mean / static_cast<double>(n));
  std::vector<double> x(n), y(n);
  double sxx = 0;
  for (size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(anchors[i].host_ns - at);
    y[i] = static_cast<double>(anchors[i].offset_ns);
    sxx += x[i] * x[i];
  }

  const size_t half = n / 2;
  std::vector<double> slopes;
  for (size_t i = 0; i + half < n; ++i) {
    if (x[i + half] > x[i]) slopes.push_back((y[i + half] - y[i]) / (x[i + half] - x[i]));
  }
  double slope = slopes.empty() ? 0 : Median(std::move(slopes));
  auto offset_for = [&](double s) {
    std::vector<double> level(n);
    for (size_t i = 0; i < n; ++i) level[i] = y[i] - s * x[i];
    return Middle(std::move(level));
  };
  double offset = offset_for(slope);
  double spread = Spread(x, y, offset, slope);
  // The line's standard errors, from the anchors' robust scale and how
  // correlated their noise is (Inflation), about the line (offset, slope).
  double offset_error = 0, slope_error = 0;
  auto errors = [&](double offset, double slope, double spread) {
    const double sigma = kMedianEfficiency * kSigmaPerMad * spread *
                         Inflation(x, y, offset, slope, kSigmaPerMad * spread);
    offset_error = sigma / std::sqrt(static_cast<double>(n));
    slope_error = sxx > 0 ? sigma / std::sqrt(sxx) : INFINITY;
  };
  errors(offset, slope, spread);
  const bool long_enough = anchors.back().host_ns - anchors.front().host_ns >= min_drift_span_ns;
  fit.drift_fitted = long_enough && sxx > 0 && std::fabs(slope) <= kMaxClockDrift &&
                     std::fabs(slope) > 2 * slope_error;
  // A slope over too short a span may be the anchors' own trend or a drift:
  // neither is corrected, the noise is what is left about that slope, and
  // the uncertainty allows for the whole of it.
  double unexplained = 0;
  double wander_slope = slope;
  if (!fit.drift_fitted) {
    if (long_enough) {
      wander_slope = 0;
    } else {
      unexplained = std::fabs(slope);
    }
    slope = 0;
    offset = offset_for(0);
    spread = Spread(x, y, offset, 0);
    if (long_enough) errors(offset, 0, spread);
    if (sxx <= 0) slope_error = 0;
  }
  fit.correction = ClockCorrection{at, offset, slope};
  fit.spread_ns = spread;
  fit.wander = Wander(x, y, offset, wander_slope);
  // A drift too small to measure is still there: the offset's error grows
  // with the distance from the anchors' middle, at the rate the anchors
  // cannot rule out (at most a real clock's).
  if (!fit.drift_fitted) slope_error = std::min(slope_error + unexplained, kMaxClockDrift);
  double worst = 0;
  for (int64_t t : {from_ns, to_ns, at}) {
    double far = static_cast<double>(t - at) * slope_error;
    worst = std::max(worst, 2 * std::sqrt(offset_error * offset_error + far * far));
  }
  fit.uncertainty_ns = worst;
  return fit;
}

}  // namespace iotap::analyzer
