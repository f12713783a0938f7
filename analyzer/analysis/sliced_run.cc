#include "analyzer/analysis/sliced_run.h"

#include <algorithm>
#include <set>
#include <utility>

#include "analyzer/analysis/run_state.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "analyzer/base/numbers.h"
#include "analyzer/read/run_catalog.h"

namespace iotap::analyzer {

using run_state::RunState;

namespace {

// A slice's CPU series start with the sample before its first (a CPU sample
// spreads the CPU time since the sample before it, which may lie in an
// earlier slice), or this long before it while no sample is known. Its
// other series and its busy time start with it.
constexpr int64_t kCpuMarginNs = 2'000'000'000;
// Every slice's busy time at 1 us; the run's bitmaps take it at theirs.
constexpr int64_t kSliceResolutionNs = 1000;

// The summary's figures of what the slices added up to (as OnFileEnd sets
// them for a whole file).
void SetSummary(ProcessResult* r) {
  report::Process& p = r->summary;
  p.set_events(static_cast<double>(r->events));
  p.set_dropped_events(static_cast<double>(r->dropped));
  p.set_io_busy_s(Seconds(r->io_busy_ns));
  p.set_reads(static_cast<double>(r->reads));
  p.set_read_bytes(static_cast<double>(r->read_bytes));
  p.set_writes(static_cast<double>(r->write_calls));
  p.set_write_bytes(static_cast<double>(r->write_bytes));
  p.set_metadata_ops(static_cast<double>(r->metadata_ops));
  p.set_end(r->end);
}

}  // namespace

struct SlicedRun::File {
  int number = 0;  // in order of appearance
  const ProcessTrace* process = nullptr;
  // Packets that describe what later events refer to (HDF5 datasets,
  // TFRecord files): every slice's analyzer gets them all.
  std::vector<Packet> descriptions;
  std::optional<Packet> last_resources;
  std::optional<Packet> last_fault_counters;
  MarkerCollector markers;
  int64_t marker_first_ns = INT64_MAX;  // markers' times, wall clock
  int64_t marker_last_ns = INT64_MIN;
  uint64_t marker_events = 0;  // read whole, as a range of the report counts them
  int64_t last_seen_ns = 0;
  // The latest time the file's start or events mention (FrontierOf).
  int64_t frontier_ns = INT64_MIN;
  std::map<int64_t, std::unique_ptr<ProcessAnalyzer>> open;  // by slice
  // By slice, in order: a vector, which keeps its memory as slices come and
  // go (a ProcessSlice is over a KiB; a node each would be allocated and
  // freed every second, for every file).
  std::vector<std::pair<int64_t, internal::ProcessSlice>> sealed;
};

SlicedRun::SlicedRun(Options options) : options_(options) {}
SlicedRun::~SlicedRun() = default;

void SlicedRun::SetOrigin(int64_t unix_ns) {
  origin_ns_ = unix_ns;
  origin_set_ = true;
}

int64_t SlicedRun::FrontierOf(const ProcessTrace& process) const {
  auto it = files_.find(process.path());
  return it == files_.end() ? INT64_MIN : it->second->frontier_ns;
}

int64_t SlicedRun::FirstOpenSliceStart() const {
  int64_t first = INT64_MAX;
  for (const auto& [path, f] : files_) {
    if (!f->open.empty()) first = std::min(first, f->open.begin()->first);
  }
  return first == INT64_MAX ? first : origin_ns_ + first * options_.slice_ns;
}

int64_t SlicedRun::SliceOf(int64_t unix_ns) const {
  int64_t d = unix_ns - origin_ns_;
  return d >= 0 ? d / options_.slice_ns : -1 - (-d - 1) / options_.slice_ns;
}

SlicedRun::File& SlicedRun::FileOf(const ProcessTrace& process) {
  std::unique_ptr<File>& f = files_[process.path()];
  if (f == nullptr) {
    f = std::make_unique<File>();
    f->number = static_cast<int>(numbered_.size());
    numbered_.push_back(f.get());
  }
  return *f;
}

void SlicedRun::OnProcess(const ProcessTrace& process) {
  if (!origin_set_) SetOrigin(static_cast<int64_t>(process.header().start_realtime_ns()));
  File& f = FileOf(process);
  if (f.process == nullptr) ++started_;
  f.process = &process;
  f.frontier_ns =
      std::max(f.frontier_ns, static_cast<int64_t>(process.header().start_realtime_ns()));
  f.markers.OnProcess(process);
}

ProcessAnalyzer& SlicedRun::Slice(File& f, int64_t slice) {
  std::unique_ptr<ProcessAnalyzer>& a = f.open[slice];
  if (a != nullptr) return *a;
  int64_t start = origin_ns_ + slice * options_.slice_ns;
  // A loader's waits are not kept (MergeProcess drops them), so its slices,
  // as the report's analyzer of it, do not collect them: the files as
  // classified when slices were last sealed; one not classified yet
  // collects them, and Seal drops them if it is a loader.
  const bool loader =
      f.number < static_cast<int>(seal_groups_.size()) && seal_groups_[f.number].loader;
  a = std::make_unique<ProcessAnalyzer>(AnalysisScope::kFull, &paths_, start, kSliceResolutionNs,
                                        /*may_train=*/!loader);
  a->set_sparse_ids();
  // The slice's processes' files in one table by path: a worker opens a few
  // hundred files a second, each read in a burst, whose figures the sealed
  // slice only adds up by path.
  std::unique_ptr<internal::SliceFiles>& files = open_files_[slice];
  if (files == nullptr) files = std::make_unique<internal::SliceFiles>();
  a->set_shared_files(files.get());
  // From the sample before the slice's first (the analyzer spreads no CPU
  // time from before it), or a margin before the slice if none yet, on the
  // run's grid of bins, so that windows add bin to bin.
  int64_t cpu_origin = start - kCpuMarginNs;
  if (f.last_resources.has_value()) {
    cpu_origin = std::min(start, f.process->ToRealtimeNs(static_cast<int64_t>(
                                     f.last_resources->resources().monotonic_ns())));
  }
  int64_t bins = (cpu_origin - origin_ns_) / kInitialBinNs;
  if (cpu_origin < origin_ns_ + bins * kInitialBinNs) --bins;
  a->set_cpu_origin(origin_ns_ + bins * kInitialBinNs);
  a->OnProcess(*f.process);
  for (const Packet& p : f.descriptions) a->OnPacket(*f.process, p);
  if (f.last_resources.has_value()) a->OnPacket(*f.process, *f.last_resources);
  if (f.last_fault_counters.has_value()) a->OnPacket(*f.process, *f.last_fault_counters);
  return *a;
}

void SlicedRun::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  if (batch.events.empty()) return;
  File& f = FileOf(process);
  f.markers.OnEvents(process, batch);
  // One wall-clock offset per chunk, as RangeFilter takes it.
  int64_t offset =
      process.ToRealtimeNs(batch.events.front().start_ns) - batch.events.front().start_ns;
  // A batch is one thread's calls over at most a flush interval. One that
  // lies in one open slice, holds no step marker and no call that began
  // before the slice goes to its analyzer as it is, not copied; the slice's
  // bounds are kept so that an event costs a division only where it leaves
  // them.
  int64_t slice = SliceOf(batch.events.front().end_ns + offset);
  int64_t slice_start = origin_ns_ + slice * options_.slice_ns;
  bool whole = slice >= sealed_slices_;
  for (const Event& e : batch.events) {
    const int64_t end = e.end_ns + offset;
    f.last_seen_ns = std::max(f.last_seen_ns, end);
    if (TraitsOf(e.op).layer == Layer::kMarker) {
      f.marker_first_ns = std::min(f.marker_first_ns, e.start_ns + offset);
      f.marker_last_ns = std::max(f.marker_last_ns, end);
      ++f.marker_events;
      whole = false;
      continue;
    }
    whole = whole && end >= slice_start && end - slice_start < options_.slice_ns &&
            e.start_ns + offset >= slice_start;
  }
  last_seen_ns_ = std::max(last_seen_ns_, f.last_seen_ns);
  f.frontier_ns = std::max(f.frontier_ns, f.last_seen_ns);
  if (whole) {
    Slice(f, slice).OnEvents(process, batch);
  } else {
    SplitEvents(process, f, batch, offset);
  }
}

void SlicedRun::SplitEvents(const ProcessTrace& process, File& f, const EventBatch& batch,
                            int64_t offset) {
  // The scratch batches keep their memory from batch to batch, whichever
  // slices they hold; `used` of them hold this batch's, in slice order.
  size_t used = 0;
  for (const Event& e : batch.events) {
    if (TraitsOf(e.op).layer == Layer::kMarker) continue;
    int64_t slice = SliceOf(e.end_ns + offset);
    if (slice < sealed_slices_) {
      ++late_events_;
      continue;
    }
    size_t at = 0;
    while (at < used && scratch_[at].first < slice) ++at;
    if (at == used || scratch_[at].first != slice) {
      // A spare batch, moved to its place in slice order.
      if (used == scratch_.size()) scratch_.emplace_back();
      std::rotate(scratch_.begin() + static_cast<std::ptrdiff_t>(at),
                  scratch_.begin() + static_cast<std::ptrdiff_t>(used),
                  scratch_.begin() + static_cast<std::ptrdiff_t>(used + 1));
      scratch_[at].first = slice;
      scratch_[at].second.events.clear();
      ++used;
    }
    Event& k = scratch_[at].second.events.emplace_back(e);
    k.start_ns = std::max(k.start_ns, origin_ns_ + slice * options_.slice_ns - offset);
  }
  for (size_t i = 0; i < used; ++i) {
    auto& [slice, b] = scratch_[i];
    b.tid = batch.tid;
    b.dropped_before = i == 0 ? batch.dropped_before : 0;
    Slice(f, slice).OnEvents(process, b);
  }
}

void SlicedRun::OnPacket(const ProcessTrace& process, const Packet& packet) {
  File& f = FileOf(process);
  if (packet.has_hdf5_dataset() || packet.has_tfrecord_file() || packet.has_fault_sampling()) {
    f.descriptions.push_back(packet);
    for (auto& [slice, a] : f.open) a->OnPacket(process, packet);
  } else if (packet.has_resources()) {
    int64_t at = process.ToRealtimeNs(static_cast<int64_t>(packet.resources().monotonic_ns()));
    int64_t slice = SliceOf(at);
    if (slice >= sealed_slices_) Slice(f, slice).OnPacket(process, packet);
    f.last_resources = packet;
  } else if (packet.has_fault_counters()) {
    // Counters that grow: the newest slice takes their growth since the
    // last ones, which every later slice starts from.
    if (!f.open.empty()) f.open.rbegin()->second->OnPacket(process, packet);
    f.last_fault_counters = packet;
  }
}

RunCatalog SlicedRun::Catalog() const {
  RunCatalog catalog;
  if (classified_of_ == started_) {
    catalog = classified_;
  } else {
    for (const auto& [path, f] : files_) {
      if (f->process == nullptr) continue;
      CatalogEntry& e = catalog.entries.emplace_back();
      e.path = path;
      e.header = f->process->header();
      e.start_unix_ns = static_cast<int64_t>(e.header.start_realtime_ns());
      e.end_unix_ns = e.start_unix_ns;
    }
    ClassifyProcesses(&catalog);
  }
  for (CatalogEntry& e : catalog.entries) {
    e.end_unix_ns = std::max(e.start_unix_ns, files_.at(e.path)->last_seen_ns);
    catalog.end_unix_ns = std::max(catalog.end_unix_ns, e.end_unix_ns);
  }
  return catalog;
}

const std::vector<internal::SealGroup>& SlicedRun::SealGroups() {
  if (classified_of_ == started_) return seal_groups_;
  classified_ = Catalog();
  classified_of_ = started_;
  seal_groups_.assign(numbered_.size(), internal::SealGroup{});
  auto number = [&](int index) { return files_.at(classified_.entries[index].path)->number; };
  for (int i = 0; i < static_cast<int>(classified_.entries.size()); ++i) {
    const CatalogEntry& e = classified_.entries[i];
    internal::SealGroup& g = seal_groups_[number(i)];
    g.loader = e.role == report::LOADER;
    if (e.role == report::TRAINER) g.trainer = number(i);
    if (g.loader && e.trainer >= 0) g.trainer = number(e.trainer);
  }
  return seal_groups_;
}

int64_t SlicedRun::Resolution() const {
  // As Report's catalog ends: the latest time any started file mentions.
  int64_t end = 0;
  for (const auto& [path, f] : files_) {
    if (f->process == nullptr) continue;
    end = std::max({end, static_cast<int64_t>(f->process->header().start_realtime_ns()),
                    f->last_seen_ns});
  }
  return ChooseResolution(std::max<int64_t>(0, end - origin_ns_));
}

void SlicedRun::Seal(int64_t unix_ns) {
  const int64_t n = SliceOf(unix_ns);  // slices before it end by `unix_ns`
  if (n <= sealed_slices_) return;
  for (auto& [path, f] : files_) {
    if (f->process == nullptr) continue;
    f->last_seen_ns = std::max(
        f->last_seen_ns,
        f->process->end().has_value()
            ? f->process->ToRealtimeNs(static_cast<int64_t>(f->process->end()->monotonic_ns()))
            : 0);
    last_seen_ns_ = std::max(last_seen_ns_, f->last_seen_ns);
  }
  const std::vector<internal::SealGroup>& groups = SealGroups();
  const int64_t resolution = Resolution();
  for (auto& [path, f] : files_) {
    while (!f->open.empty() && f->open.begin()->first < n) {
      auto it = f->open.begin();
      it->second->OnFileEnd(*f->process);
      ProcessResult r = it->second->Take();
      AddTo(&sealed_read_bytes_, r.read_bytes);
      for (int i = 0; i < kLayerCount; ++i) {
        if (r.layers[i].ops == 0) continue;
        AddTo(&sealed_layer_read_bytes_[LayerName(static_cast<Layer>(i))], r.layers[i].read_bytes);
      }
      const int64_t slice = it->first;
      auto at = totals_.find(slice);
      if (at == totals_.end()) {
        // With the files its analyzers counted into, where they are.
        auto files = open_files_.find(slice);
        at = totals_
                 .try_emplace(slice, origin_ns_, resolution, origin_ns_ + slice * options_.slice_ns,
                              files != open_files_.end() ? std::move(files->second) : nullptr)
                 .first;
      }
      internal::SliceTotals& totals = at->second;
      internal::SealGroup group;  // a file started since it was classified has none yet
      if (f->number < static_cast<int>(groups.size())) group = groups[f->number];
      f->sealed.emplace_back(slice, internal::Seal(std::move(r), f->number, group, &totals));
      f->open.erase(it);
    }
    auto kept = std::find_if(f->sealed.begin(), f->sealed.end(),
                             [&](const auto& s) { return s.first >= n - options_.keep_slices; });
    f->sealed.erase(f->sealed.begin(), kept);
  }
  open_files_.erase(open_files_.begin(), open_files_.lower_bound(n));
  for (auto it = totals_.lower_bound(sealed_slices_); it != totals_.end(); ++it) {
    internal::Index(&it->second);
  }
  while (!totals_.empty() && totals_.begin()->first < n - options_.keep_slices) {
    totals_.erase(totals_.begin());
  }
  sealed_slices_ = n;
}

absl::StatusOr<report::Report> SlicedRun::Report(int64_t from_unix_ns, int64_t to_unix_ns) const {
  if (SliceOf(from_unix_ns) < sealed_slices_ - options_.keep_slices ||
      SliceOf(to_unix_ns - 1) >= sealed_slices_) {
    return absl::OutOfRangeError("the range is not within the sealed slices kept");
  }
  RunState s;
  s.catalog = Catalog();
  if (s.catalog.entries.empty()) {
    return absl::UnavailableError("no trace file has started yet");
  }
  std::vector<std::string> paths;  // in name order, as RunState::rank counts
  for (const auto& [path, f] : files_) {
    if (f->process != nullptr) paths.push_back(path);
  }
  s.origin_ns = origin_ns_;
  s.resolution_ns = ChooseResolution(std::max<int64_t>(0, s.catalog.end_unix_ns - s.origin_ns));
  s.end_ns = std::max(s.origin_ns, s.catalog.end_unix_ns);
  s.range_start_ns = from_unix_ns;
  s.range_end_ns = to_unix_ns;
  run_state::SetUpProcesses(s, paths);
  s.py_samples.resize(s.catalog.entries.size());
  s.all_io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
  s.series_origin_ns = from_unix_ns;
  for (int i = 0; i < kLayerCount; ++i) {
    s.layer_read_bytes.emplace_back(s.series_origin_ns, kInitialBinNs);
    s.layer_busy.emplace_back(s.origin_ns, s.resolution_ns);
  }
  run_state::SetUpGroups(s);
  const int64_t first = SliceOf(from_unix_ns);
  const int64_t last = SliceOf(to_unix_ns);  // not included
  std::vector<int> index_of(numbered_.size(), -1);
  std::vector<int> rank_of(numbered_.size(), -1);
  for (int i = 0; i < static_cast<int>(s.catalog.entries.size()); ++i) {
    const File& f = *files_.at(s.catalog.entries[i].path);
    index_of[f.number] = i;
    rank_of[f.number] = s.rank[i];
    // An empty result of the process, as the report's analyzer starts, and
    // the slices of the range added to it.
    ProcessAnalyzer empty(AnalysisScope::kFull, &s.paths, s.series_origin_ns, s.resolution_ns);
    empty.OnProcess(*f.process);
    empty.OnFileEnd(*f.process);
    ProcessResult r = empty.Take();
    std::vector<const internal::ProcessSlice*> kept;
    for (const auto& [slice, sealed] : f.sealed) {
      if (slice >= first && slice < last) internal::AbsorbSlice(sealed, s, &r);
      kept.push_back(&sealed);
    }
    internal::AbsorbCpu(kept, &r);
    AddTo(&r.events, f.marker_events);
    SetSummary(&r);
    if (f.last_resources.has_value()) {
      r.summary.set_cpu_user_s(Seconds(f.last_resources->resources().user_cpu_ns()));
      r.summary.set_cpu_system_s(Seconds(f.last_resources->resources().system_cpu_ns()));
    }
    r.first_unix_ns = std::min(r.first_unix_ns, f.marker_first_ns);
    r.last_unix_ns = std::max(r.last_unix_ns, f.marker_last_ns);
    MarkerCollector markers = f.markers;
    markers.OnFileEnd(*f.process);
    r.steps = markers.TakeLogs();
    run_state::MergeProcess(s, i, std::move(r));
  }
  std::vector<const internal::SliceTotals*> totals;
  for (auto it = totals_.lower_bound(first); it != totals_.end() && it->first < last; ++it) {
    totals.push_back(&it->second);
  }
  internal::AddTotals(totals, paths_, index_of, rank_of, s);
  run_state::FinishReading(s);
  AnalysisOptions options;
  options.top_files = options_.top_files;
  options.rules = options_.rules;
  return run_state::BuildReport(s, options);
}

}  // namespace iotap::analyzer
