// A rank's partial run state written and merged (partial_run.h). Past 800
// lines on purpose: every struct the state holds lists its fields here once,
// beside the size check that catches a member added without being listed,
// so that writing and reading cannot drift apart; split by struct, the
// lists would sit far from the RunState they must match.

#include "analyzer/merge/partial_run.h"

#include <algorithm>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/merge/bitmap_wire.h"
#include "analyzer/base/numbers.h"
#include "google/protobuf/message_lite.h"

namespace iotap::analyzer::internal {

using run_state::ProcessSummary;
using run_state::RunState;
using run_state::TrainerGroup;

namespace {

// What a partial holds, section by section after its header.
enum Section : uint64_t {
  kEnd = 0,
  kSums = 1,     // events, drops, layers, run-wide series and busy time
  kProcess = 2,  // one process: its summary, marker steps, read issues
  kFile = 3,     // one path's figures
  kIpc = 4,      // one kind of descriptor's figures
  kDataset = 5,
  kTfRecord = 6,
  kCuda = 7,
  kGroup = 8,  // one trainer group's busy time and series
  kMapped = 9,  // mapped reads and io_uring requests
};
constexpr uint64_t kMagic = 0x69746170'70617274;  // "itappart"
constexpr uint64_t kVersion = 2;  // 2: bitmaps' chunks as runs

// Each struct that travels names its fields once, in Fields(x, f), for both
// directions. The sizes below catch a field added to one of them without
// being named here (on the 64-bit Linux build CI makes): name it in Fields,
// say how it merges if it is not a sum (MergeInto), then update the size.
#define IOTAP_FIELDS_OF(T, size)                                                          \
  static_assert(sizeof(T) == (size), #T " has changed: name its new fields in Fields()" \
                                       " (analyzer/merge/partial_run.cc) and update this size")

IOTAP_FIELDS_OF(TimeWindow, 16);
template <typename F>
void Fields(TimeWindow& x, F&& f) {
  f(x.start_ns);
  f(x.end_ns);
}

IOTAP_FIELDS_OF(StepSpan, 64);
template <typename F>
void Fields(StepSpan& x, F&& f) {
  f(x.step);
  f(x.rank);
  f(x.pid);
  f(x.start_ns);
  f(x.end_ns);
  f(x.data_waits);
  f(x.has_data_wait);
}

IOTAP_FIELDS_OF(StepMark, 48);
template <typename F>
void Fields(StepMark& x, F&& f) {
  f(x.name);
  f(x.time_ns);
  f(x.rank);
  f(x.pid);
}

IOTAP_FIELDS_OF(CollectiveEnd, 24);
template <typename F>
void Fields(CollectiveEnd& x, F&& f) {
  f(x.step);
  f(x.index);
  f(x.rank);
  f(x.end_ns);
}

IOTAP_FIELDS_OF(StepLog, 200);
template <typename F>
void Fields(StepLog& x, F&& f) {
  f(x.source);
  f(x.path);
  f(x.spans);
  f(x.marks);
  f(x.collectives);
  f(x.wall_clock);
  f(x.notes);
  f(x.step_definition);
  f(x.errors);
}

IOTAP_FIELDS_OF(ReadIssue, 88);
template <typename F>
void Fields(ReadIssue& x, F&& f) {
  f(x.path);
  f(x.offset);
  f(x.bytes_skipped);
  f(x.truncated);
  f(x.message);
}

IOTAP_FIELDS_OF(ProcessSummary, 528);
template <typename F>
void Fields(ProcessSummary& x, F&& f) {
  f(x.header);
  f(x.end);
  f(x.events);
  f(x.dropped);
  f(x.reads);
  f(x.read_bytes);
  f(x.write_calls);
  f(x.write_bytes);
  f(x.metadata_ops);
  f(x.summary);
  f(x.first_unix_ns);
  f(x.last_unix_ns);
  f(x.io_busy_ns);
}

IOTAP_FIELDS_OF(FileDetail, 240);
template <typename F>
void Fields(FileDetail& x, F&& f) {
  f(x.size_bytes);
  f(x.direct_opens);
  f(x.dontneed_advice);
  f(x.hdf5_reads);
  f(x.read_sizes);
  f(x.write_sizes);
  f(x.read_pattern);
  f(x.read_ranges);
}

IOTAP_FIELDS_OF(DatasetAccumulator, 336);
template <typename F>
void Fields(DatasetAccumulator& x, F&& f) {
  f(x.description);
  f(x.described);
  f(x.described_rank);
  f(x.opens);
  f(x.closes);
  f(x.reads);
  f(x.read_elements);
  f(x.read_bytes);
  f(x.read_ns);
  f(x.writes);
  f(x.write_elements);
  f(x.write_bytes);
  f(x.write_ns);
  f(x.chunk_reads);
  f(x.chunk_read_bytes);
  f(x.chunk_read_ns);
  f(x.chunk_writes);
  f(x.chunk_write_bytes);
  f(x.failed_calls);
  f(x.nested_calls);
  f(x.posix_reads);
  f(x.posix_read_bytes);
  f(x.posix_writes);
  f(x.posix_write_bytes);
  f(x.posix_other);
  f(x.min_posix_reads_per_read);
  f(x.max_posix_reads_per_read);
  f(x.processes);
}

IOTAP_FIELDS_OF(TfRecordFileAccumulator, 256);
template <typename F>
void Fields(TfRecordFileAccumulator& x, F&& f) {
  f(x.path);
  f(x.described);
  f(x.described_rank);
  f(x.compression);
  f(x.detected_by_suffix);
  f(x.detected_by_header);
  f(x.note);
  f(x.note_rank);
  f(x.records);
  f(x.record_bytes);
  f(x.min_record);
  f(x.max_record);
  f(x.size_log2);
  f(x.reads_completing_records);
  f(x.spanned_records);
  f(x.index_unknown_records);
  f(x.sequential_steps);
  f(x.restarts);
  f(x.jumps);
  f(x.processes);
}

IOTAP_FIELDS_OF(CudaCopyKey, 72);
template <typename F>
void Fields(CudaCopyKey& x, F&& f) {
  f(x.direction);
  f(x.host_memory);
  f(x.async);
}

IOTAP_FIELDS_OF(CudaDeviceKey, 64);
template <typename F>
void Fields(CudaDeviceKey& x, F&& f) {
  f(x.direction);
  f(x.host_memory);
}

IOTAP_FIELDS_OF(CudaAccumulator, 128);
template <typename F>
void Fields(CudaAccumulator& x, F&& f) {
  f(x.copies);
  f(x.device_copies);
  f(x.kernels);
  f(x.kernel_ns);
  f(x.pinned_allocations);
  f(x.pinned_bytes);
}

IOTAP_FIELDS_OF(TimedEvent, 48);
template <typename F>
void Fields(TimedEvent& x, F&& f) {
  f(x.op);
  f(x.start_unix_ns);
  f(x.end_unix_ns);
  f(x.aux);
  f(x.bytes);
  f(x.flags);
}

IOTAP_FIELDS_OF(Reception, 32);
template <typename F>
void Fields(Reception& x, F&& f) {
  f(x.start_ns);
  f(x.end_ns);
  f(x.channel);
  f(x.main_thread);
  f(x.continues);
  f(x.gap_start_ns);
}

// own_io is not sent: the run keeps it in the group (TrainerGroup::own_io).
IOTAP_FIELDS_OF(WaitEvidence, 88);
template <typename F>
void Fields(WaitEvidence& x, F&& f) {
  f(x.threshold_ns);
  f(x.channels);
  f(x.receptions);
  f(x.sync_waits);
}

IOTAP_FIELDS_OF(PyFunction, 72);
template <typename F>
void Fields(PyFunction& x, F&& f) {
  f(x.name);
  f(x.file);
  f(x.line);
}

IOTAP_FIELDS_OF(PySample, 32);
template <typename F>
void Fields(PySample& x, F&& f) {
  f(x.start_unix_ns);
  f(x.end_unix_ns);
  f(x.cpu_ns);
  f(x.stack);
  f(x.tid);
}

IOTAP_FIELDS_OF(PySamples, 144);
template <typename F>
void Fields(PySamples& x, F&& f) {
  f(x.functions);
  f(x.stacks);
  f(x.samples);
  f(x.started);
  f(x.unavailable);
  f(x.with_gil);
}

IOTAP_FIELDS_OF(MappedFileStats, 80);
template <typename F>
void Fields(MappedFileStats& x, F&& f) {
  f(x.path);
  f(x.faults);
  f(x.major_faults);
  f(x.span_bytes);
  f(x.touched_bytes);
  f(x.estimated_spans);
  f(x.major_ns);
}

IOTAP_FIELDS_OF(UringFileStats, 96);
template <typename F>
void Fields(UringFileStats& x, F&& f) {
  f(x.path);
  f(x.reads);
  f(x.read_bytes);
  f(x.writes);
  f(x.write_bytes);
  f(x.other);
  f(x.failed);
  f(x.incomplete);
  f(x.read_ns);
}

// The lists are Totals()'s; an accumulator keeps them empty.
IOTAP_FIELDS_OF(MappedTotals, 136);
template <typename F>
void Fields(MappedTotals& x, F&& f) {
  f(x.uring_calls);
  f(x.uring_unseen_requests);
  f(x.processes_sampled);
  f(x.processes_counted);
  f(x.lost_faults);
  f(x.counted_minor_faults);
  f(x.counted_major_faults);
  f(x.counted_read_bytes);
}

template <typename F>
void Fields(MappedAccumulator& x, F&& f) {
  x.ForEachField(f);
}

template <typename F>
void Fields(std::pair<int, int>& x, F&& f) {
  f(x.first);
  f(x.second);
}

// A trainer group's members: what reading fills is sent by PutGroup; what
// AnalyzeGroups fills later (steps, epochs, step_source, step_waits,
// inferred) is not.
IOTAP_FIELDS_OF(TrainerGroup, 480);

// RunState itself: a new member must be sent and merged below (or, if every
// rank works it out alike before reading, need not be: series_origin_ns, and
// the clocks, exchange files' problems included; or, the groups' results,
// is worked out where the groups are merged: AnalyzeGroups).
IOTAP_FIELDS_OF(RunState, 17200);

// Structs of integer fields only: sent word by word, whatever they hold.
template <typename T>
constexpr bool kWords = std::is_same_v<T, FileCounts> || std::is_same_v<T, SizeHistogram> ||
                        std::is_same_v<T, DarshanHistogram> || std::is_same_v<T, AccessPattern> ||
                        std::is_same_v<T, LayerAccumulator> ||
                        std::is_same_v<T, CudaCopyCounts> || std::is_same_v<T, CudaDeviceCounts>;

template <typename T>
void Put(WireWriter& w, const T& v);
template <typename T>
void Get(WireReader& r, T* v);
template <typename T>
void Put(WireWriter& w, const std::vector<T>& v);
template <typename T>
void Get(WireReader& r, std::vector<T>* v);
template <typename K, typename V>
void Put(WireWriter& w, const std::map<K, V>& m);
template <typename K, typename V>
void Get(WireReader& r, std::map<K, V>* m);

template <typename T>
void Put(WireWriter& w, const std::vector<T>& v) {
  w.U(v.size());
  for (const T& x : v) Put(w, x);
}
template <typename T>
void Get(WireReader& r, std::vector<T>* v) {
  v->resize(r.Count(uint64_t{1} << 28));
  for (T& x : *v) Get(r, &x);
}
template <typename K, typename V>
void Put(WireWriter& w, const std::map<K, V>& m) {
  w.U(m.size());
  for (const auto& [k, v] : m) {
    Put(w, k);
    Put(w, v);
  }
}
template <typename K, typename V>
void Get(WireReader& r, std::map<K, V>* m) {
  uint64_t n = r.Count(uint64_t{1} << 28);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    K k{};
    Get(r, &k);
    Get(r, &(*m)[k]);
  }
}

template <typename T>
void Put(WireWriter& w, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    w.U(v ? 1 : 0);
  } else if constexpr (std::is_enum_v<T> || std::is_signed_v<T>) {
    w.S(static_cast<int64_t>(v));
  } else if constexpr (std::is_unsigned_v<T>) {
    w.U(v);
  } else if constexpr (std::is_same_v<T, std::string>) {
    w.Str(v);
  } else if constexpr (std::is_base_of_v<google::protobuf::MessageLite, T>) {
    w.Str(v.SerializeAsString());
  } else if constexpr (std::is_same_v<T, ByteRanges>) {
    size_t n = 0;
    v.ForEachRange([&](int64_t, int64_t) { ++n; });
    w.U(n);
    v.ForEachRange([&](int64_t start, int64_t end) {
      w.S(start);
      w.S(end - start);
    });
    w.U(v.approximate() ? 1 : 0);
  } else if constexpr (kWords<T>) {
    w.Words(v);
  } else {
    Fields(const_cast<T&>(v), [&](const auto& field) { Put(w, field); });
  }
}

template <typename T>
void Get(WireReader& r, T* v) {
  if constexpr (std::is_same_v<T, bool>) {
    *v = r.U() != 0;
  } else if constexpr (std::is_enum_v<T> || std::is_signed_v<T>) {
    *v = static_cast<T>(r.S());
  } else if constexpr (std::is_unsigned_v<T>) {
    *v = static_cast<T>(r.U());
  } else if constexpr (std::is_same_v<T, std::string>) {
    *v = r.Str();
  } else if constexpr (std::is_base_of_v<google::protobuf::MessageLite, T>) {
    if (!v->ParseFromString(r.Str())) r.Fail();
  } else if constexpr (std::is_same_v<T, ByteRanges>) {
    uint64_t n = r.Count();
    for (uint64_t i = 0; i < n && r.ok(); ++i) {
      int64_t start = r.S();
      int64_t bytes = r.S();
      if (bytes <= 0) r.Fail();
      if (r.ok()) v->Add(start, static_cast<uint64_t>(bytes));
    }
    if (r.U() != 0) v->MarkApproximate();
  } else if constexpr (kWords<T>) {
    r.Words(v);
  } else {
    Fields(*v, [&](auto& field) { Get(r, &field); });
  }
}

// A series as runs of equal bins, up to its last bin that is not zero: a
// CPU sample's time is spread evenly over the bins since the one before, so
// equal neighbours are the rule.
void PutSeries(WireWriter& w, const AdaptiveSeries& s) {
  std::vector<std::pair<size_t, double>> runs;
  s.ForEachRun([&](size_t n, double value) { runs.emplace_back(n, value); });
  while (!runs.empty() && runs.back().second == 0) runs.pop_back();
  size_t bins = 0;
  for (const auto& [n, value] : runs) bins += n;
  w.S(s.bin_ns());
  w.U(bins);
  for (const auto& [n, value] : runs) {
    w.U(n);
    w.D(value);
  }
}

// A series as PutSeries wrote it, with `origin_ns`: as runs where they take
// less memory than its bins.
AdaptiveSeries GetSeries(WireReader& r, int64_t origin_ns) {
  int64_t bin_ns = r.S();
  const uint64_t bins = r.Count(AdaptiveSeries::kMaxBins);
  std::vector<AdaptiveSeries::Run> runs;
  for (uint64_t end = 0; end < bins && r.ok();) {
    uint64_t run = r.U();
    double value = r.D();
    if (run == 0 || run > bins - end) {
      r.Fail();
      break;
    }
    end += run;
    runs.push_back({static_cast<uint32_t>(end), value});
  }
  if (bin_ns <= 0) {
    r.Fail();
    bin_ns = 1;
  }
  if (!r.ok()) return AdaptiveSeries(origin_ns, bin_ns);
  if (runs.size() * sizeof(AdaptiveSeries::Run) < bins * sizeof(double)) {
    return AdaptiveSeries(origin_ns, bin_ns, std::move(runs));
  }
  std::vector<double> values;
  values.reserve(bins);
  for (const AdaptiveSeries::Run& run : runs) values.resize(run.end, run.value);
  return AdaptiveSeries(origin_ns, bin_ns, std::move(values));
}

// Adds to `*bytes` (if not null) what `put` writes.
template <typename F>
void Tally(WireWriter& w, uint64_t* bytes, F&& put) {
  const uint64_t before = w.bytes_written();
  put();
  if (bytes != nullptr) *bytes += w.bytes_written() - before;
}

void MergeSeries(WireReader& r, AdaptiveSeries* into) {
  AdaptiveSeries s = GetSeries(r, into->origin_ns());
  if (r.ok()) into->Merge(s);
}

void PutHeader(WireWriter& w, const RunState& s) {
  w.U(kMagic);
  w.U(kVersion);
  w.U(static_cast<uint64_t>(s.scope));
  w.U(s.catalog.entries.size());
  w.S(s.origin_ns);
  w.S(s.resolution_ns);
  w.S(s.range_start_ns);
  w.S(s.range_end_ns);
  w.U(s.groups.size());
}

absl::Status CheckHeader(WireReader& r, const RunState& s) {
  if (r.U() != kMagic || r.U() != kVersion) {
    return absl::DataLossError("not a partial analysis of this iotap version");
  }
  uint64_t scope = r.U();
  uint64_t entries = r.U();
  int64_t origin = r.S(), resolution = r.S(), from = r.S(), to = r.S();
  uint64_t groups = r.U();
  if (!r.ok() || scope != static_cast<uint64_t>(s.scope) || entries != s.catalog.entries.size() ||
      origin != s.origin_ns || resolution != s.resolution_ns || from != s.range_start_ns ||
      to != s.range_end_ns || groups != s.groups.size()) {
    return absl::FailedPreconditionError(
        "a partial analysis comes from a run prepared otherwise (a different catalog, clock "
        "or time range: did the trace files change while the ranks read them?)");
  }
  return absl::OkStatus();
}

void PutSums(WireWriter& w, const RunState& s, PartialSizes* sizes) {
  w.U(kSums);
  w.U(s.events);
  w.U(s.dropped);
  w.S(s.late_clipped_ns);
  w.S(s.end_ns);
  if (s.scope != AnalysisScope::kFull) return;
  Put(w, s.data_read_sizes);
  for (const LayerAccumulator& l : s.layers) Put(w, l);
  Tally(w, sizes ? &sizes->series : nullptr, [&] {
    for (const AdaptiveSeries& series : s.layer_read_bytes) PutSeries(w, series);
  });
  Tally(w, sizes ? &sizes->bitmaps : nullptr, [&] {
    PutBitmap(w, *s.all_io);
    for (const TimeBitmap& b : s.layer_busy) PutBitmap(w, b);
  });
}

absl::Status MergeSums(WireReader& r, RunState& s) {
  s.events += r.U();
  AddTo(&s.dropped, r.U());
  AddTo(&s.late_clipped_ns, r.S());
  s.end_ns = std::max(s.end_ns, r.S());
  if (s.scope != AnalysisScope::kFull) return absl::OkStatus();
  SizeHistogram sizes;
  Get(r, &sizes);
  s.data_read_sizes.Merge(sizes);
  for (LayerAccumulator& l : s.layers) {
    LayerAccumulator o;
    Get(r, &o);
    l.Merge(o);
  }
  for (AdaptiveSeries& series : s.layer_read_bytes) MergeSeries(r, &series);
  absl::Status merged = MergeBitmap(r, s.all_io.get());
  for (TimeBitmap& b : s.layer_busy) {
    if (merged.ok()) merged = MergeBitmap(r, &b);
  }
  return merged;
}

// Whether the partial carries catalog entry i: read, or tried.
bool Carried(const RunState& s, size_t i) { return s.read_ok[i] || !s.file_issues[i].empty(); }

void PutProcess(WireWriter& w, const RunState& s, size_t i) {
  w.U(kProcess);
  w.U(i);
  Put(w, s.file_issues[i]);
  w.U(s.read_ok[i] ? 1 : 0);
  if (!s.read_ok[i]) return;
  Put(w, s.processes[i]);
  Put(w, s.marker_steps[i]);
  if (s.scope == AnalysisScope::kFull) Put(w, s.py_samples[i]);
}

absl::Status MergeProcess(WireReader& r, RunState& s) {
  uint64_t i = r.U();
  if (i >= s.catalog.entries.size() || Carried(s, i)) {
    return absl::DataLossError(absl::StrCat("process ", i, " came from two ranks, or none"));
  }
  Get(r, &s.file_issues[i]);
  s.read_ok[i] = r.U() != 0;
  if (s.read_ok[i]) {
    Get(r, &s.processes[i]);
    Get(r, &s.marker_steps[i]);
    if (s.scope == AnalysisScope::kFull) Get(r, &s.py_samples[i]);
  }
  return absl::OkStatus();
}

// A file's or descriptor kind's figures, `category` as a flag (the path
// gives it again).
void PutFile(WireWriter& w, const FileAccumulator& f) {
  Put(w, f.kind);
  w.S(f.kind_rank);
  w.U(f.category != nullptr ? 1 : 0);
  w.U(f.processes);
  Put(w, f.counts);
  Put(w, f.detail);
}

// Reads what PutFile wrote into `o` (category: whether it had one).
bool GetFile(WireReader& r, FileAccumulator* o) {
  Get(r, &o->kind);
  o->kind_rank = static_cast<int>(r.S());
  bool categorized = r.U() != 0;
  o->processes = r.U();
  Get(r, &o->counts);
  Get(r, &o->detail);
  return categorized;
}

// As MergeCounts (run_analysis.cc) adds a process's file.
void MergeFile(FileAccumulator& into, FileAccumulator& o) {
  if (o.kind_rank >= into.kind_rank) {
    into.kind = o.kind;
    into.kind_rank = o.kind_rank;
  }
  into.processes += o.processes;
  into.counts.Merge(o.counts);
  into.detail.Merge(o.detail);
}

void PutFiles(WireWriter& w, const RunState& s) {
  std::string_view previous;
  for (uint32_t id = 0; id < s.files_by_id.size(); ++id) {
    const FileAccumulator& f = s.files_by_id[id];
    if (f.processes == 0) continue;  // named only by a trace that could not be read
    std::string_view path = s.paths.path(id);
    size_t shared = 0;
    while (shared < path.size() && shared < previous.size() && path[shared] == previous[shared]) {
      ++shared;
    }
    w.U(kFile);
    w.U(shared);
    w.Str(path.substr(shared));
    PutFile(w, f);
    previous = path;
  }
}

void MergeFiles(WireReader& r, RunState& s, std::string& previous) {
  uint64_t shared = r.U();
  if (shared > previous.size()) {
    r.Fail();
    return;
  }
  previous.resize(shared);
  previous += r.Str();
  FileAccumulator o;
  bool categorized = GetFile(r, &o);
  if (!r.ok()) return;
  PathTable::Entry e = s.paths.Intern(previous, categorized);
  if (e.id >= s.files_by_id.size()) s.files_by_id.resize(e.id + 1);
  FileAccumulator& into = s.files_by_id[e.id];
  if (categorized) into.category = e.category;
  MergeFile(into, o);
}

void PutGroup(WireWriter& w, int index, const TrainerGroup& g, PartialSizes* sizes) {
  uint64_t* bitmap_bytes = sizes ? &sizes->bitmaps : nullptr;
  w.U(kGroup);
  w.S(index);
  Tally(w, bitmap_bytes, [&] {
    PutBitmap(w, *g.io);
    PutBitmap(w, *g.writes);
  });
  Tally(w, sizes ? &sizes->series : nullptr, [&] {
    for (const auto* series : {&g.read_bytes, &g.read_calls, &g.read_ns, &g.trainer_cpu}) {
      PutSeries(w, **series);
    }
    for (const auto* loaders : {&g.loader_cpu, &g.loader_run_queue}) {
      w.U(loaders->size());
      for (const auto& [loader, series] : *loaders) {
        w.S(loader);
        PutSeries(w, series);
      }
    }
  });
  Put(w, g.cuda_copies);
  // The trainer's evidence of waiting, its own reads when it has no
  // loaders, and the loaders' pipes and sockets.
  Put(w, g.waits);
  w.U(g.own_io ? 1 : 0);
  if (g.own_io) Tally(w, bitmap_bytes, [&] { PutBitmap(w, *g.own_io); });
  std::vector<std::string> channels(g.loader_channels.begin(), g.loader_channels.end());
  std::sort(channels.begin(), channels.end());
  Put(w, channels);
}

absl::Status MergeGroup(WireReader& r, RunState& s) {
  auto it = s.groups.find(static_cast<int>(r.S()));
  if (it == s.groups.end()) return absl::DataLossError("a trainer group no rank knows");
  TrainerGroup& g = it->second;
  for (TimeBitmap* bitmap : {g.io.get(), g.writes.get()}) {
    absl::Status merged = MergeBitmap(r, bitmap);
    if (!merged.ok()) return merged;
  }
  for (auto* series : {&g.read_bytes, &g.read_calls, &g.read_ns, &g.trainer_cpu}) {
    MergeSeries(r, series->get());
  }
  for (auto* loaders : {&g.loader_cpu, &g.loader_run_queue}) {
    uint64_t n = r.Count(s.catalog.entries.size());
    for (uint64_t k = 0; k < n && r.ok(); ++k) {
      int loader = static_cast<int>(r.S());
      loaders->insert_or_assign(loader, GetSeries(r, s.origin_ns));
    }
  }
  std::vector<TimedEvent> copies;
  Get(r, &copies);
  if (!copies.empty()) g.cuda_copies = std::move(copies);  // the trainer's: one rank has it
  WaitEvidence waits;
  Get(r, &waits);
  // The trainer's, from the one rank that read it: the others' are empty.
  if (waits.threshold_ns != 0 || !waits.channels.empty() || !waits.receptions.empty() ||
      !waits.sync_waits.empty()) {
    g.waits = std::move(waits);
  }
  if (r.U() != 0) {
    if (!g.own_io) g.own_io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
    absl::Status merged = MergeBitmap(r, g.own_io.get());
    if (!merged.ok()) return merged;
  }
  std::vector<std::string> channels;
  Get(r, &channels);
  g.loader_channels.insert(channels.begin(), channels.end());
  return absl::OkStatus();
}

}  // namespace

void WritePartial(const RunState& s, WireWriter& out, PartialSizes* sizes) {
  PutHeader(out, s);
  PutSums(out, s, sizes);
  Tally(out, sizes ? &sizes->processes : nullptr, [&] {
    for (size_t i = 0; i < s.catalog.entries.size(); ++i) {
      if (Carried(s, i)) PutProcess(out, s, i);
    }
  });
  Tally(out, sizes ? &sizes->files : nullptr, [&] { PutFiles(out, s); });
  for (const auto& [kind, f] : s.ipc) {
    out.U(kIpc);
    out.S(kind);
    PutFile(out, f);
  }
  for (const auto& [name, d] : s.datasets) {
    out.U(kDataset);
    out.Str(name);
    Put(out, d);
  }
  for (const TfRecordFileAccumulator& f : s.tfrecords.Files()) {
    out.U(kTfRecord);
    Put(out, f);
  }
  out.U(kCuda);
  Put(out, s.cuda);
  out.U(kMapped);
  Put(out, s.mapped);
  for (const auto& [index, group] : s.groups) PutGroup(out, index, group, sizes);
  out.U(kEnd);
  out.Finish();
  if (sizes != nullptr) sizes->total += out.bytes_written();
}

absl::Status MergePartial(WireReader& in, RunState& s) {
  absl::Status status = CheckHeader(in, s);
  std::string previous_path;
  while (status.ok() && in.ok()) {
    uint64_t section = in.U();
    if (section == kEnd) break;
    switch (section) {
      case kSums: status = MergeSums(in, s); break;
      case kProcess: status = MergeProcess(in, s); break;
      case kFile: MergeFiles(in, s, previous_path); break;
      case kIpc: {
        int kind = static_cast<int>(in.S());
        FileAccumulator o;
        GetFile(in, &o);
        FileAccumulator& into = s.ipc[kind];
        into.kind = static_cast<InternedString::Kind>(kind);
        into.processes += o.processes;
        into.counts.Merge(o.counts);
        break;
      }
      case kDataset: {
        std::string name = in.Str();
        DatasetAccumulator d;
        Get(in, &d);
        if (in.ok()) s.datasets[name].Merge(d);
        break;
      }
      case kTfRecord: {
        TfRecordFileAccumulator f;
        Get(in, &f);
        if (in.ok()) s.tfrecords.AbsorbFile(f);
        break;
      }
      case kCuda: {
        CudaAccumulator c;
        Get(in, &c);
        if (in.ok()) s.cuda.Merge(c);
        break;
      }
      case kGroup: status = MergeGroup(in, s); break;
      case kMapped: {
        MappedAccumulator m;
        Get(in, &m);
        // Its notes carry their processes' ranks already.
        if (in.ok()) s.mapped.Absorb(std::move(m), -1);
        break;
      }
      default: in.Fail();
    }
  }
  if (!status.ok()) return status;
  if (!in.ok() || !in.AtEnd()) {
    return absl::DataLossError("a partial analysis is damaged or was cut short");
  }
  return absl::OkStatus();
}

}  // namespace iotap::analyzer::internal
