#include "analyzer/analysis/run_analysis.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/analysis/time_range.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/findings/findings.h"
#include "analyzer/read/trace_set.h"

namespace iotap::analyzer {

using run_state::GroupOf;
using run_state::ProcessSummary;
using run_state::RunState;
using run_state::TrainerGroup;

namespace {

// The busy time and series of a process, under the lock of the group they
// go to: a process's intervals are many, and the other threads need not wait
// for them. A group's busy time goes into the run's once the group is
// analysed (AnalyzeGroups): each interval is set once. The layers' busy time
// goes straight into the run's, under a lock of its own.
void MergeTimes(RunState& s, int index, ProcessResult& r) {
  {
    std::lock_guard<std::mutex> lock(s.layer_busy_mu);
    for (size_t i = 0; i < r.layer_busy.size(); ++i) r.layer_busy[i].SetInto(&s.layer_busy[i]);
  }
  int g = GroupOf(s, index);
  if (g < 0) {
    std::lock_guard<std::mutex> lock(s.all_io_mu);
    r.io->SetInto(s.all_io.get());
    return;
  }
  TrainerGroup& group = s.groups.at(g);  // groups are fixed while reading
  std::lock_guard<std::mutex> lock(group.mu);
  r.io->SetInto(group.io.get());
  group.read_bytes->Merge(*r.data_read_bytes);
  group.read_calls->Merge(*r.data_read_calls);
  group.read_ns->Merge(*r.data_read_ns);
  if (g == index) {
    r.writes->SetInto(group.writes.get());
    group.trainer_cpu->Merge(*r.cpu_ns);
    group.cuda_copies = std::move(r.cuda_copies);
    // A trainer without loaders reads its data itself: its main thread's
    // reads tell where its steps load (wait_inference.h).
    if (group.loaders.empty() && r.waits.own_io) {
      group.own_io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
      r.waits.own_io->SetInto(group.own_io.get());
    }
    r.waits.own_io.reset();
    group.waits = std::move(r.waits);
  } else {
    // Kept until the run is built, one pair per loader: as runs, which
    // answer the same (a loader's CPU, sampled every 100 ms, is runs of
    // equal bins; as bins, up to 256 KiB a series).
    r.cpu_ns->Compact();
    r.run_queue_ns->Compact();
    group.loader_cpu.emplace(index, std::move(*r.cpu_ns));
    group.loader_run_queue.emplace(index, std::move(*r.run_queue_ns));
    group.loader_channels.insert(r.waits.channels.begin(), r.waits.channels.end());
  }
}

// Adds process `index`'s figures into the run's (under s.mu).
void MergeCounts(RunState& s, int index, ProcessResult& r) {
  const int rank = s.rank[index];
  const bool full = !r.file_details.empty() && s.scope == AnalysisScope::kFull;
  // The deques walked with iterators: indexing one divides per element.
  auto counts = r.files.begin();
  auto detail = r.file_details.begin();
  // Grown once for the process's files: growing file by file moved every
  // accumulator (a few hundred bytes each) a dozen times over on a worker's
  // file of thousands of new paths.
  uint32_t most = 0;
  for (const FileRef& ref : r.file_refs) most = std::max(most, ref.path_id);
  if (!r.file_refs.empty()) GrowFiles(s, most);
  for (const FileRef& ref : r.file_refs) {
    FileAccumulator& f = s.files_by_id[ref.path_id];
    // A process may name one path under two string ids: it counts once.
    if (f.last_process != index) {
      f.last_process = index;
      ++f.processes;
    }
    if (rank >= f.kind_rank) {
      f.kind = ref.kind;
      f.kind_rank = rank;
    }
    f.category = ref.category;
    f.counts.Merge(*counts++);
    if (full) s.details_by_id[ref.path_id].Merge(*detail++);
  }
  for (const auto& [kind, c] : r.ipc) {
    FileAccumulator& into = s.ipc[kind];
    into.kind = static_cast<InternedString::Kind>(kind);
    ++into.processes;
    into.counts.Merge(c);
  }
  for (auto& [name, d] : r.datasets) {
    d.described_rank = rank;
    s.datasets[name].Merge(d);
  }
  s.tfrecords.Absorb(std::move(r.tfrecords), rank);
  s.cuda.Merge(r.cuda);
  s.mapped.Absorb(std::move(r.mapped), rank);
  s.events += r.events;
  AddTo(&s.dropped, r.dropped);
  ProcessSummary& kept = s.processes[index];
  static_cast<ProcessCounts&>(kept) = std::move(static_cast<ProcessCounts&>(r));
  if (s.scope != AnalysisScope::kFull) return;
  s.data_read_sizes.Merge(r.data_read_sizes);
  for (int i = 0; i < kLayerCount; ++i) {
    s.layers[i].Merge(r.layers[i]);
    s.layer_read_bytes[i].Merge(r.read_bytes_by_layer[i]);
  }
  s.marker_steps[index] = std::move(r.steps);
  s.py_samples[index] = std::move(r.py);
  AddTo(&s.late_clipped_ns, r.late_clipped_ns);
  s.end_ns = std::max({s.end_ns, r.last_unix_ns, r.end_unix_ns});
  kept.summary = std::move(r.summary);
  kept.first_unix_ns = r.first_unix_ns;
  kept.last_unix_ns = std::max(r.last_unix_ns, r.end_unix_ns);
  kept.io_busy_ns = r.io_busy_ns;
}

}  // namespace

namespace run_state {

void GrowFiles(RunState& s, uint32_t id) {
  if (id < s.files_by_id.size()) return;
  s.files_by_id.resize(id + 1);
  if (s.scope == AnalysisScope::kFull) s.details_by_id.resize(id + 1);
}

void MergeProcess(RunState& s, int index, ProcessResult r) {
  if (s.scope == AnalysisScope::kFull) MergeTimes(s, index, r);
  std::lock_guard<std::mutex> lock(s.mu);
  s.read_ok[index] = true;
  MergeCounts(s, index, r);
}

// Sizes the per-process vectors for s.catalog's entries, ranked by their
// position in `files`.
void SetUpProcesses(RunState& s, const std::vector<std::string>& files) {
  const size_t n = s.catalog.entries.size();
  std::map<std::string_view, int> position;
  for (int i = static_cast<int>(files.size()) - 1; i >= 0; --i) position[files[i]] = i;
  for (const CatalogEntry& e : s.catalog.entries) s.rank.push_back(position[e.path]);
  s.processes.resize(n);
  s.read_ok.assign(n, false);
  s.file_issues.resize(n);
  s.marker_steps.resize(n);
}

void SetUpGroups(RunState& s) {
  for (int i = 0; i < static_cast<int>(s.catalog.entries.size()); ++i) {
    const CatalogEntry& e = s.catalog.entries[i];
    if (e.role != report::TRAINER) continue;
    TrainerGroup& g = s.groups[i];
    g.trainer = i;
    g.io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
    g.writes = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
    g.read_bytes = std::make_unique<AdaptiveSeries>(s.series_origin_ns, kInitialBinNs);
    g.read_calls = std::make_unique<AdaptiveSeries>(s.series_origin_ns, kInitialBinNs);
    g.read_ns = std::make_unique<AdaptiveSeries>(s.series_origin_ns, kInitialBinNs);
    g.trainer_cpu = std::make_unique<AdaptiveSeries>(s.series_origin_ns, kInitialBinNs);
  }
  for (int i = 0; i < static_cast<int>(s.catalog.entries.size()); ++i) {
    const CatalogEntry& e = s.catalog.entries[i];
    if (e.role == report::LOADER && e.trainer >= 0) s.groups[e.trainer].loaders.push_back(i);
  }
}

void FillProcesses(RunState& s, report::Report* r) {
  for (int i = 0; i < static_cast<int>(s.catalog.entries.size()); ++i) {
    const CatalogEntry& e = s.catalog.entries[i];
    report::Process p = s.processes[i].summary;
    p.set_end(s.processes[i].end);
    p.set_pid(e.header.pid());
    p.set_ppid(e.header.ppid());
    p.set_host(ValidUtf8(e.header.hostname()));
    p.set_rank(e.header.rank());
    p.set_role(e.role);
    p.set_trainer_pid(e.trainer >= 0 ? s.catalog.entries[e.trainer].header.pid() : 0);
    p.set_executable(ValidUtf8(e.header.executable()));
    for (const std::string& a : e.header.argv()) p.add_argv(ValidUtf8(a));
    p.set_start_s(Seconds(e.start_unix_ns - s.origin_ns));
    int64_t last = std::max(s.processes[i].last_unix_ns, e.start_unix_ns);
    p.set_end_s(Seconds(last - s.origin_ns));
    p.set_trace_file(ValidUtf8(e.path));
    if (!s.read_ok[i]) p.set_end("unreadable trace");
    *r->add_processes() = std::move(p);
  }
}

void ReadFiles(RunState& s, const std::vector<int>& indices, int threads,
               const std::function<void(size_t, size_t)>& progress) {
  const size_t n = indices.size();
  std::atomic<size_t> next{0}, done{0};
  auto worker = [&] {
    for (size_t k = next++; k < n; k = next++) {
      const int i = indices[k];
      const CatalogEntry& entry = s.catalog.entries[i];
      const std::string& path = entry.path;
      ProcessAnalyzer analyzer(s.scope, &s.paths, s.origin_ns, s.resolution_ns,
                               /*may_train=*/entry.role != report::LOADER);
      RangeFilter in_range(&analyzer, s.range_start_ns, s.range_end_ns);
      bool whole = s.range_start_ns == INT64_MIN && s.range_end_ns == INT64_MAX;
      std::vector<ReadIssue>& issues = s.file_issues[i];  // this thread's alone
      absl::Status status =
          ReadTraceFile(path, whole ? static_cast<TraceVisitor*>(&analyzer) : &in_range, &issues,
                        &s.clocks.corrections);
      if (status.ok()) {
        MergeProcess(s, i, analyzer.Take());
      } else {
        issues.push_back(UnreadableFileIssue(path, status));
      }
      size_t finished = ++done;
      if (progress) progress(finished, n);
    }
  };
  threads = std::max(1, std::min<int>(threads, static_cast<int>(n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

void FinishReading(RunState& s) {
  const size_t n = s.catalog.entries.size();
  // Each file's issues in the order of the files, whichever thread read it.
  std::vector<int> by_rank(n);
  for (size_t i = 0; i < n; ++i) by_rank[i] = static_cast<int>(i);
  std::stable_sort(by_rank.begin(), by_rank.end(), [&](int a, int b) { return s.rank[a] < s.rank[b]; });
  for (int i : by_rank) {
    s.issues.insert(s.issues.end(), s.file_issues[i].begin(), s.file_issues[i].end());
  }
  s.file_issues.clear();
  if (s.scope != AnalysisScope::kFull) return;  // the counts use files_by_id
  s.files.clear();
  for (uint32_t id = 0; id < s.files_by_id.size(); ++id) {
    // A path only a trace that could not be read interned has no figures.
    if (s.files_by_id[id].processes == 0) continue;
    s.files.push_back(RunFile{s.paths.path(id), &s.files_by_id[id], &s.details_by_id[id]});
  }
  std::sort(s.files.begin(), s.files.end(),
            [](const RunFile& a, const RunFile& b) { return a.path < b.path; });
}

void ReadAll(RunState& s, int threads, const std::function<void(size_t, size_t)>& progress) {
  std::vector<int> all(s.catalog.entries.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  ReadFiles(s, all, threads, progress);
  FinishReading(s);
}

absl::Status PrepareRun(const std::vector<std::string>& files, const AnalysisOptions& options,
                        RunState& s) {
  s.catalog = CatalogTraceFiles(files, options.threads);
  s.issues = s.catalog.issues;
  if (s.catalog.entries.empty()) {
    std::string why = s.issues.empty() ? "no trace files" : s.issues.front().ToString();
    return absl::InvalidArgumentError(absl::StrCat("nothing readable: ", why));
  }
  for (const std::string& path : options.step_logs) s.step_logs.emplace_back(path, ReadStepLog(path));
  AlignClocks(options, s);
  s.origin_ns = s.catalog.start_unix_ns;
  s.resolution_ns = ChooseResolution(std::max<int64_t>(0, s.catalog.end_unix_ns - s.origin_ns));
  s.end_ns = std::max(s.origin_ns, s.catalog.end_unix_ns);
  if (!options.range.whole()) {
    s.range_start_ns = s.origin_ns + std::max<int64_t>(0, options.range.from_ns);
    s.range_end_ns = options.range.to_ns > INT64_MAX - s.origin_ns
                         ? INT64_MAX
                         : s.origin_ns + options.range.to_ns;
  }
  SetUpProcesses(s, files);
  s.py_samples.resize(s.catalog.entries.size());  // the full analysis only
  s.all_io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
  s.series_origin_ns = s.origin_ns;
  for (int i = 0; i < kLayerCount; ++i) {
    s.layer_read_bytes.emplace_back(s.origin_ns, kInitialBinNs);
    s.layer_busy.emplace_back(s.origin_ns, s.resolution_ns);
  }
  SetUpGroups(s);
  return absl::OkStatus();
}

void PrepareCounts(const std::vector<std::string>& files, RunState& s) {
  s.scope = AnalysisScope::kCounts;
  // No catalog: the counts need no roles or clocks, and a file whose header
  // is damaged is still counted.
  for (const std::string& path : files) {
    CatalogEntry& entry = s.catalog.entries.emplace_back();
    entry.path = path;
  }
  SetUpProcesses(s, files);
}

absl::StatusOr<report::Report> BuildReport(RunState& s, const AnalysisOptions& options) {
  report::Report r;
  r.set_schema_version(1);
  FillProcesses(s, &r);
  std::vector<int> pending;  // groups no other process worked out
  for (const auto& [index, g] : s.groups) {
    if (!s.results.count(index)) pending.push_back(index);
  }
  AnalyzeGroups(s, pending, options.timeline_bins, options.threads);
  CombineGroups(s, &r);
  BuildTimeline(s, options.timeline_bins, &r);
  BuildTables(s, options.top_files, &r);
  BuildMappedTables(s, options.top_files, &r);
  BuildPyProfiles(s, &r);
  BuildRunSummary(s, &r);
  BuildNotes(s, &r);
  CheckClocks(s, &r);
  if (options.rules != nullptr) {
    AddFindings(*options.rules, &r);
  } else {
    absl::StatusOr<rules::RuleSet> rules = DefaultRules();
    if (!rules.ok()) return rules.status();
    AddFindings(*rules, &r);
  }
  return r;
}

RunCounts BuildCounts(std::unique_ptr<RunState> s) {
  RunCounts out;
  out.files = FileOrder(*s);
  BuildStats(*s, out.files, &out.stats);
  out.files_read = static_cast<int>(std::count(s->read_ok.begin(), s->read_ok.end(), true));
  out.state = std::move(s);
  return out;
}

}  // namespace run_state

absl::StatusOr<report::Report> AnalyzeTraceFiles(const std::vector<std::string>& files,
                                                 const AnalysisOptions& options) {
  RunState s;
  absl::Status prepared = run_state::PrepareRun(files, options, s);
  if (!prepared.ok()) return prepared;
  run_state::ReadAll(s, options.threads, options.progress);
  return run_state::BuildReport(s, options);
}

namespace {

google::protobuf::ArenaOptions CountsArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 4 << 10;
  options.max_block_size = 256 << 10;  // a run names up to millions of files
  return options;
}

}  // namespace

RunCounts::RunCounts()
    : arena(std::make_unique<google::protobuf::Arena>(CountsArenaOptions())),
      stats(*google::protobuf::Arena::CreateMessage<stats::Stats>(arena.get())) {}
RunCounts::RunCounts(RunCounts&&) = default;
RunCounts::~RunCounts() = default;

size_t RunCounts::file_rows() const { return files.size(); }

void RunCounts::FillFileRow(size_t i, stats::File* row) const {
  run_state::FillFileRow(files[i], row);
}

const stats::Stats& RunCounts::WithFileRows() {
  if (!rows_added) {
    stats.mutable_files()->Reserve(static_cast<int>(files.size()));
    for (size_t i = 0; i < files.size(); ++i) FillFileRow(i, stats.add_files());
    rows_added = true;
  }
  return stats;
}

RunCounts CountTraceFiles(const std::vector<std::string>& files, const AnalysisOptions& options) {
  auto s = std::make_unique<RunState>();
  run_state::PrepareCounts(files, *s);
  run_state::ReadAll(*s, options.threads, options.progress);
  return run_state::BuildCounts(std::move(s));
}

absl::StatusOr<report::Report> AnalyzeRun(const std::string& path,
                                          const AnalysisOptions& options) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(path);
  if (!files.ok()) return files.status();
  return AnalyzeTraceFiles(*files, options);
}

}  // namespace iotap::analyzer
