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

// A slice's CPU series start at least this long before it: a CPU sample
// spreads the CPU time since the sample before it (the shim takes one every
// 100 ms), which may lie in an earlier slice. Its other series and its busy
// time start with it.
constexpr int64_t kCpuMarginNs = 2'000'000'000;
// Every slice's busy time at 1 us; the run's bitmaps take it at theirs.
constexpr int64_t kSliceResolutionNs = 1000;

// The CPU time a slice's samples spread: a range of the report reads every
// sample, so a window takes them from every slice kept, in range or not.
void AbsorbCpu(const ProcessResult& slice, ProcessResult* into) {
  into->cpu_ns->AddSeries(*slice.cpu_ns);
  into->run_queue_ns->AddSeries(*slice.run_queue_ns);
}

// Appends a later slice's Python samples (functions and stacks renumbered).
void AppendPySamples(const PySamples& slice, PySamples* into) {
  const auto functions = static_cast<uint32_t>(into->functions.size());
  const auto stacks = static_cast<uint32_t>(into->stacks.size());
  into->functions.insert(into->functions.end(), slice.functions.begin(), slice.functions.end());
  for (std::vector<uint32_t> stack : slice.stacks) {
    for (uint32_t& f : stack) f += functions;
    into->stacks.push_back(std::move(stack));
  }
  for (PySample sample : slice.samples) {
    sample.stack += stacks;
    into->samples.push_back(sample);
  }
  into->started = into->started || slice.started;
  if (into->unavailable.empty()) into->unavailable = slice.unavailable;
}

// Appends a later slice's waits (channels renumbered).
void AppendWaits(const WaitEvidence& slice, int64_t origin_ns, int64_t resolution_ns,
                 WaitEvidence* into) {
  into->threshold_ns = std::max(into->threshold_ns, slice.threshold_ns);
  std::vector<uint32_t> index;
  for (const std::string& c : slice.channels) {
    auto it = std::find(into->channels.begin(), into->channels.end(), c);
    index.push_back(static_cast<uint32_t>(it - into->channels.begin()));
    if (it == into->channels.end()) into->channels.push_back(c);
  }
  for (Reception r : slice.receptions) {
    if (r.channel < index.size()) r.channel = index[r.channel];
    into->receptions.push_back(r);
  }
  into->sync_waits.insert(into->sync_waits.end(), slice.sync_waits.begin(), slice.sync_waits.end());
  if (slice.own_io) {
    if (!into->own_io) into->own_io = std::make_unique<TimeSpans>(origin_ns, resolution_ns);
    into->own_io->Absorb(*slice.own_io);
  }
}

// Adds a later slice of the same process into `into`, its paths put in the
// run's table.
void AbsorbSlice(const PathTable& slice_paths, const ProcessResult& slice, RunState& s,
                 std::map<std::pair<uint32_t, int>, size_t>& file_index, ProcessResult* into) {
  AbsorbCpu(slice, into);
  into->events += slice.events;
  into->dropped = slice.dropped;  // the process's count so far
  into->end = slice.end;
  AddTo(&into->reads, slice.reads);
  AddTo(&into->read_bytes, slice.read_bytes);
  AddTo(&into->write_calls, slice.write_calls);
  AddTo(&into->write_bytes, slice.write_bytes);
  AddTo(&into->metadata_ops, slice.metadata_ops);
  for (size_t i = 0; i < slice.files.size(); ++i) {
    const FileRef& ref = slice.file_refs[i];
    PathTable::Entry path = s.paths.Intern(slice_paths.path(ref.path_id), /*categorize=*/true);
    auto [it, added] = file_index.try_emplace({path.id, ref.kind}, into->files.size());
    if (added) {
      into->files.emplace_back();
      into->file_details.emplace_back();
      into->file_refs.push_back(FileRef{path.id, ref.kind, path.category});
    }
    into->files[it->second].Merge(slice.files[i]);
    into->file_details[it->second].Merge(slice.file_details[i]);
  }
  for (const auto& [kind, c] : slice.ipc) into->ipc[kind].Merge(c);
  for (const auto& [name, d] : slice.datasets) into->datasets[name].Merge(d);
  TfRecordAccumulator tfrecords = slice.tfrecords;
  into->tfrecords.Absorb(std::move(tfrecords), 0);
  into->cuda.Merge(slice.cuda);
  MappedAccumulator mapped = slice.mapped;
  into->mapped.Absorb(std::move(mapped), 0);
  AppendPySamples(slice.py, &into->py);
  AppendWaits(slice.waits, s.origin_ns, s.resolution_ns, &into->waits);
  for (int i = 0; i < kLayerCount; ++i) {
    into->layers[i].Merge(slice.layers[i]);
    into->read_bytes_by_layer[i].AddSeries(slice.read_bytes_by_layer[i]);
    into->layer_busy[i].Absorb(slice.layer_busy[i]);
  }
  into->io->Absorb(*slice.io);
  into->writes->Absorb(*slice.writes);
  into->data_read_bytes->AddSeries(*slice.data_read_bytes);
  into->data_read_calls->AddSeries(*slice.data_read_calls);
  into->data_read_ns->AddSeries(*slice.data_read_ns);
  into->data_read_sizes.Merge(slice.data_read_sizes);
  into->cuda_copies.insert(into->cuda_copies.end(), slice.cuda_copies.begin(),
                           slice.cuda_copies.end());
  AddTo(&into->io_busy_ns, slice.io_busy_ns);
  AddTo(&into->late_clipped_ns, slice.late_clipped_ns);
  into->first_unix_ns = std::min(into->first_unix_ns, slice.first_unix_ns);
  into->last_unix_ns = std::max(into->last_unix_ns, slice.last_unix_ns);
  into->end_unix_ns = std::max(into->end_unix_ns, slice.end_unix_ns);
}

// A sealed slice's series keep only the bins that hold something.
void TrimSeries(ProcessResult& r) {
  for (AdaptiveSeries& s : r.read_bytes_by_layer) s.Trim();
  for (AdaptiveSeries* s : {r.data_read_bytes.get(), r.data_read_calls.get(), r.data_read_ns.get(),
                            r.cpu_ns.get(), r.run_queue_ns.get()}) {
    s->Trim();
  }
}

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
  std::map<int64_t, std::unique_ptr<ProcessAnalyzer>> open;  // by slice
  std::map<int64_t, ProcessResult> sealed;                   // by slice
};

SlicedRun::SlicedRun(Options options) : options_(options) {}
SlicedRun::~SlicedRun() = default;

void SlicedRun::SetOrigin(int64_t unix_ns) {
  origin_ns_ = unix_ns;
  origin_set_ = true;
}

int64_t SlicedRun::SliceOf(int64_t unix_ns) const {
  int64_t d = unix_ns - origin_ns_;
  return d >= 0 ? d / options_.slice_ns : -1 - (-d - 1) / options_.slice_ns;
}

SlicedRun::File& SlicedRun::FileOf(const ProcessTrace& process) {
  std::unique_ptr<File>& f = files_[process.path()];
  if (f == nullptr) f = std::make_unique<File>();
  return *f;
}

void SlicedRun::OnProcess(const ProcessTrace& process) {
  if (!origin_set_) SetOrigin(static_cast<int64_t>(process.header().start_realtime_ns()));
  File& f = FileOf(process);
  f.process = &process;
  f.markers.OnProcess(process);
}

ProcessAnalyzer& SlicedRun::Slice(File& f, int64_t slice) {
  std::unique_ptr<ProcessAnalyzer>& a = f.open[slice];
  if (a != nullptr) return *a;
  int64_t start = origin_ns_ + slice * options_.slice_ns;
  a = std::make_unique<ProcessAnalyzer>(AnalysisScope::kFull, &paths_, start, kSliceResolutionNs);
  // From the sample before the slice's first (or a margin before the slice
  // if none yet), on the run's grid of bins, so that windows add bin to bin.
  int64_t cpu_origin = start - kCpuMarginNs;
  if (f.last_resources.has_value()) {
    cpu_origin = std::min(cpu_origin, f.process->ToRealtimeNs(static_cast<int64_t>(
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
  for (auto& [slice, b] : scratch_) b.events.clear();
  for (const Event& e : batch.events) {
    f.last_seen_ns = std::max(f.last_seen_ns, e.end_ns + offset);
    if (TraitsOf(e.op).layer == Layer::kMarker) {
      f.marker_first_ns = std::min(f.marker_first_ns, e.start_ns + offset);
      f.marker_last_ns = std::max(f.marker_last_ns, e.end_ns + offset);
      ++f.marker_events;
      continue;
    }
    int64_t slice = SliceOf(e.end_ns + offset);
    if (slice < sealed_slices_) {
      ++late_events_;
      continue;
    }
    EventBatch& into = scratch_[slice];
    Event& k = into.events.emplace_back(e);
    k.start_ns = std::max(k.start_ns, origin_ns_ + slice * options_.slice_ns - offset);
  }
  last_seen_ns_ = std::max(last_seen_ns_, f.last_seen_ns);
  bool first = true;
  for (auto& [slice, b] : scratch_) {
    if (b.events.empty()) continue;
    b.tid = batch.tid;
    b.dropped_before = first ? batch.dropped_before : 0;
    first = false;
    Slice(f, slice).OnEvents(process, b);
  }
  // The scratch keeps its batches' memory, not slices gone by.
  while (scratch_.size() > 4) scratch_.erase(scratch_.begin());
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

void SlicedRun::Seal(int64_t unix_ns) {
  const int64_t n = SliceOf(unix_ns);  // slices before it end by `unix_ns`
  if (n <= sealed_slices_) return;
  for (auto& [path, f] : files_) {
    if (f->process != nullptr) {
      f->last_seen_ns = std::max(
          f->last_seen_ns,
          f->process->end().has_value()
              ? f->process->ToRealtimeNs(static_cast<int64_t>(f->process->end()->monotonic_ns()))
              : 0);
      last_seen_ns_ = std::max(last_seen_ns_, f->last_seen_ns);
    }
    while (!f->open.empty() && f->open.begin()->first < n) {
      auto it = f->open.begin();
      it->second->OnFileEnd(*f->process);
      ProcessResult& r = f->sealed.emplace(it->first, it->second->Take()).first->second;
      TrimSeries(r);
      AddTo(&sealed_read_bytes_, r.read_bytes);
      for (int i = 0; i < kLayerCount; ++i) {
        if (r.layers[i].ops == 0) continue;
        AddTo(&sealed_layer_read_bytes_[LayerName(static_cast<Layer>(i))], r.layers[i].read_bytes);
      }
      f->open.erase(it);
    }
    while (!f->sealed.empty() && f->sealed.begin()->first < n - options_.keep_slices) {
      f->sealed.erase(f->sealed.begin());
    }
  }
  sealed_slices_ = n;
}

absl::StatusOr<report::Report> SlicedRun::Report(int64_t from_unix_ns, int64_t to_unix_ns) const {
  if (SliceOf(from_unix_ns) < sealed_slices_ - options_.keep_slices ||
      SliceOf(to_unix_ns - 1) >= sealed_slices_) {
    return absl::OutOfRangeError("the range is not within the sealed slices kept");
  }
  RunState s;
  std::vector<std::string> paths;
  for (const auto& [path, f] : files_) {
    if (f->process == nullptr) continue;
    CatalogEntry& e = s.catalog.entries.emplace_back();
    e.path = path;
    e.header = f->process->header();
    e.start_unix_ns = static_cast<int64_t>(e.header.start_realtime_ns());
    e.end_unix_ns = std::max(e.start_unix_ns, f->last_seen_ns);
    paths.push_back(path);
  }
  if (s.catalog.entries.empty()) {
    return absl::UnavailableError("no trace file has started yet");
  }
  ClassifyProcesses(&s.catalog);
  std::set<std::string> hosts;
  for (const CatalogEntry& e : s.catalog.entries) hosts.insert(e.header.hostname());
  s.catalog.hosts.assign(hosts.begin(), hosts.end());
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
  for (int i = 0; i < static_cast<int>(s.catalog.entries.size()); ++i) {
    const File& f = *files_.at(s.catalog.entries[i].path);
    // An empty result of the process, as the report's analyzer starts, and
    // the slices of the range added to it.
    ProcessAnalyzer empty(AnalysisScope::kFull, &s.paths, s.series_origin_ns, s.resolution_ns);
    empty.OnProcess(*f.process);
    empty.OnFileEnd(*f.process);
    ProcessResult r = empty.Take();
    std::map<std::pair<uint32_t, int>, size_t> file_index;
    for (const auto& [slice, result] : f.sealed) {
      if (slice >= SliceOf(from_unix_ns) && slice < SliceOf(to_unix_ns)) {
        AbsorbSlice(paths_, result, s, file_index, &r);
      } else {
        AbsorbCpu(result, &r);
      }
    }
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
  run_state::FinishReading(s);
  AnalysisOptions options;
  options.top_files = options_.top_files;
  options.rules = options_.rules;
  return run_state::BuildReport(s, options);
}

}  // namespace iotap::analyzer
