#include "analyzer/analysis/sliced_run_sealed.h"

#include <algorithm>
#include <bit>
#include <tuple>
#include <utility>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer::internal {

using run_state::RunState;

namespace {

// The sum of `slices` (in order) as AdaptiveSeries::AddSeries makes it in
// an empty series on `origin_ns` with bins of kInitialBinNs, built from the
// slices' runs rather than bin by bin: a window's CPU series are ten
// thousand bins per process, most of them runs of one value between two
// samples. Each bin's value is the same sum, taken in the same order
// ((0 + a) + b). Null where AddSeries would do otherwise (a slice's bins of
// another width or off the grid, or a window too long for kMaxBins).
std::unique_ptr<AdaptiveSeries> SumRuns(const std::vector<const AdaptiveSeries*>& slices,
                                        int64_t origin_ns) {
  struct Piece {
    int64_t first;  // bins [first, end) from origin_ns hold `value`
    int64_t end;
    int slice;
    double value;
  };
  std::vector<Piece> pieces;
  for (int k = 0; k < static_cast<int>(slices.size()); ++k) {
    const AdaptiveSeries& o = *slices[k];
    if (o.bin_ns() != kInitialBinNs || (o.origin_ns() - origin_ns) % kInitialBinNs != 0) {
      return nullptr;
    }
    int64_t at = (o.origin_ns() - origin_ns) / kInitialBinNs;
    o.ForEachRun([&](size_t bins, double value) {
      int64_t first = std::max<int64_t>(at, 0);  // bins before the origin are left out
      at += static_cast<int64_t>(bins);
      if (value != 0 && first < at) pieces.push_back({first, at, k, value});
    });
  }
  int64_t end = 0;
  for (const Piece& p : pieces) end = std::max(end, p.end);
  if (end > static_cast<int64_t>(AdaptiveSeries::kMaxBins)) return nullptr;
  // Where pieces begin and end, each a run's bound; between two bounds the
  // pieces that cover it summed in slice order.
  std::vector<int64_t> bounds;
  for (const Piece& p : pieces) {
    bounds.push_back(p.first);
    bounds.push_back(p.end);
  }
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) {
    return a.first != b.first ? a.first < b.first : a.slice < b.slice;
  });
  std::sort(bounds.begin(), bounds.end());
  bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
  std::vector<AdaptiveSeries::Run> runs;
  auto add = [&](int64_t to, double value) {
    if (!runs.empty() && std::bit_cast<uint64_t>(runs.back().value) ==
                             std::bit_cast<uint64_t>(value)) {
      runs.back().end = static_cast<uint32_t>(to);
    } else {
      runs.push_back({static_cast<uint32_t>(to), value});
    }
  };
  std::vector<const Piece*> active;  // covering the current bound, in slice order
  size_t next = 0;
  int64_t at = 0;
  for (int64_t bound : bounds) {
    if (bound > at) {
      double value = 0.0;
      for (const Piece* p : active) value += p->value;
      add(bound, active.empty() ? 0.0 : value);
      at = bound;
    }
    std::erase_if(active, [&](const Piece* p) { return p->end <= bound; });
    for (; next < pieces.size() && pieces[next].first == bound; ++next) {
      const Piece* p = &pieces[next];
      active.insert(std::upper_bound(active.begin(), active.end(), p,
                                     [](const Piece* a, const Piece* b) {
                                       return a->slice < b->slice;
                                     }),
                    p);
    }
  }
  return std::make_unique<AdaptiveSeries>(origin_ns, kInitialBinNs, std::move(runs));
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
  if (!slice.with_gil.empty()) into->with_gil = slice.with_gil;
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
  into->shared_memory.insert(into->shared_memory.end(), slice.shared_memory.begin(),
                             slice.shared_memory.end());
  if (slice.own_io) {
    if (!into->own_io) into->own_io = std::make_unique<TimeSpans>(origin_ns, resolution_ns);
    into->own_io->Absorb(*slice.own_io);
  }
}

// The files of one process's slice into the slice's paths (their counts and
// details, unless its analyzer counted them there already).
void AddFiles(const ProcessResult& r, int file, SliceTotals* totals) {
  SliceFiles& files = *totals->files;
  const bool counted = r.files.empty();
  auto counts = r.files.begin();
  auto detail = r.file_details.begin();
  for (const FileRef& ref : r.file_refs) {
    const uint32_t at = files.Entry(ref.path_id);
    SliceFile& f = files.entries[at];
    f.category = ref.category;
    if (!counted) {
      f.counts.Merge(*counts++);
      f.detail.Merge(*detail++);
    }
    ++f.named;
    totals->named_by.emplace_back(file, ref.kind);
    totals->named_files.push_back(at);
  }
}

}  // namespace

uint32_t SliceFiles::Entry(uint32_t path_id) {
  auto [at, added] = of.try_emplace(path_id, static_cast<uint32_t>(entries.size()));
  if (added) entries.emplace_back().path = path_id;
  return at->second;
}

std::pair<FileCounts*, FileDetail*> SliceFiles::Of(uint32_t path_id) {
  SliceFile& f = entries[Entry(path_id)];
  return {&f.counts, &f.detail};
}

SliceGroup::SliceGroup(int64_t origin_ns, int64_t resolution_ns, int64_t series_origin_ns)
    : io(origin_ns, resolution_ns),
      read_bytes(series_origin_ns, kInitialBinNs),
      read_calls(series_origin_ns, kInitialBinNs),
      read_ns(series_origin_ns, kInitialBinNs) {}

SliceTotals::SliceTotals(int64_t origin_ns, int64_t resolution_ns, int64_t slice_start_ns,
                         std::unique_ptr<SliceFiles> files)
    : origin_ns(origin_ns),
      resolution_ns(resolution_ns),
      slice_start_ns(slice_start_ns),
      files(files != nullptr ? std::move(files) : std::make_unique<SliceFiles>()),
      other_io(origin_ns, resolution_ns) {
  for (int i = 0; i < kLayerCount; ++i) {
    layer_read_bytes.emplace_back(slice_start_ns, kInitialBinNs);
    layer_busy.emplace_back(origin_ns, resolution_ns);
  }
}

ProcessSlice Seal(ProcessResult r, int file, const SealGroup& group, SliceTotals* totals) {
  for (int i = 0; i < kLayerCount; ++i) {
    totals->layers[i].Merge(r.layers[i]);
    totals->layer_read_bytes[i].Merge(r.read_bytes_by_layer[i]);
    r.layer_busy[i].SetInto(&totals->layer_busy[i]);
  }
  totals->data_read_sizes.Merge(r.data_read_sizes);
  AddFiles(r, file, totals);
  // As MergeProcess: a group's processes' busy time and read series go to
  // the group, other processes' busy time to the run's alone.
  if (group.trainer >= 0) {
    SliceGroup& g = totals->groups
                        .try_emplace(group.trainer, totals->origin_ns, totals->resolution_ns,
                                     totals->slice_start_ns)
                        .first->second;
    r.io->SetInto(&g.io);
    g.read_bytes.Merge(*r.data_read_bytes);
    g.read_calls.Merge(*r.data_read_calls);
    g.read_ns.Merge(*r.data_read_ns);
  } else {
    r.io->SetInto(&totals->other_io);
  }
  ProcessSlice p;
  p.events = r.events;
  p.dropped = r.dropped;
  p.end = std::move(r.end);
  p.reads = r.reads;
  p.read_bytes = r.read_bytes;
  p.write_calls = r.write_calls;
  p.write_bytes = r.write_bytes;
  p.metadata_ops = r.metadata_ops;
  p.ipc = std::move(r.ipc);
  p.datasets = std::move(r.datasets);
  p.tfrecords = std::move(r.tfrecords);
  p.cuda = std::move(r.cuda);
  p.mapped = std::move(r.mapped);
  p.py = std::move(r.py);
  if (group.loader) r.waits.own_io.reset();  // a loader's main thread reads all its data
  p.waits = std::move(r.waits);
  p.writes = std::move(r.writes);
  r.cpu_ns->Compact();
  r.run_queue_ns->Compact();
  p.cpu_ns = std::move(r.cpu_ns);
  p.run_queue_ns = std::move(r.run_queue_ns);
  p.cuda_copies = std::move(r.cuda_copies);
  p.io_busy_ns = r.io_busy_ns;
  p.late_clipped_ns = r.late_clipped_ns;
  p.first_unix_ns = r.first_unix_ns;
  p.last_unix_ns = r.last_unix_ns;
  p.end_unix_ns = r.end_unix_ns;
  return p;
}

void Index(SliceTotals* totals) {
  // A counting sort: each path's place from the counts, then each entry in
  // the order it came.
  uint32_t next = 0;
  for (SliceFile& f : totals->files->entries) {
    f.first_named = next;
    next += f.named;
    f.named = 0;
  }
  std::vector<std::pair<int, InternedString::Kind>> sorted(totals->named_by.size());
  for (size_t k = 0; k < sorted.size(); ++k) {
    SliceFile& f = totals->files->entries[totals->named_files[k]];
    sorted[f.first_named + f.named++] = totals->named_by[k];
  }
  totals->named_by = std::move(sorted);
  totals->named_files = std::vector<uint32_t>();
  totals->files->of = absl::flat_hash_map<uint32_t, uint32_t>();  // no more files come
}

void AbsorbCpu(const std::vector<const ProcessSlice*>& slices, ProcessResult* into) {
  for (auto [of, series] : {std::pair{&ProcessSlice::cpu_ns, &into->cpu_ns},
                            std::pair{&ProcessSlice::run_queue_ns, &into->run_queue_ns}}) {
    std::vector<const AdaptiveSeries*> parts;
    for (const ProcessSlice* slice : slices) parts.push_back((slice->*of).get());
    if (std::unique_ptr<AdaptiveSeries> sum = SumRuns(parts, (*series)->origin_ns())) {
      *series = std::move(sum);
    } else {
      for (const AdaptiveSeries* part : parts) (*series)->AddSeries(*part);
    }
  }
}

void AbsorbSlice(const ProcessSlice& slice, const RunState& s, ProcessResult* into) {
  into->events += slice.events;
  into->dropped = slice.dropped;
  into->end = slice.end;
  AddTo(&into->reads, slice.reads);
  AddTo(&into->read_bytes, slice.read_bytes);
  AddTo(&into->write_calls, slice.write_calls);
  AddTo(&into->write_bytes, slice.write_bytes);
  AddTo(&into->metadata_ops, slice.metadata_ops);
  for (const auto& [kind, c] : slice.ipc) into->ipc[kind].Merge(c);
  for (const auto& [name, d] : slice.datasets) into->datasets[name].Merge(d);
  TfRecordAccumulator tfrecords = slice.tfrecords;
  into->tfrecords.Absorb(std::move(tfrecords), 0);
  into->cuda.Merge(slice.cuda);
  MappedAccumulator mapped = slice.mapped;
  into->mapped.Absorb(std::move(mapped), 0);
  AppendPySamples(slice.py, &into->py);
  AppendWaits(slice.waits, s.origin_ns, s.resolution_ns, &into->waits);
  into->writes->Absorb(*slice.writes);
  into->cuda_copies.insert(into->cuda_copies.end(), slice.cuda_copies.begin(),
                           slice.cuda_copies.end());
  AddTo(&into->io_busy_ns, slice.io_busy_ns);
  AddTo(&into->late_clipped_ns, slice.late_clipped_ns);
  into->first_unix_ns = std::min(into->first_unix_ns, slice.first_unix_ns);
  into->last_unix_ns = std::max(into->last_unix_ns, slice.last_unix_ns);
  into->end_unix_ns = std::max(into->end_unix_ns, slice.end_unix_ns);
}

void AddTotals(const std::vector<const SliceTotals*>& slices, const PathTable& paths,
               const std::vector<int>& index_of, const std::vector<int>& rank_of,
               RunState& s) {
  // A path's entries of every slice, in slice order, so that the processes
  // that named it are counted once each (`counted` holds, by catalog index,
  // the last path a process was counted for, plus one).
  std::vector<std::tuple<uint32_t, const SliceFile*, const SliceTotals*>> entries;
  for (const SliceTotals* t : slices) {
    for (int i = 0; i < kLayerCount; ++i) {
      s.layers[i].Merge(t->layers[i]);
      s.layer_read_bytes[i].AddSeries(t->layer_read_bytes[i]);
      t->layer_busy[i].SetInto(&s.layer_busy[i]);
    }
    s.data_read_sizes.Merge(t->data_read_sizes);
    t->other_io.SetInto(s.all_io.get());
    for (const auto& [trainer, g] : t->groups) {
      const int index = index_of[trainer];
      auto group = index >= 0 ? s.groups.find(index) : s.groups.end();
      if (group == s.groups.end()) {
        g.io.SetInto(s.all_io.get());  // no longer a trainer's: as a process of no group
        continue;
      }
      g.io.SetInto(group->second.io.get());
      group->second.read_bytes->AddSeries(g.read_bytes);
      group->second.read_calls->AddSeries(g.read_calls);
      group->second.read_ns->AddSeries(g.read_ns);
    }
    for (const SliceFile& f : t->files->entries) {
      entries.emplace_back(s.paths.Intern(paths.path(f.path), /*categorize=*/true).id, &f, t);
    }
  }
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  std::vector<uint32_t> counted(s.catalog.entries.size(), 0);
  for (const auto& [id, slice_file, t] : entries) {
    run_state::GrowFiles(s, id);
    FileAccumulator& f = s.files_by_id[id];
    for (uint32_t k = 0; k < slice_file->named; ++k) {
      const auto& [file, kind] = t->named_by[slice_file->first_named + k];
      const int index = index_of[file];
      if (index < 0) continue;
      if (counted[index] != id + 1) {
        counted[index] = id + 1;
        f.last_process = index;
        ++f.processes;
      }
      if (rank_of[file] >= f.kind_rank) {
        f.kind = kind;
        f.kind_rank = rank_of[file];
      }
    }
    f.category = slice_file->category;
    f.counts.Merge(slice_file->counts);
    if (id < s.details_by_id.size()) s.details_by_id[id].Merge(slice_file->detail);
  }
}

}  // namespace iotap::analyzer::internal
