// A run as a Perfetto trace (TrackEvent protobuf), for the Perfetto UI
// (ui.perfetto.dev, or one served locally) and trace_processor.
//
//   ExportStats stats;
//   absl::Status s = ExportPerfetto("iotap-20261121-101500", "run.pftrace", {}, &stats);
//
// What the trace holds (see export_model.h for where it comes from):
// - a process track per traced process, named after its command, and a
//   thread track per thread (ThreadDescriptor pid/tid), with every traced
//   call as a slice named after its op ("pread", "fread", "H5Dread",
//   "cudaMemcpyHtoD", ...) in the layer's category, annotated with the file,
//   bytes, offset and errno;
// - for trainers, a "training steps" track with each step and its data waits
//   nested inside;
// - CUDA copies as slices on their thread, and device-side activity (CUPTI)
//   on a track per GPU stream;
// - counter tracks for the analysis' binned series: bandwidth per layer and
//   per trainer group, CUDA copy bandwidth, CPU use, I/O busy share, data
//   waits; per-trainer series hang under their process.
// Names, categories, annotation names and file names are interned once per
// process (one packet sequence per process). Processes from several hosts
// that share a pid (or thread id) get distinct numbers in the trace; the
// process name keeps the real pid and host.
//
// The format's fields are those of proto/perfetto/trace.proto, a minimal
// copy of Perfetto's schema with its field numbers.

#ifndef IOTAP_ANALYZER_OUTPUT_EXPORT_PERFETTO_EXPORT_H_
#define IOTAP_ANALYZER_OUTPUT_EXPORT_PERFETTO_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "analyzer/output/export/export_model.h"

namespace iotap::analyzer {

struct ExportStats {
  uint64_t processes = 0;
  uint64_t tracks = 0;
  uint64_t slices = 0;    // slices and instants
  uint64_t counters = 0;  // counter values
  uint64_t clipped = 0;   // slices cut at their parent's end (export_model.h)
  uint64_t bytes = 0;     // of the file written
};

// Writes the Perfetto trace of the run at `run_path` to `out_path`.
absl::Status ExportPerfetto(const std::string& run_path, const std::string& out_path,
                            const ExportOptions& options, ExportStats* stats);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_EXPORT_PERFETTO_EXPORT_H_
