// A rank's partial run state written and merged (partial_run.h). Past 800
// lines on purpose: every struct the state holds lists its fields here once,
// beside the size check that catches a member added without being listed,
// so that writing and reading cannot drift apart; split by struct, the
// lists would sit far from the RunState they must match.

#include "analyzer/merge/partial_run.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/base/numbers.h"
#include "analyzer/merge/bitmap_wire.h"
#include "google/protobuf/message_lite.h"

namespace iotap::analyzer::internal {

using run_state::GroupResult;
using run_state::ProcessSummary;
using run_state::RunState;
using run_state::TrainerGroup;
using run_state::WaitTotals;

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
  kGroupResult = 8,  // one trainer group's part of the report, from the rank that read it
  kMapped = 9,       // mapped reads and io_uring requests
};
constexpr uint64_t kMagic = 0x69746170'70617274;  // "itappart"
// 2: bitmaps' chunks as runs; 3: groups' results instead of their state
constexpr uint64_t kVersion = 3;

// Each struct that travels names its fields once, in Fields(x, f), for both
// directions. The sizes below catch a field added to one of them without
// being named here (on the 64-bit Linux build CI makes): name it in Fields,
// say how it merges if it is not a sum (MergeInto), then update the size.
#define IOTAP_FIELDS_OF(T, size)                                                          \
  static_assert(sizeof(T) == (size), #T " has changed: name its new fields in Fields()" \
                                       " (analyzer/merge/partial_run.cc) and update this size")

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

// Of a process's Python samples only what the run's notes say about its
// sampling (AddSamplingNotes): its functions, stacks and samples went into
// its group's profile where it was read (GroupResult::py_profile).
IOTAP_FIELDS_OF(PySamples, 144);
template <typename F>
void SamplingFields(PySamples& x, F&& f) {
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

IOTAP_FIELDS_OF(WaitTotals, 120);
template <typename F>
void Fields(WaitTotals& x, F&& f) {
  f(x.measured_steps);
  f(x.inferred_steps);
  f(x.compared_steps);
  f(x.measured_ns);
  f(x.inferred_ns);
  f(x.agreed_ns);
  f(x.compared_step_ns);
  for (int64_t& ns : x.kind_ns) f(ns);
  f(x.measured_by);
}

// What the owner of a trainer group (the rank that read it) sends of it.
IOTAP_FIELDS_OF(GroupResult, 664);
template <typename F>
void Fields(GroupResult& x, F&& f) {
  f(x.has_steps);
  f(x.notes);
  f(x.step_sources);
  f(x.steps);
  f(x.compute_s);
  f(x.warmup_skipped);
  f(x.waits);
  f(x.in_steps_io_ns);
  f(x.io_ns);
  f(x.step_ns);
  f(x.trainer_cpu_ns);
  f(x.loader_cpu_ns);
  f(x.loader_queued_ns);
  f(x.epochs);
  f(x.series);
  f(x.waits_per_step);
  f(x.wait_times_s);
  f(x.cuda_in_steps_s);
  f(x.py_profile);
}

// A trainer group's state stays with the rank that read it, which sends
// the group's GroupResult instead (AnalyzeGroups): a new member must be
// read there, never by the run-wide stage.
IOTAP_FIELDS_OF(TrainerGroup, 504);

// RunState itself: a new member must be sent and merged below (or, if every
// rank works it out alike before reading, need not be: series_origin_ns, and
// the clocks, exchange files' problems included; or, if only the analysis
// of a group reads it, stays on the group's rank: marker_steps, and the
// samples in py_samples).
IOTAP_FIELDS_OF(RunState, 17216);

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
template <typename K, typename V, typename C>
void Put(WireWriter& w, const std::map<K, V, C>& m);
template <typename K, typename V, typename C>
void Get(WireReader& r, std::map<K, V, C>* m);
template <typename T>
void Put(WireWriter& w, const std::optional<T>& v);
template <typename T>
void Get(WireReader& r, std::optional<T>* v);

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
template <typename K, typename V, typename C>
void Put(WireWriter& w, const std::map<K, V, C>& m) {
  w.U(m.size());
  for (const auto& [k, v] : m) {
    Put(w, k);
    Put(w, v);
  }
}
template <typename K, typename V, typename C>
void Get(WireReader& r, std::map<K, V, C>* m) {
  uint64_t n = r.Count(uint64_t{1} << 28);
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    K k{};
    Get(r, &k);
    Get(r, &(*m)[k]);
  }
}

template <typename T>
void Put(WireWriter& w, const std::optional<T>& v) {
  w.U(v.has_value() ? 1 : 0);
  if (v.has_value()) Put(w, *v);
}
template <typename T>
void Get(WireReader& r, std::optional<T>* v) {
  if (r.U() != 0) Get(r, &v->emplace());
}

template <typename T>
void Put(WireWriter& w, const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    w.U(v ? 1 : 0);
  } else if constexpr (std::is_floating_point_v<T>) {
    w.D(v);
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
  } else if constexpr (std::is_floating_point_v<T>) {
    *v = r.D();
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
  if (s.scope == AnalysisScope::kFull) {
    SamplingFields(const_cast<PySamples&>(s.py_samples[i]), [&](const auto& f) { Put(w, f); });
  }
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
    if (s.scope == AnalysisScope::kFull) {
      SamplingFields(s.py_samples[i], [&](auto& f) { Get(r, &f); });
    }
  }
  return absl::OkStatus();
}

// A file's or descriptor kind's figures, `category` as a flag (the path
// gives it again).
// What a file without detail writes: the counts, and pipes' and sockets'
// rows, keep none.
const FileDetail& NoDetail() {
  static const FileDetail* none = new FileDetail;
  return *none;
}

// `detail`: the file's (kFull), or NoDetail().
void PutFile(WireWriter& w, const FileAccumulator& f, const FileDetail& detail) {
  Put(w, f.kind);
  w.S(f.kind_rank);
  w.U(f.category != nullptr ? 1 : 0);
  w.U(f.processes);
  Put(w, f.counts);
  Put(w, detail);
}

// Reads what PutFile wrote into `o` and `detail` (category: whether it had
// one).
bool GetFile(WireReader& r, FileAccumulator* o, FileDetail* detail) {
  Get(r, &o->kind);
  o->kind_rank = static_cast<int>(r.S());
  bool categorized = r.U() != 0;
  o->processes = r.U();
  Get(r, &o->counts);
  Get(r, detail);
  return categorized;
}

// As MergeCounts (run_analysis.cc) adds a process's file; `into_detail`
// null where the state keeps no detail (the counts).
void MergeFile(FileAccumulator& into, FileDetail* into_detail, const FileAccumulator& o,
               const FileDetail& detail) {
  if (o.kind_rank >= into.kind_rank) {
    into.kind = o.kind;
    into.kind_rank = o.kind_rank;
  }
  into.processes += o.processes;
  into.counts.Merge(o.counts);
  if (into_detail != nullptr) into_detail->Merge(detail);
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
    PutFile(w, f, id < s.details_by_id.size() ? s.details_by_id[id] : NoDetail());
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
  FileDetail detail;
  bool categorized = GetFile(r, &o, &detail);
  if (!r.ok()) return;
  PathTable::Entry e = s.paths.Intern(previous, categorized);
  run_state::GrowFiles(s, e.id);
  FileAccumulator& into = s.files_by_id[e.id];
  if (categorized) into.category = e.category;
  MergeFile(into, e.id < s.details_by_id.size() ? &s.details_by_id[e.id] : nullptr, o, detail);
}

void PutGroupResult(WireWriter& w, int index, const GroupResult& g) {
  w.U(kGroupResult);
  w.S(index);
  Put(w, g);
}

absl::Status MergeGroupResult(WireReader& r, RunState& s) {
  const int index = static_cast<int>(r.S());
  if (!s.groups.count(index)) return absl::DataLossError("a trainer group no rank knows");
  if (s.results.count(index)) {
    return absl::DataLossError(absl::StrCat("trainer group ", index, " came from two ranks"));
  }
  GroupResult& g = s.results[index];
  Get(r, &g);
  // CombineGroups and BuildTimeline read them side by side.
  uint64_t waits = 0;
  for (uint32_t n : g.waits_per_step) waits += n;
  if (g.compute_s.size() != g.steps.size() || g.waits_per_step.size() != g.steps.size() ||
      g.wait_times_s.size() != 2 * waits) {
    r.Fail();
  }
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
    PutFile(out, f, NoDetail());
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
  Tally(out, sizes ? &sizes->results : nullptr, [&] {
    for (const auto& [index, result] : s.results) PutGroupResult(out, index, result);
  });
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
        FileDetail detail;  // pipes and sockets have none
        GetFile(in, &o, &detail);
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
      case kGroupResult: status = MergeGroupResult(in, s); break;
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
