#include "analyzer/merge/shared_run.h"

#include <algorithm>
#include <map>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/merge/partial_run.h"

namespace iotap::analyzer {

namespace {

// FNV-1a.
class Hash {
 public:
  void Add(std::string_view bytes) {
    for (char c : bytes) h_ = (h_ ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  }
  void Add(int64_t v) { Add(std::string_view(reinterpret_cast<const char*>(&v), sizeof v)); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 14695981039346656037ull;
};

}  // namespace

SharedRun::SharedRun() : state_(std::make_unique<run_state::RunState>()) {}
SharedRun::~SharedRun() = default;

absl::Status SharedRun::Prepare(const std::vector<std::string>& files,
                                const AnalysisOptions& options) {
  return run_state::PrepareRun(files, options, *state_);
}

void SharedRun::PrepareCounts(const std::vector<std::string>& files) {
  run_state::PrepareCounts(files, *state_);
}

size_t SharedRun::file_count() const { return state_->catalog.entries.size(); }

const std::string& SharedRun::file(size_t index) const {
  return state_->catalog.entries[index].path;
}

int SharedRun::group(size_t index) const {
  if (state_->scope != AnalysisScope::kFull) return -1;
  return run_state::GroupOf(*state_, static_cast<int>(index));
}

uint64_t SharedRun::Fingerprint() const {
  const run_state::RunState& s = *state_;
  Hash h;
  h.Add(static_cast<int64_t>(s.scope));
  h.Add(static_cast<int64_t>(s.catalog.entries.size()));
  for (const CatalogEntry& e : s.catalog.entries) {
    h.Add(e.path);
    h.Add(e.start_unix_ns);
    h.Add(e.end_unix_ns);
    h.Add(static_cast<int64_t>(e.role));
    h.Add(static_cast<int64_t>(e.trainer));
  }
  h.Add(s.origin_ns);
  h.Add(s.resolution_ns);
  h.Add(s.range_start_ns);
  h.Add(s.range_end_ns);
  h.Add(static_cast<int64_t>(s.groups.size()));
  return h.value();
}

void SharedRun::Read(const std::vector<int>& indices, int threads,
                     const std::function<void(size_t, size_t)>& progress) {
  run_state::ReadFiles(*state_, indices, threads, progress);
  read_.insert(read_.end(), indices.begin(), indices.end());
  // Busy time as runs where it is sparse: what the partial carries, and
  // what the process that merges it keeps. The groups' is analysed here
  // and freed (AnalyzeGroups); the run's, once the groups' is in it.
  for (TimeBitmap& layer : state_->layer_busy) layer.Compact();
}

int64_t SharedRun::end_ns() const { return state_->end_ns; }

absl::Status SharedRun::AnalyzeGroups(int64_t run_end_ns, const AnalysisOptions& options,
                                      int threads) {
  run_state::RunState& s = *state_;
  if (s.scope != AnalysisScope::kFull) return absl::OkStatus();
  s.end_ns = std::max(s.end_ns, run_end_ns);
  std::map<int, size_t> members;  // read here, by group
  for (int i : read_) {
    int g = run_state::GroupOf(s, i);
    if (g >= 0) ++members[g];
  }
  std::vector<int> own;
  for (const auto& [g, n] : members) {
    if (n != 1 + s.groups.at(g).loaders.size()) {
      return absl::FailedPreconditionError(
          absl::StrCat("the trainer of pid ", s.catalog.entries[g].header.pid(), " and its ",
                       s.groups.at(g).loaders.size(), " loaders were not read together (", n,
                       " of them here): a trainer's group must be read by one process"));
    }
    if (!s.results.count(g)) own.push_back(g);
  }
  run_state::AnalyzeGroups(s, own, options.timeline_bins, threads);
  if (s.all_io) s.all_io->Compact();
  return absl::OkStatus();
}

SharedRun::SummaryBytes SharedRun::summary_bytes() const {
  const run_state::RunState& s = *state_;
  SummaryBytes b;
  if (s.all_io) b.bitmaps += s.all_io->memory_bytes();
  for (const TimeBitmap& layer : s.layer_busy) b.bitmaps += layer.memory_bytes();
  for (const auto& [index, group] : s.groups) {
    for (const TimeBitmap* bitmap : {group.io.get(), group.writes.get(), group.own_io.get()}) {
      if (bitmap != nullptr) b.bitmaps += bitmap->memory_bytes();
    }
    for (const AdaptiveSeries* series : {group.read_bytes.get(), group.read_calls.get(),
                                         group.read_ns.get(), group.trainer_cpu.get()}) {
      if (series != nullptr) b.series += series->memory_bytes();
    }
    for (const auto* loaders : {&group.loader_cpu, &group.loader_run_queue}) {
      for (const auto& [loader, series] : *loaders) b.series += series.memory_bytes();
    }
  }
  return b;
}

void SharedRun::WritePartial(WireWriter& out, PartialSizes* sizes) const {
  internal::WritePartial(*state_, out, sizes);
}

absl::Status SharedRun::MergePartial(WireReader& in) { return internal::MergePartial(in, *state_); }

absl::StatusOr<report::Report> SharedRun::FinishReport(const AnalysisOptions& options) {
  run_state::FinishReading(*state_);
  return run_state::BuildReport(*state_, options);
}

RunCounts SharedRun::FinishCounts() {
  run_state::FinishReading(*state_);
  return run_state::BuildCounts(std::move(state_));
}

}  // namespace iotap::analyzer
