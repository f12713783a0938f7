#include "analyzer/analysis/run_analysis.h"

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/findings/findings.h"
#include "analyzer/read/trace_set.h"

namespace iotap::analyzer {

using internal::GroupOf;
using internal::RunState;
using internal::TrainerGroup;

namespace {

constexpr int64_t kInitialBinNs = 1'000'000;

std::string EndText(const ProcessTrace& p) {
  if (!p.end().has_value()) return "killed (no end record)";
  const EndOfTrace& end = *p.end();
  std::string code = end.exit_code_known() ? absl::StrCat(" ", end.exit_code()) : "";
  switch (end.reason()) {
    case EndOfTrace::REASON_EXIT: return absl::StrCat("exit", code);
    case EndOfTrace::REASON_UNDERSCORE_EXIT: return absl::StrCat("_exit", code);
    case EndOfTrace::REASON_EXEC: return "exec";
    case EndOfTrace::REASON_ABORT: return "abort";
    default: return "unknown";
  }
}

// Records how the file ended (the ProcessAnalyzer sees the trace, not its end
// record's wording).
class EndCatcher : public ProcessAnalyzer {
 public:
  using ProcessAnalyzer::ProcessAnalyzer;
  void OnFileEnd(const ProcessTrace& p) override {
    ProcessAnalyzer::OnFileEnd(p);
    end_text = EndText(p);
    if (p.end().has_value()) {
      end_unix_ns = p.ToRealtimeNs(static_cast<int64_t>(p.end()->monotonic_ns()));
    }
  }
  std::string end_text;
  int64_t end_unix_ns = 0;
};

void Merge(RunState& s, int index, ProcessResult r, int64_t end_unix_ns) {
  // Busy time and series first, under the lock of the group they go to: a
  // process's intervals are many, and the other threads need not wait for
  // them. A group's busy time goes into the run's after reading (ReadAll):
  // each interval is set once.
  int g = GroupOf(s, index);
  if (g < 0) {
    std::lock_guard<std::mutex> lock(s.all_io_mu);
    r.io->SetInto(s.all_io.get());
  } else {
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
      group.loader_cpu.emplace(index, std::move(*r.cpu_ns));
      group.loader_run_queue.emplace(index, std::move(*r.run_queue_ns));
      group.loader_channels.insert(r.waits.channels.begin(), r.waits.channels.end());
    }
  }
  std::lock_guard<std::mutex> lock(s.mu);
  s.read_ok[index] = true;
  for (size_t i = 0; i < r.files.size(); ++i) {
    uint32_t id = r.file_ids[i];
    if (id >= s.files_by_id.size()) s.files_by_id.resize(id + 1);
    s.files_by_id[id].Merge(r.files[i]);
  }
  s.data_read_sizes.Merge(r.data_read_sizes);
  for (int i = 0; i < kLayerCount; ++i) {
    s.layers[i].Merge(r.layers[i]);
    s.layer_read_bytes[i].Merge(r.read_bytes_by_layer[i]);
  }
  s.tfrecords.Absorb(std::move(r.tfrecords));
  for (auto& [name, d] : r.datasets) {
    DatasetAccumulator& into = s.datasets[name];
    if (into.name.empty()) {
      into.file = d.file;
      into.name = d.name;
    }
    into.Merge(d);
  }
  for (auto& [key, c] : r.cuda) {
    CudaAccumulator& into = s.cuda[key];
    into.copies += c.copies;
    into.bytes += c.bytes;
    into.time_ns += c.time_ns;
  }
  s.marker_steps[index] = std::move(r.steps);
  s.events += r.events;
  s.dropped += r.dropped;
  s.late_clipped_ns += r.late_clipped_ns;
  s.end_ns = std::max({s.end_ns, r.last_unix_ns, end_unix_ns});
  // Keep the summary; drop the heavy parts now.
  ProcessResult kept;
  kept.summary = std::move(r.summary);
  kept.first_unix_ns = r.first_unix_ns;
  kept.last_unix_ns = std::max(r.last_unix_ns, end_unix_ns);
  kept.io_busy_ns = r.io_busy_ns;
  s.processes[index] = std::move(kept);
}

void ReadAll(RunState& s, const AnalysisOptions& options) {
  const size_t n = s.catalog.entries.size();
  std::atomic<size_t> next{0}, done{0};
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      const CatalogEntry& entry = s.catalog.entries[i];
      EndCatcher analyzer(s.origin_ns, s.resolution_ns, &s.paths,
                          /*may_train=*/entry.role != report::LOADER);
      std::vector<ReadIssue> issues;
      absl::Status status = ReadTraceFile(entry.path, &analyzer, &issues);
      {
        std::lock_guard<std::mutex> lock(s.mu);
        s.issues.insert(s.issues.end(), issues.begin(), issues.end());
        if (!status.ok()) {
          s.issues.push_back(ReadIssue{entry.path, 0, 0, false, std::string(status.message())});
        }
      }
      if (status.ok()) {
        ProcessResult r = analyzer.Take();
        r.summary.set_end(analyzer.end_text);
        Merge(s, static_cast<int>(i), std::move(r), analyzer.end_unix_ns);
      }
      size_t finished = ++done;
      if (options.progress) options.progress(finished, n);
    }
  };
  int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(n)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  for (auto& [index, group] : s.groups) s.all_io->Or(*group.io);
  for (uint32_t id = 0; id < s.files_by_id.size(); ++id) {
    // A path only a trace that could not be read interned has no figures.
    if (s.files_by_id[id].kind == nullptr) continue;
    s.files.emplace(s.paths.path(id), std::move(s.files_by_id[id]));
  }
  s.files_by_id.clear();
}

void SetUpGroups(RunState& s) {
  for (int i = 0; i < static_cast<int>(s.catalog.entries.size()); ++i) {
    const CatalogEntry& e = s.catalog.entries[i];
    if (e.role != report::TRAINER) continue;
    TrainerGroup& g = s.groups[i];
    g.trainer = i;
    g.io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
    g.writes = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
    g.read_bytes = std::make_unique<AdaptiveSeries>(s.origin_ns, kInitialBinNs);
    g.read_calls = std::make_unique<AdaptiveSeries>(s.origin_ns, kInitialBinNs);
    g.read_ns = std::make_unique<AdaptiveSeries>(s.origin_ns, kInitialBinNs);
    g.trainer_cpu = std::make_unique<AdaptiveSeries>(s.origin_ns, kInitialBinNs);
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

}  // namespace

absl::StatusOr<report::Report> AnalyzeTraceFiles(const std::vector<std::string>& files,
                                                 const AnalysisOptions& options) {
  RunState s;
  s.catalog = CatalogTraceFiles(files, options.threads);
  s.issues = s.catalog.issues;
  if (s.catalog.entries.empty()) {
    std::string why = s.issues.empty() ? "no trace files" : s.issues.front().ToString();
    return absl::InvalidArgumentError(absl::StrCat("nothing readable: ", why));
  }
  s.origin_ns = s.catalog.start_unix_ns;
  s.step_log_paths = options.step_logs;
  s.resolution_ns = ChooseResolution(std::max<int64_t>(0, s.catalog.end_unix_ns - s.origin_ns));
  s.end_ns = std::max(s.origin_ns, s.catalog.end_unix_ns);
  const size_t n = s.catalog.entries.size();
  s.processes.resize(n);
  s.read_ok.assign(n, false);
  s.marker_steps.resize(n);
  s.all_io = std::make_unique<TimeBitmap>(s.origin_ns, s.resolution_ns);
  for (int i = 0; i < kLayerCount; ++i) s.layer_read_bytes.emplace_back(s.origin_ns, kInitialBinNs);
  SetUpGroups(s);
  ReadAll(s, options);

  report::Report r;
  r.set_schema_version(1);
  FillProcesses(s, &r);
  internal::BuildSteps(s, &r);
  internal::BuildTimeline(s, options.timeline_bins, &r);
  internal::BuildTables(s, options.top_files, &r);
  internal::BuildRunSummary(s, &r);
  internal::BuildNotes(s, &r);
  internal::CheckClocks(s, &r);
  if (options.rules != nullptr) {
    AddFindings(*options.rules, &r);
  } else {
    absl::StatusOr<rules::RuleSet> rules = DefaultRules();
    if (!rules.ok()) return rules.status();
    AddFindings(*rules, &r);
  }
  return r;
}

absl::StatusOr<report::Report> AnalyzeRun(const std::string& path,
                                          const AnalysisOptions& options) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(path);
  if (!files.ok()) return files.status();
  return AnalyzeTraceFiles(*files, options);
}

}  // namespace iotap::analyzer
