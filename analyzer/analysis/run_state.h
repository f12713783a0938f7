// The run analysis's state (namespace run_state): what is kept for the whole
// run while trace files are read, and the stages that turn it into a report.
// Only the analysis and the stage that merges a run read in shares
// (analyzer/merge/) use it; outputs and commands go through run_analysis.h.

#ifndef IOTAP_ANALYZER_ANALYSIS_RUN_STATE_H_
#define IOTAP_ANALYZER_ANALYSIS_RUN_STATE_H_

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "analyzer/accumulate/cuda_accumulator.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "analyzer/analysis/process_analysis.h"
#include "analyzer/analysis/py_profile.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/analysis/wait_inference.h"
#include "analyzer/base/chunked_vector.h"
#include "analyzer/clocks/clock_alignment.h"
#include "analyzer/read/path_table.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/steps/step_log.h"
#include "iotap/report.pb.h"
#include "iotap/stats.pb.h"

namespace iotap::analyzer::run_state {

// What InferWaits learned about one step of a trainer.
struct StepWaits {
  bool inferred = false;     // its data_waits were inferred (the source gave none)
  int64_t inferred_ns = -1;  // the inferred wait, where the source measured one
  int64_t agreed_ns = 0;     // ... and the part of the measured wait it covers
  TimeWindow gap;            // from the previous step's end to this one's start
};

// A trainer and the loaders that serve it.
struct TrainerGroup {
  // Guards what the group's processes add while files are read in parallel
  // (busy time, series), so that they do not wait for RunState::mu.
  std::mutex mu;
  int trainer = -1;                       // catalog index
  std::vector<int> loaders;               // catalog indices
  std::unique_ptr<TimeBitmap> io;         // trainer + loaders, data files
  std::unique_ptr<TimeBitmap> writes;     // the trainer's data-file writes
  std::unique_ptr<AdaptiveSeries> read_bytes;
  std::unique_ptr<AdaptiveSeries> read_calls;
  std::unique_ptr<AdaptiveSeries> read_ns;
  std::unique_ptr<AdaptiveSeries> trainer_cpu;
  std::map<int, AdaptiveSeries> loader_cpu;  // per loader
  // Per loader: time its main thread was runnable but had no CPU.
  std::map<int, AdaptiveSeries> loader_run_queue;
  std::vector<StepSpan> steps;
  const char* step_source = nullptr;      // StepSourceName of the steps' source
  // Inferred data waits (wait_inference.h): the trainer's evidence, the
  // pipes and sockets its loaders used, and for a trainer without loaders
  // its main thread's data-file I/O; then, per step, what InferWaits found.
  WaitEvidence waits;
  absl::flat_hash_set<std::string> loader_channels;
  std::unique_ptr<TimeBitmap> own_io;
  std::vector<StepWaits> step_waits;      // parallel to `steps`
  std::vector<InferredWindow> inferred;   // the windows, by start
  std::vector<TimedEvent> cuda_copies;    // the trainer's
  std::vector<TimeWindow> epochs;         // from the trainer's "epoch" marks
};

// What InferWaits counts over one trainer group's counted steps: the
// report's StepStatistics.data_waits adds the groups' up. Integers (steps,
// ns), so that the sum over groups is the same in any grouping.
struct WaitTotals {
  int64_t measured_steps = 0, inferred_steps = 0, compared_steps = 0;
  int64_t measured_ns = 0, inferred_ns = 0, agreed_ns = 0, compared_step_ns = 0;
  std::array<int64_t, kWaitKinds> kind_ns = {};  // by WaitKind
  // The steps' source, where it measured waits.
  std::string measured_by;
};

// A trainer group's part of the report, worked out from the group's state
// alone (AnalyzeGroups) by the process that read the group, so that the
// group's busy time, series and evidence need go nowhere else: its steps,
// its timeline series and waits, its epochs, its Python profile, and what
// the run's figures sum over it. CombineGroups, BuildTimeline, BuildTables
// and BuildPyProfiles put the groups' parts together in the order of
// RunState::groups. Where such a sum is of figures that are not integers
// (the overlap, the cores used, CUDA copy time in steps), the part holds its
// addends, in order, so that the run's sum is the one running sum a single
// process adds, bit for bit.
struct GroupResult {
  // The steps as collected, before the time range: a trainer with none and
  // no loaders, in a run whose other trainers have some, is only helping.
  bool has_steps = false;
  std::vector<std::string> notes;         // its markers' step definitions
  std::vector<std::string> step_sources;  // "markers of pid N" (no step log used)
  std::vector<report::Step> steps;        // in time order
  // Per step: the step less its data wait, in seconds (Overlap.compute_s's
  // addend; 0 for a step whose wait is not known).
  std::vector<double> compute_s;
  bool warmup_skipped = false;  // its first step is left out of the statistics
  WaitTotals waits;
  int64_t in_steps_io_ns = 0;  // its busy time during its steps and the gaps before them
  int64_t io_ns = 0;           // all of its busy time
  // The cores used over its counted steps: their time, and per step the CPU
  // time of the trainer, then of each loader (step by step, loaders in
  // catalog order), running and runnable.
  int64_t step_ns = 0;
  std::vector<double> trainer_cpu_ns;
  std::vector<double> loader_cpu_ns;
  std::vector<double> loader_queued_ns;
  // Its epochs, without their steps (CombineGroups counts those over every
  // group's).
  std::vector<report::Epoch> epochs;
  std::vector<report::Series> series;  // the timeline's, in its bins
  // The data waits of each step (inferred or measured, as the step says),
  // as their start and end in seconds from the run's start: with the steps,
  // the timeline's spans of the group (BuildTimeline). Per step, how many;
  // then every wait's two times, step after step.
  std::vector<uint32_t> waits_per_step;
  std::vector<double> wait_times_s;
  // By kind: the durations of the trainer's CUDA copies that started in a
  // step, in seconds, in the order of its trace.
  std::map<CudaCopyKey, std::vector<double>> cuda_in_steps_s;
  std::optional<report::PyProfile> py_profile;
};

// What the run keeps of a process once its trace file has been read.
struct ProcessSummary : ProcessCounts {
  // AnalysisScope::kFull only.
  report::Process summary;
  int64_t first_unix_ns = INT64_MAX;
  int64_t last_unix_ns = INT64_MIN;
  int64_t io_busy_ns = 0;
};

struct RunState {
  AnalysisScope scope = AnalysisScope::kFull;
  RunCatalog catalog;
  // By catalog index: the position of the entry's file in the list of trace
  // files analysed. Where processes disagree (a dataset's description, a
  // TFRecord file's compression, a path's kind), the one ranked last says;
  // read issues are listed in this order.
  std::vector<int> rank;
  int64_t origin_ns = 0;       // wall clock of the run's start
  int64_t end_ns = 0;          // last event or end record seen
  int64_t resolution_ns = 1000;
  // Where the groups' and layers' time series start: the run's start, or a
  // window's (SlicedRun: its series need not cover the run before it).
  int64_t series_origin_ns = 0;
  // The part of the run analysed, wall clock (time_range.h); the whole run by
  // default.
  int64_t range_start_ns = INT64_MIN;
  int64_t range_end_ns = INT64_MAX;
  std::mutex mu;

  std::vector<ProcessSummary> processes;  // by catalog index
  std::vector<bool> read_ok;
  // Every path any process touched; files_by_id holds their figures by id
  // (details_by_id their detail, kFull), and (kFull) `files` lists them by
  // path once all are read (paths only traces that could not be read
  // interned are left out). The counts (kCounts) need no order by path.
  PathTable paths;
  // Chunked, not a vector: a run's files grow to millions, and a vector
  // would copy them all at each doubling and, while it did, hold both.
  ChunkedVector<FileAccumulator> files_by_id;
  // kFull: each file's detail, by id as files_by_id (sized with it).
  ChunkedVector<FileDetail> details_by_id;
  // kFull, once every file is read (FinishReading): the files with figures,
  // by path; views of their paths in `paths` and of their figures in
  // files_by_id and details_by_id, which stay (a map by path with a copy of
  // each file's figures took about 550 bytes a file more).
  std::vector<RunFile> files;
  std::map<int, FileAccumulator> ipc;       // pipes, sockets, ...: by InternedString::Kind
  SizeHistogram data_read_sizes;
  std::array<LayerAccumulator, kLayerCount> layers;
  std::map<std::string, DatasetAccumulator> datasets;  // by "FILE:/path"
  TfRecordAccumulator tfrecords;
  CudaAccumulator cuda;
  MappedAccumulator mapped;  // mapped reads and io_uring requests
  std::unique_ptr<TimeBitmap> all_io;  // processes outside every group; then all
  std::mutex all_io_mu;
  std::vector<AdaptiveSeries> layer_read_bytes;
  // By layer: the union of its calls over all processes.
  std::vector<TimeBitmap> layer_busy;
  std::mutex layer_busy_mu;
  std::map<int, TrainerGroup> groups;    // by trainer catalog index
  // By trainer catalog index: each group's part of the report, once
  // AnalyzeGroups has worked it out (here, or where the group was read).
  std::map<int, GroupResult> results;
  std::vector<std::vector<StepLog>> marker_steps;  // by catalog index
  std::vector<PySamples> py_samples;               // by catalog index (kFull)
  // Issues met while reading (the catalog's first, then each file's by
  // rank); file_issues holds each file's, by catalog index, until then.
  std::vector<ReadIssue> issues;
  std::vector<std::vector<ReadIssue>> file_issues;
  // --steps: each path and what reading it gave (read once, before the
  // clocks are aligned with them).
  std::vector<std::pair<std::string, absl::StatusOr<StepLog>>> step_logs;
  RunClocks clocks;  // hosts' clocks: fitted, and the corrections applied
  std::vector<std::string> step_sources;    // what the steps came from
  std::vector<std::string> notes;           // said while building the report
  uint64_t events = 0;
  uint64_t dropped = 0;
  int64_t late_clipped_ns = 0;
};

// The stages of an analysis (run_analysis.cc), which a run shared among
// cooperating processes (analyzer/cluster/) takes one by one:
//   PrepareRun (or PrepareCounts)   every process alike
//   ReadFiles                       each process its share of the files
//   AnalyzeGroups                   each process the trainer groups it read,
//                                   once s.end_ns is the run's
//   (the shares' states merged into one: analyzer/merge/partial_run.h)
//   FinishReading, BuildReport (or BuildCounts)   once
// A run analysed slice by slice (sliced_run.h) uses the parts of
// PrepareRun (SetUpProcesses, SetUpGroups) and merges each slice's
// processes itself (MergeProcess).
//
// The catalog, step logs, clocks and the state sized for reading: fails
// only if no trace file has a readable header.
absl::Status PrepareRun(const std::vector<std::string>& files, const AnalysisOptions& options,
                        RunState& s);
// The same for the counts (AnalysisScope::kCounts): one entry per file, in
// the order of `files`, no catalog.
void PrepareCounts(const std::vector<std::string>& files, RunState& s);
// Sizes the per-process vectors for s.catalog's entries, ranked by their
// position in `files`.
void SetUpProcesses(RunState& s, const std::vector<std::string>& files);
// Makes a group for every trainer of the catalog and adds its loaders.
void SetUpGroups(RunState& s);
// Grows s.files_by_id (and with kFull s.details_by_id) to hold path id `id`.
void GrowFiles(RunState& s, uint32_t id);
// Adds process `index`'s result into the run's; once per process, any order,
// from any thread.
void MergeProcess(RunState& s, int index, ProcessResult r);
// Reads the files of s.catalog's entries `indices` into `s`, `threads` files
// at a time, with ProcessAnalyzers of s.scope.
void ReadFiles(RunState& s, const std::vector<int>& indices, int threads,
               const std::function<void(size_t, size_t)>& progress);
// After every file has been read (into this state or merged into it): the
// issues in file order, the files by path (kFull).
void FinishReading(RunState& s);
// Fills report->processes.
void FillProcesses(RunState& s, report::Report* report);
// ReadFiles of every entry, then FinishReading.
void ReadAll(RunState& s, int threads, const std::function<void(size_t, size_t)>& progress);
// The report (or the counts) of a state FinishReading has finished: first
// AnalyzeGroups of the groups without a result yet, then the run-wide stage.
absl::StatusOr<report::Report> BuildReport(RunState& s, const AnalysisOptions& options);
// The counts keep the state, whose files' rows they make one at a time.
RunCounts BuildCounts(std::unique_ptr<RunState> s);

// The group a process belongs to (its own if a trainer), or -1.
int GroupOf(const RunState& state, int index);

// Works out each trainer group of `groups` (their trainers' catalog indices),
// whose processes have all been read into `state`, into state.results, with
// the timeline in `timeline_bins` bins, `threads` groups at a time
// (group_analysis.cc): its steps (from
// its markers, or from the step logs, which every process has), their data
// waits, figures and epochs, its timeline series and waits, its CUDA
// copies in steps and its Python profile. Then ORs the group's busy time into
// state.all_io and frees what reading left in the group (its busy time,
// series, evidence, copies, marker steps and Python samples). Needs
// state.end_ns to be the run's: the timeline's bins and the last epoch end
// there.
void AnalyzeGroups(RunState& state, const std::vector<int>& groups, int timeline_bins, int threads);

// The parts of AnalyzeGroups, each (but the steps', in group_steps.cc)
// beside the run-wide stage that puts the groups' parts together.
//
// Which trainer group each span of each step log goes to: by rank, then by
// pid; with no match, the first group (group_steps.cc; CombineGroups's notes
// say which logs were used and which named no one).
struct StepLogSpans {
  // By entry of RunState::step_logs: whether its steps are used (it could be
  // read, and its times are on the wall clock).
  std::vector<bool> used;
  // By entry (none where a log is not used): the indices of each group's
  // spans.
  std::vector<std::map<int, std::vector<size_t>>> of_group;
  // By entry: some span named no rank or process of a run of several trainers.
  std::vector<bool> unmatched;
};
StepLogSpans AssignStepLogs(const RunState& state);
// The group's steps: from its trainer's markers, or from the step logs
// where any can be used; with their epochs.
void CollectSteps(const RunState& state, int index, TrainerGroup& g, const StepLogSpans& logs,
                  GroupResult* out);
// Infers the data waits of the steps whose source gave none, compares them
// with measured ones where both exist, and finds the gaps between steps
// (step_waits.cc); `out` counts what it did.
void InferWaits(TrainerGroup& g, WaitTotals* out);
// The group's report::Steps, what the overlap, the cores used and the
// epochs sum over it (after InferWaits; `warmup`: its first step is the
// run's warm-up step).
void ComputeSteps(const RunState& state, const TrainerGroup& g, bool warmup, GroupResult* out);
// Its timeline series, and the times of its steps' waits (timeline.cc).
void ComputeTimeline(const RunState& state, int index, const TrainerGroup& g, int bins,
                     GroupResult* out);
// Its CUDA copies in steps (tables.cc).
void ComputeCudaInSteps(const TrainerGroup& g, GroupResult* out);
// Its Python profile (py_profile_report.cc).
void ComputePyProfile(const RunState& state, const TrainerGroup& g, GroupResult* out);

// Once every group has a result: the steps' notes and sources, trainers
// with neither steps nor loaders demoted to helpers (their groups and
// results dropped, roles in report->processes fixed), then report->steps,
// step_statistics, overlap, epochs and workers (step_analysis.cc).
void CombineGroups(RunState& state, report::Report* report);
// Fills report->step_statistics.data_waits from the groups' WaitTotals
// (step_waits.cc).
void CombineWaits(const RunState& state, report::StepStatistics* st);

// Fills report->timeline (after CombineGroups; takes the groups' series,
// and makes their spans from report->steps, where each group's steps
// follow the previous group's).
void BuildTimeline(RunState& state, int bins, report::Report* report);

// Fills files, other_files, layers, datasets and cuda_copies (after
// CombineGroups).
void BuildTables(RunState& state, int top_files, report::Report* report);

// Fills report->mapped_reads and io_uring (mapped_tables.cc).
void BuildMappedTables(const RunState& state, int top_files, report::Report* report);

// Fills report->py_profiles (after CombineGroups; takes the groups'
// profiles; py_profile_report.cc) and adds notes on processes whose stacks
// could not be sampled.
void BuildPyProfiles(RunState& state, report::Report* report);

// What `iotap stats` prints (stats_tables.cc), from a state read with
// AnalysisScope::kCounts:
// - the run's files with figures, in the order the stats list them: most
//   bytes read and written first, then by path;
std::vector<RunFile> FileOrder(const RunState& state);
// - the stats' row of one of them (every field);
void FillFileRow(const RunFile& file, stats::File* row);
// - everything else (`files`, FileOrder's, for the TFRecord files' reads);
//   stats->files is left to FillFileRow.
void BuildStats(const RunState& state, const std::vector<RunFile>& files, stats::Stats* stats);

// Fills report->run (after the others) and report->notes.
void BuildRunSummary(RunState& state, report::Report* report);
void BuildNotes(RunState& state, report::Report* report);

// Fits the hosts' clocks (from the step logs already read and the ranked
// trainers' markers) and, unless options say not to, puts the catalog's
// times on the reference clock; state.clocks.corrections then go to every
// trace read (host_clocks.cc; right after the catalog, before anything uses
// its times).
void AlignClocks(const AnalysisOptions& options, RunState& state);

// Fills report->run.host_clocks and adds notes on wall-clock steps and on
// the hosts' clocks (host_clocks.cc; after CombineGroups and FillProcesses).
void CheckClocks(const RunState& state, report::Report* report);

}  // namespace iotap::analyzer::run_state

#endif  // IOTAP_ANALYZER_ANALYSIS_RUN_STATE_H_
