// Who is who in a run: every trace file's process, what role it plays, and
// which trainer a data-loading worker serves.
//
// The catalog reads only the first frame of each file (the process header)
// and its last frame (how long it ran), so it is cheap even for a thousand
// files. Roles:
// - LOADER: a data-loading worker: a Python process forked from a Python
//   process that goes on running Python (DataLoader workers with the fork
//   start method), or started by multiprocessing's spawn or forkserver.
// - HELPER: processes that only support the job: multiprocessing's resource
//   tracker and forkserver, shells, and forks that replaced themselves with
//   another program (a fork followed by exec).
// - TRAINER: every other process that ran Python or carries a rank, and the
//   root process of the job if nothing else qualifies (`iotap run dd ...`).
// A loader's trainer is its nearest ancestor that is a trainer. The analysis
// may promote a process to TRAINER later (it recorded training steps).

#ifndef IOTAP_ANALYZER_READ_RUN_CATALOG_H_
#define IOTAP_ANALYZER_READ_RUN_CATALOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/read/trace_reader.h"
#include "iotap/report.pb.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

struct CatalogEntry {
  std::string path;          // the trace file
  ProcessHeader header;
  int64_t start_unix_ns = 0; // header's start, wall clock
  int64_t end_unix_ns = 0;   // the latest time the file's last frame mentions
  report::Role role = report::ROLE_UNSPECIFIED;
  int parent = -1;           // index of the parent process's entry, -1 if not traced
  int trainer = -1;          // for loaders: index of their trainer
  bool replaced_by_exec = false;  // a later file of the same pid follows it
  // How far the wall clock moved against the monotonic clock between the
  // process's start and its last clock snapshot: non-zero when someone set
  // the clock during the run.
  int64_t wall_clock_step_ns = 0;
};

struct RunCatalog {
  std::vector<CatalogEntry> entries;  // sorted by start time
  int64_t start_unix_ns = 0;          // earliest process start
  int64_t end_unix_ns = 0;            // latest time any file's last frame mentions
  std::vector<ReadIssue> issues;      // files whose header could not be read
  std::vector<std::string> hosts;
};

// Reads the header of every file, `threads` files at a time, and classifies
// the processes.
RunCatalog CatalogTraceFiles(const std::vector<std::string>& files, int threads = 1);

// Just the classification, over headers already read (entries need `header`
// and `start_unix_ns`); exposed for tests.
void ClassifyProcesses(RunCatalog* catalog);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_RUN_CATALOG_H_
