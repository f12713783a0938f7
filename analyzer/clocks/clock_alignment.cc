#include "analyzer/clocks/clock_alignment.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/numbers.h"
#include "analyzer/clocks/clock_exchanges.h"
#include "analyzer/steps/marker_steps.h"

namespace iotap::analyzer {

namespace {

// Step ends by rank, then step number (wall clock of the rank's host); and
// the ends of collectives (CollectiveEnd), keyed from kCollectiveKeys on by
// step and index, so that the same collective of each rank meets the others'.
using RankEnds = std::map<int, std::map<int64_t, int64_t>>;
constexpr int64_t kCollectiveKeys = int64_t{1} << 52;
constexpr int kMaxCollectivesPerStep = 4096;

bool IsCollectiveKey(int64_t key) { return key >= kCollectiveKeys; }

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
    for (const CollectiveEnd& c : log.collectives) {
      if (c.rank < 0 || !hosts.count(c.rank) || c.step < 0 || c.step >= kCollectiveKeys >> 13 ||
          c.index >= kMaxCollectivesPerStep) {
        continue;
      }
      ends[c.rank].emplace(kCollectiveKeys + c.step * kMaxCollectivesPerStep + c.index, c.end_ns);
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
  // Exchanges are moments both clocks read by construction; only steps can
  // turn out not to be.
  if (h->exchanges == 0 && fit.wander > kMaxClockWander) {
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
                              "): the clocks agree as closely as the ",
                              h->exchanges > 0 ? "time exchanges" : "steps", " can tell");
    return;
  }
  h->corrected = true;
}


// The time exchanges `iotap run --clock-sync` left beside the run's traces:
// per asking host, the serving host and every exchange (an instance that
// asked twice, or several instances on one host, add up).
struct Exchanged {
  std::string server;
  std::vector<ClockExchange> exchanges;
};

std::map<std::string, Exchanged> ReadExchanges(const RunCatalog& catalog,
                                               std::vector<std::string>* problems) {
  namespace fs = std::filesystem;
  std::set<std::string> dirs;
  for (const CatalogEntry& e : catalog.entries) dirs.insert(fs::path(e.path).parent_path().string());
  std::vector<std::string> paths;
  for (const std::string& dir : dirs) {
    std::error_code ec;
    for (fs::directory_iterator it(dir.empty() ? "." : dir, ec), end; !ec && it != end;
         it.increment(ec)) {
      std::error_code type_ec;
      // Not a symbolic link: the trace directory holds files iotap wrote.
      if (it->is_regular_file(type_ec) && !it->is_symlink(type_ec) &&
          absl::EndsWith(it->path().filename().string(), kClockExchangeSuffix)) {
        paths.push_back(it->path().string());
      }
    }
  }
  std::sort(paths.begin(), paths.end());
  std::map<std::string, Exchanged> by_host;
  for (const std::string& path : paths) {
    absl::StatusOr<ClockExchangeFile> file = ReadClockExchanges(path);
    if (!file.ok()) {
      problems->push_back(std::string(file.status().message()));
      continue;
    }
    Exchanged& x = by_host[file->host];
    if (!x.server.empty() && x.server != file->reference) {
      problems->push_back(absl::StrCat(path, ": exchanged with ", file->reference, ", where ",
                                       file->host, "'s other files exchanged with ", x.server,
                                       "; not used"));
      continue;
    }
    x.server = file->reference;
    x.exchanges.insert(x.exchanges.end(), file->exchanges.begin(), file->exchanges.end());
  }
  return by_host;
}

// `host`'s clock against `reference`'s from the exchanges: directly when one
// asked the other, else through the server both asked. False when the
// exchanges do not connect the two.
bool ExchangeFit(const std::map<std::string, Exchanged>& exchanged, const std::string& host,
                 const std::string& reference, const std::pair<int64_t, int64_t>& span,
                 HostClockFit* h) {
  auto mine = exchanged.find(host);
  auto theirs = exchanged.find(reference);
  std::vector<ClockAnchor> anchors;
  double delay_ns = 0;  // the round trips' share of the uncertainty
  int count = 0;
  std::string server;
  if (mine != exchanged.end() && mine->second.server == reference) {
    ExchangeAnchors a = PickExchangeAnchors(mine->second.exchanges);
    anchors = std::move(a.anchors);
    delay_ns = a.median_delay_ns / 2;
    h->round_trip_ns = a.best_delay_ns;
    count = a.exchanges;
    server = reference;
  } else if (theirs != exchanged.end() && theirs->second.server == host) {
    // The reference asked this host: the same moments, seen the other way.
    ExchangeAnchors a = PickExchangeAnchors(theirs->second.exchanges);
    for (const ClockAnchor& r : a.anchors) anchors.push_back({r.host_ns - r.offset_ns, -r.offset_ns});
    delay_ns = a.median_delay_ns / 2;
    h->round_trip_ns = a.best_delay_ns;
    count = a.exchanges;
    server = host;
  } else if (mine != exchanged.end() && theirs != exchanged.end() &&
             mine->second.server == theirs->second.server) {
    // Both asked a third host: this host's offset from it, less the
    // reference's at the same moment (its own line).
    ExchangeAnchors a = PickExchangeAnchors(mine->second.exchanges);
    ExchangeAnchors b = PickExchangeAnchors(theirs->second.exchanges);
    if (static_cast<int>(b.anchors.size()) < kMinClockAnchors) return false;
    ClockFit through = FitClockLine(b.anchors, span.first, span.second);
    for (const ClockAnchor& m : a.anchors) {
      const int64_t on_server = m.host_ns - m.offset_ns;
      anchors.push_back(
          {m.host_ns, m.offset_ns - std::llround(through.correction.OffsetAt(on_server))});
    }
    delay_ns = (a.median_delay_ns + b.median_delay_ns) / 2 + through.uncertainty_ns;
    h->round_trip_ns = std::min(a.best_delay_ns, b.best_delay_ns);
    count = a.exchanges + b.exchanges;
    server = mine->second.server;
  } else {
    return false;
  }
  if (static_cast<int>(anchors.size()) < kMinClockAnchors) return false;
  h->fit = FitClockLine(std::move(anchors), span.first, span.second);
  // The line's own noise, plus what the network's asymmetry can hide: at
  // most half a round trip.
  h->fit.uncertainty_ns += delay_ns;
  h->exchanges = count;
  h->exchanged_with = server;
  h->source = absl::StrCat("time exchanges of iotap run --clock-sync with ", server);
  return true;
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
    bool collectives = false;
    for (const auto& [rank, keys] : ends) {
      collectives = collectives || (!keys.empty() && IsCollectiveKey(keys.rbegin()->first));
    }
    clocks.source = absl::StrCat(collectives ? "the step and collective ends in "
                                             : "the step ends in ",
                                 absl::StrJoin(logs_used, ", "));
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
  const std::map<std::string, Exchanged> exchanged = ReadExchanges(catalog, &clocks.problems);
  if (clocks.reference_host.empty()) {
    // No ranked steps: the host the others exchanged with, if it traced.
    for (const auto& [host, x] : exchanged) {
      if (std::find(catalog.hosts.begin(), catalog.hosts.end(), x.server) != catalog.hosts.end()) {
        clocks.reference_host = x.server;
        break;
      }
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
    std::vector<ClockAnchor> step_anchors;
    if (mine != by_host.end() && by_host.count(clocks.reference_host)) {
      const std::map<int64_t, int64_t>& reference = by_host.at(clocks.reference_host);
      for (const auto& [step, end] : mine->second) {
        auto there = reference.find(step);
        if (there == reference.end()) continue;
        step_anchors.push_back({end, end - there->second});
        (IsCollectiveKey(step) ? h.collectives : h.steps)++;
      }
    }
    const auto& span = spans.at(host);
    if (!clocks.reference_host.empty() &&
        ExchangeFit(exchanged, host, clocks.reference_host, span, &h)) {
      Decide(clocks.reference_host, span, &h);
    } else if (clocks.reference_host.empty()) {
      h.why_not = "no ranked trainer recorded steps: nothing tells how the hosts' clocks differ";
    } else if (mine == by_host.end()) {
      h.why_not = "no ranked trainer on it recorded steps";
    } else {
      h.fit = FitClockLine(std::move(step_anchors), span.first, span.second, kMinStepDriftSpanNs);
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
