// Whether the run's clocks can be trusted across processes and hosts.
//
// Every process's events are placed on one wall-clock timeline from its own
// clock pair (monotonic and wall clock read together at its start). Within a
// host that is exact unless someone set the wall clock during the run; across
// hosts it is as good as their clock synchronisation. Two checks:
// - a wall-clock step: between a process's start and its last clock snapshot
//   the wall clock moved against the monotonic clock (NTP slews both alike,
//   so only a step does that);
// - host skew: ranks of a synchronous job (DDP, Horovod: every step ends
//   with an all-reduce) end each step within a few milliseconds of each
//   other. For each host, the median gap between its first rank's step ends
//   and the first host's is the skew of its clock, when that gap is both
//   large and steady across steps.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <vector>

#include "absl/strings/str_format.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer::internal {

namespace {

// Smaller steps of the wall clock, and smaller skews, do not matter at the
// resolution of a data-loading report.
constexpr int64_t kWallClockStepNs = 10'000'000;
constexpr double kMinSkewS = 0.005;
// A skew counts when it is this many times the spread of the gaps.
constexpr double kSkewOverSpread = 3;
constexpr int kMinCommonSteps = 5;

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

void HostSkew(report::Report* r) {
  // Each ranked trainer's host, and its step ends by step number.
  std::map<int, std::string> host_of_rank;
  for (const report::Process& p : r->processes()) {
    if (p.role() == report::TRAINER && p.rank() >= 0) host_of_rank[p.rank()] = p.host();
  }
  std::map<int, std::map<double, double>> ends;  // rank -> step -> end_s
  for (const report::Step& st : r->steps()) {
    if (host_of_rank.count(st.rank())) ends[st.rank()][st.step()] = st.end_s();
  }
  // The lowest rank with steps on each host; the first host is the reference.
  std::map<std::string, int> first_rank;
  for (const auto& [rank, steps] : ends) {
    const std::string& host = host_of_rank[rank];
    if (!first_rank.count(host) || rank < first_rank[host]) first_rank[host] = rank;
  }
  if (first_rank.size() < 2) return;
  int ref_rank = ends.begin()->first;
  const std::string ref_host = host_of_rank[ref_rank];
  for (const auto& [host, rank] : first_rank) {
    if (host == ref_host) continue;
    std::vector<double> gaps;
    for (const auto& [step, end] : ends[rank]) {
      auto it = ends[ref_rank].find(step);
      if (it != ends[ref_rank].end()) gaps.push_back(end - it->second);
    }
    if (static_cast<int>(gaps.size()) < kMinCommonSteps) continue;
    double skew = Median(gaps);
    std::vector<double> deviations;
    for (double g : gaps) deviations.push_back(std::fabs(g - skew));
    double spread = Median(deviations);
    report::HostClock* c = r->mutable_run()->add_host_clocks();
    c->set_host(ValidUtf8(host));
    c->set_reference_host(ValidUtf8(ref_host));
    c->set_offset_s(skew);
    c->set_spread_s(spread);
    c->set_steps(static_cast<double>(gaps.size()));
    if (std::fabs(skew) < kMinSkewS || std::fabs(skew) < kSkewOverSpread * spread) continue;
    report::Note* n = r->add_notes();
    n->set_level(report::Note::WARNING);
    n->set_message(ValidUtf8(absl::StrFormat(
        "the clock of %s seems %s %s's by %s: rank %d ended the same %d steps as rank %d a "
        "median %s %s (give or take %s), where synchronous ranks end together; times across "
        "the two hosts are off by about that much (check NTP or PTP on them)",
        host, skew > 0 ? "ahead of" : "behind", ref_host, HumanDuration(std::fabs(skew)), rank,
        static_cast<int>(gaps.size()), ref_rank, HumanDuration(std::fabs(skew)),
        skew > 0 ? "later" : "earlier", HumanDuration(spread))));
  }
}

}  // namespace

void CheckClocks(const RunState& s, report::Report* r) {
  WallClockSteps(s, r);
  HostSkew(r);
}

}  // namespace iotap::analyzer::internal
