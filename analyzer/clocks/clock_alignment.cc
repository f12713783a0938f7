#include "analyzer/clocks/clock_alignment.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/numbers.h"
#include "analyzer/steps/marker_steps.h"

namespace iotap::analyzer {

namespace {

// Step ends by rank, then step number (wall clock of the rank's host).
using RankEnds = std::map<int, std::map<int64_t, int64_t>>;

// The host of each ranked trainer.
std::map<int, std::string> HostsOfRanks(const RunCatalog& catalog) {
  std::map<int, std::string> hosts;
  for (const CatalogEntry& e : catalog.entries) {
    if (e.role == report::TRAINER && e.header.rank() >= 0) {
      hosts.emplace(e.header.rank(), e.header.hostname());
    }
  }
  return hosts;
}

// From the step logs, the steps that name a rank the run has.
RankEnds EndsInLogs(const std::vector<StepLog>& logs, const std::map<int, std::string>& hosts,
                    std::vector<std::string>* used) {
  RankEnds ends;
  for (const StepLog& log : logs) {
    if (!log.wall_clock) continue;
    bool any = false;
    for (const StepSpan& span : log.spans) {
      if (span.rank < 0 || !hosts.count(span.rank)) continue;
      ends[span.rank].emplace(span.step, span.end_ns);
      any = true;
    }
    if (any) used->push_back(log.path);
  }
  return ends;
}

// The steps the ranked trainers marked in their traces, read `threads`
// files at a time.
RankEnds EndsOfMarkers(const RunCatalog& catalog, int threads) {
  std::vector<const CatalogEntry*> trainers;
  for (const CatalogEntry& e : catalog.entries) {
    if (e.role == report::TRAINER && e.header.rank() >= 0) trainers.push_back(&e);
  }
  std::vector<std::vector<StepLog>> logs(trainers.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < trainers.size(); i = next++) {
      MarkerCollector markers;
      std::vector<ReadIssue> issues;  // the analysis reads the file again, and says
      if (ReadTraceFile(trainers[i]->path, &markers, &issues).ok()) logs[i] = markers.TakeLogs();
    }
  };
  threads = std::max(1, std::min<int>(threads, static_cast<int>(trainers.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  RankEnds ends;
  for (const std::vector<StepLog>& process : logs) {
    for (const StepLog& log : process) {
      for (const StepSpan& span : log.spans) ends[span.rank].emplace(span.step, span.end_ns);
    }
  }
  return ends;
}

// Per host, per step: the median end over the host's ranks.
std::map<std::string, std::map<int64_t, int64_t>> EndsByHost(
    const RankEnds& ends, const std::map<int, std::string>& hosts) {
  std::map<std::string, std::map<int64_t, std::vector<int64_t>>> all;
  for (const auto& [rank, steps] : ends) {
    for (const auto& [step, end] : steps) all[hosts.at(rank)][step].push_back(end);
  }
  std::map<std::string, std::map<int64_t, int64_t>> out;
  for (const auto& [host, steps] : all) {
    for (const auto& [step, values] : steps) {
      // Relative to the first: a double holds epoch nanoseconds only to
      // about 0.2 us.
      std::vector<double> later;
      for (int64_t v : values) later.push_back(static_cast<double>(v - values.front()));
      out[host][step] = values.front() + std::llround(Median(std::move(later)));
    }
  }
  return out;
}

// The run's span on each host's own clock.
std::map<std::string, std::pair<int64_t, int64_t>> SpanOfHosts(const RunCatalog& catalog) {
  std::map<std::string, std::pair<int64_t, int64_t>> span;
  for (const CatalogEntry& e : catalog.entries) {
    auto [it, added] = span.emplace(e.header.hostname(), std::pair{e.start_unix_ns, e.end_unix_ns});
    it->second.first = std::min(it->second.first, e.start_unix_ns);
    it->second.second = std::max(it->second.second, e.end_unix_ns);
  }
  return span;
}

std::string Micros(double ns) { return absl::StrFormat("%.0f us", ns / 1e3); }

void Decide(const std::string& reference, const std::pair<int64_t, int64_t>& span,
            HostClockFit* h) {
  const ClockFit& fit = h->fit;
  if (fit.anchors < kMinClockAnchors) {
    h->why_not = absl::StrCat("only ", fit.anchors, " steps in common with ", reference,
                              "'s ranks (", kMinClockAnchors, " needed)");
    return;
  }
  if (fit.wander > kMaxClockWander) {
    h->why_not = absl::StrFormat(
        "its step ends do not keep pace with %s's: the differences %d steps apart are %.1f "
        "times those of neighbouring steps (a synchronous job's stay near 1), as when ranks "
        "run on their own; no step end is a moment both hosts saw",
        reference, kWanderLag, fit.wander);
    return;
  }
  double largest = std::max(std::fabs(fit.correction.OffsetAt(span.first)),
                            std::fabs(fit.correction.OffsetAt(span.second)));
  if (largest <= fit.uncertainty_ns) {
    h->why_not = absl::StrCat("its offset (at most ", Micros(largest), ") is within the fit's ",
                              "uncertainty (", Micros(fit.uncertainty_ns),
                              "): the clocks agree as closely as the steps can tell");
    return;
  }
  h->corrected = true;
}

}  // namespace

RunClocks FitRunClocks(const RunCatalog& catalog, const std::vector<StepLog>& step_logs,
                       int threads) {
  RunClocks clocks;
  if (catalog.hosts.size() < 2) return clocks;
  const std::map<int, std::string> hosts = HostsOfRanks(catalog);
  std::vector<std::string> logs_used;
  RankEnds ends = EndsInLogs(step_logs, hosts, &logs_used);
  if (ends.empty()) {
    ends = EndsOfMarkers(catalog, threads);
    clocks.source = "the step ends of iotap markers";
  } else {
    clocks.source = absl::StrCat("the step ends in ", absl::StrJoin(logs_used, ", "));
  }
  std::map<std::string, std::vector<int>> ranks_of_host;
  for (const auto& [rank, steps] : ends) {
    if (!steps.empty()) ranks_of_host[hosts.at(rank)].push_back(rank);
  }
  for (const auto& [rank, steps] : ends) {
    if (!steps.empty()) {
      clocks.reference_host = hosts.at(rank);
      break;
    }
  }
  const auto by_host = EndsByHost(ends, hosts);
  const auto spans = SpanOfHosts(catalog);
  for (const std::string& host : catalog.hosts) {
    if (host == clocks.reference_host) continue;
    HostClockFit h;
    h.host = host;
    h.ranks = ranks_of_host[host];
    auto mine = by_host.find(host);
    if (clocks.reference_host.empty()) {
      h.why_not = "no ranked trainer recorded steps: nothing tells how the hosts' clocks differ";
    } else if (mine == by_host.end()) {
      h.why_not = "no ranked trainer on it recorded steps";
    } else {
      const std::map<int64_t, int64_t>& reference = by_host.at(clocks.reference_host);
      std::vector<ClockAnchor> anchors;
      for (const auto& [step, end] : mine->second) {
        auto there = reference.find(step);
        if (there != reference.end()) anchors.push_back({end, end - there->second});
      }
      const auto& span = spans.at(host);
      h.fit = FitClockLine(std::move(anchors), span.first, span.second);
      Decide(clocks.reference_host, span, &h);
    }
    if (h.corrected) clocks.corrections[host] = h.fit.correction;
    clocks.hosts.push_back(std::move(h));
  }
  return clocks;
}

void DropClockCorrections(const std::string& why, RunClocks* clocks) {
  for (HostClockFit& h : clocks->hosts) {
    if (h.corrected) h.why_not = why;
    h.corrected = false;
  }
  clocks->corrections.clear();
}

void CorrectStepSpan(const ClockCorrection& correction, StepSpan* span) {
  span->start_ns = correction.Apply(span->start_ns);
  span->end_ns = correction.Apply(span->end_ns);
  for (TimeWindow& w : span->data_waits) {
    w.start_ns = correction.Apply(w.start_ns);
    w.end_ns = correction.Apply(w.end_ns);
  }
}

}  // namespace iotap::analyzer
