// Internal to the merge (shared_run.h is its interface): a run's
// analysis shared among processes (ranks), each reading its share of the
// trace files into a RunState prepared alike on every rank (PrepareRun or
// PrepareCounts, then ReadFiles); the states then meet two by two, each
// sending the other what reading added as a partial: a compact stream
// (partial_wire.h), written and merged piece by piece.
//
//   // on the rank that sends:
//   WireWriter out(send_piece);
//   WritePartial(state, out);
//   // on the rank that receives, into its own state:
//   WireReader in(receive_piece);
//   absl::Status merged = MergePartial(in, state);
//
// A partial holds every process its state read or had merged into it (its
// summary, read issues), the run's sums over them: files by path (each path
// written once, sharing its prefix with the one before), descriptors by
// kind, layers, datasets, TFRecord files, CUDA copies, the run's and the
// layers' busy-time bitmaps (bitmap_wire.h) and time series; and the part
// of the report of each trainer group it read or had merged (GroupResult:
// the group's own busy time, series, evidence, marker steps and Python
// samples stay where it was read). Merging is the per-process merge of the
// analysis over already merged figures: sums add, bitmaps OR, and where
// processes disagree the one ranked last still says, whichever rank read
// it, so the merged state is the one-process state. What the rest of the
// run's state holds (catalog, clocks, step logs) every rank worked out alike
// and is not sent.

#ifndef IOTAP_ANALYZER_MERGE_PARTIAL_RUN_H_
#define IOTAP_ANALYZER_MERGE_PARTIAL_RUN_H_

#include "absl/status/status.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/merge/partial_wire.h"

namespace iotap::analyzer::internal {

// Writes what ReadFiles, AnalyzeGroups (and MergePartial) added to `s`;
// before FinishReading.
// With `sizes`, adds there what went to what.
void WritePartial(const run_state::RunState& s, WireWriter& out, PartialSizes* sizes = nullptr);

// Adds a partial, written from a state prepared as `s` was, into `s`.
// Fails if the stream is damaged or from a run prepared otherwise; `s` is
// then unusable.
absl::Status MergePartial(WireReader& in, run_state::RunState& s);

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_MERGE_PARTIAL_RUN_H_
