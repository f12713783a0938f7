// The run's clocks: hosts put on one clock, and what the report says about
// how far the clocks can be trusted.
//
// Every process's events are placed on one wall-clock timeline from its own
// clock pairs (monotonic and wall clock read together). Within a host that
// is exact unless someone set the wall clock during the run; across hosts it
// is as good as their clock synchronisation, so:
// - AlignClocks fits each host's clock against the reference host's from the
//   step ends of synchronous ranks (clock_alignment.h), right after the
//   catalog, and corrects the catalog's times; the same corrections go to
//   every trace the analysis reads, so every figure is on one clock;
// - CheckClocks reports each host's fit (run.host_clocks and a note each)
//   and wall-clock steps: between a process's start and its last clock
//   snapshot the wall clock moved against the monotonic clock (NTP slews
//   both alike, so only a step does that).

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer::run_state {

namespace {

// Smaller steps of the wall clock do not matter at the resolution of a
// data-loading report; a host's clock this far off deserves a warning even
// when corrected (other tools will not correct it).
constexpr int64_t kWallClockStepNs = 10'000'000;
constexpr double kMinSkewS = 0.005;

void WallClockSteps(const RunState& s, report::Report* r) {
  // One note per host: its largest step.
  std::map<std::string, const CatalogEntry*> worst;
  for (const CatalogEntry& e : s.catalog.entries) {
    if (std::llabs(e.wall_clock_step_ns) < kWallClockStepNs) continue;
    const CatalogEntry*& w = worst[e.header.hostname()];
    if (w == nullptr || std::llabs(e.wall_clock_step_ns) > std::llabs(w->wall_clock_step_ns)) w = &e;
  }
  for (const auto& [host, e] : worst) {
    report::Note* n = r->add_notes();
    n->set_level(report::Note::WARNING);
    n->set_message(ValidUtf8(absl::StrFormat(
        "the wall clock of %s was set %s by %s while process %d ran (an NTP step or "
        "settimeofday); each process's own times are unaffected, but processes that started "
        "on either side of the step are misaligned by that much",
        host, e->wall_clock_step_ns > 0 ? "forward" : "back",
        HumanDuration(Seconds(std::fabs(static_cast<double>(e->wall_clock_step_ns)))),
        e->header.pid())));
  }
}

// "1 and 3", "1, 2 and 3".
std::string Ranks(const std::vector<int>& ranks) {
  if (ranks.size() <= 1) return ranks.empty() ? "" : absl::StrCat(ranks[0]);
  return absl::StrCat(absl::StrJoin(ranks.begin(), ranks.end() - 1, ", "), " and ", ranks.back());
}

// "50.0 ms ahead of node0's", "3.2 us behind node0's".
std::string Ahead(double offset_s, const std::string& reference) {
  return absl::StrCat(HumanDuration(std::fabs(offset_s)), offset_s >= 0 ? " ahead of " : " behind ",
                      reference, "'s");
}

// What the fit found, for a note: "50.0 ms ahead of node0's at the run's
// start, drifting +12.3 ppm (+-18.0 us, from 3600 step ends of its rank 1)".
std::string FitText(const HostClockFit& h, const report::HostClock& c) {
  std::string drift = h.fit.drift_fitted ? absl::StrFormat(", drifting %+.2f ppm", c.drift_ppm())
                                         : "";
  std::string from =
      h.exchanges > 0
          ? absl::StrCat(h.exchanges, " time exchanges with ", h.exchanged_with,
                         "'s iotap run, fastest round trip ",
                         HumanDuration(Seconds(h.round_trip_ns)))
          : absl::StrCat(h.collectives > 0
                             ? absl::StrCat(h.steps, " step ends and ", h.collectives,
                                            " collective ends")
                             : absl::StrCat(h.fit.anchors, " step ends"),
                         " of its rank", h.ranks.size() > 1 ? "s " : " ", Ranks(h.ranks));
  return absl::StrCat(Ahead(c.offset_s(), c.reference_host()), " at the run's start", drift,
                      " (+-", HumanDuration(c.uncertainty_s()), ", from ", from, ")");
}

void HostClocks(const RunState& s, report::Report* r) {
  const RunClocks& clocks = s.clocks;
  for (const std::string& problem : clocks.problems) {
    report::Note* n = r->add_notes();
    n->set_level(report::Note::WARNING);
    n->set_message(ValidUtf8(absl::StrCat("clock exchanges not used: ", problem)));
  }
  for (const HostClockFit& h : clocks.hosts) {
    report::HostClock* c = r->mutable_run()->add_host_clocks();
    c->set_host(ValidUtf8(h.host));
    c->set_reference_host(ValidUtf8(clocks.reference_host));
    c->set_steps(h.steps);
    for (int rank : h.ranks) c->add_ranks(rank);
    c->set_source(ValidUtf8(h.source.empty() ? clocks.source : h.source));
    c->set_corrected(h.corrected);
    c->set_not_corrected(ValidUtf8(h.why_not));
    const bool fitted = h.fit.anchors >= kMinClockAnchors;
    if (fitted) {
      // At the run's start on the host's clock: the origin is on the
      // reference clock, a correction's worth away, which moves the offset by
      // a drift's share of it (nanoseconds).
      c->set_offset_s(Seconds(h.fit.correction.OffsetAt(s.origin_ns)));
      // The fit's drift is per second of the host's clock; per second of
      // the reference's it is d / (1 - d), as the clocks' rates differ.
      const double d = h.fit.correction.drift;
      c->set_drift_ppm(d / (1 - d) * 1e6);
      c->set_spread_s(Seconds(h.fit.spread_ns));
      c->set_uncertainty_s(Seconds(h.fit.uncertainty_ns));
    }
    const std::string host = ValidUtf8(h.host), reference = ValidUtf8(clocks.reference_host);
    report::Note* n = r->add_notes();
    n->set_level(report::Note::INFO);
    if (h.corrected) {
      if (std::fabs(c->offset_s()) >= kMinSkewS) n->set_level(report::Note::WARNING);
      n->set_message(ValidUtf8(absl::StrCat(
          "the clock of ", host, " was ", FitText(h, *c), "; its times are put on ", reference,
          "'s clock", n->level() == report::Note::WARNING ? " (check NTP or PTP on the hosts)" : "")));
    } else if (fitted) {
      if (std::fabs(c->offset_s()) >= kMinSkewS) n->set_level(report::Note::WARNING);
      n->set_message(ValidUtf8(absl::StrCat(
          "the clock of ", host, " seems ", FitText(h, *c), "; not corrected: ", h.why_not,
          n->level() == report::Note::WARNING
              ? "; times across the hosts are off by about that much"
              : "")));
    } else {
      n->set_message(ValidUtf8(absl::StrCat(
          "the clock of ", host, " is not corrected: ", h.why_not,
          "; its times are as its clock gave them")));
    }
  }
}

}  // namespace

void AlignClocks(const AnalysisOptions& options, RunState& s) {
  if (s.catalog.hosts.size() < 2) return;
  if (options.clocks != nullptr) {
    s.clocks = *options.clocks;
  } else {
    std::vector<StepLog> logs;
    for (const auto& [path, log] : s.step_logs) {
      if (log.ok()) logs.push_back(*log);
    }
    s.clocks = FitRunClocks(s.catalog, logs, options.threads);
  }
  if (!options.correct_clocks) DropClockCorrections("turned off (--no-clock-correction)", &s.clocks);
  CorrectCatalogClocks(s.clocks.corrections, &s.catalog);
}

void CheckClocks(const RunState& s, report::Report* r) {
  WallClockSteps(s, r);
  HostClocks(s, r);
}

}  // namespace iotap::analyzer::run_state
