// `iotap report` and `iotap stats` on the ranks of an MPI job (mpirun,
// mpiexec, srun): the same outputs as one process, from many.
//
//   if (cluster::StartedByLauncher()) {
//     absl::StatusOr<std::optional<report::Report>> r = cluster::AnalyzeRunOnRanks(dir, options);
//     // rank 0: the report; every other rank: nullopt (it writes nothing)
//   }
//
// How it goes (README.md, "Analysing a run on many nodes"):
// 1. Every rank lists and catalogs the trace files and fits the clocks
//    itself (headers and last frames only, the same on every rank); the
//    ranks check that they agree (a hash of the catalog), so files that
//    differ between nodes fail the command instead of mixing two runs.
// 2. Rank 0 deals the files to the ranks by size, a trainer and its loaders
//    together (shares.h), and tells them.
// 3. Each rank reads its share with the ordinary per-process analysis on
//    its threads (AnalysisOptions::threads per node, split among the node's
//    ranks); the ranks agree on the run's end (MPI_Allreduce of the last
//    event each read), and each works out its trainer groups' parts of the
//    report (steps, waits, timeline, profiles), which is all that leaves it
//    of their busy time and series.
// 4. The partial states meet in a binomial tree (shares.h; the partials:
//    merge/shared_run.h), streamed in pieces of 4 MiB and merged as they
//    come: ceil(log2 N) rounds to rank 0. A rank holds its own state, what
//    it merged from the ranks below it, and one piece in flight.
// 5. Rank 0 puts the groups' parts together, finishes the analysis and
//    writes the outputs.
// A rank that fails stops the whole job (MPI_Abort, with the reason on
// stderr); a rank that dies is noticed by the launcher, which ends the job
// with an error: the command never reports a part of the run as the whole.
//
// MPI starts only under a launcher: a plain `iotap report` never calls
// MPI_Init and runs as before.

#ifndef IOTAP_ANALYZER_CLUSTER_MPI_RUN_H_
#define IOTAP_ANALYZER_CLUSTER_MPI_RUN_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/analysis/run_analysis.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer::cluster {

// True when an MPI launcher started this process: Open MPI's mpirun
// (OMPI_COMM_WORLD_SIZE), a PMIx launcher (PMIX_RANK: Open MPI 5, srun
// --mpi=pmix), a PMI-1/2 launcher (PMI_RANK, PMI_SIZE: MPICH's Hydra, srun
// --mpi=pmi2); and IOTAP_MPI is not "0".
bool StartedByLauncher();

// AnalyzeRun over the ranks of MPI_COMM_WORLD (MPI is started and stopped
// here). Rank 0 gets the report or the error, the others nullopt (they
// print nothing).
absl::StatusOr<std::optional<report::Report>> AnalyzeRunOnRanks(const std::string& path,
                                                                 const AnalysisOptions& options);

// CountTraceFiles over the ranks; rank 0 gets the counts.
absl::StatusOr<std::optional<RunCounts>> CountOnRanks(const std::vector<std::string>& files,
                                                      const AnalysisOptions& options);

}  // namespace iotap::analyzer::cluster

#endif  // IOTAP_ANALYZER_CLUSTER_MPI_RUN_H_
