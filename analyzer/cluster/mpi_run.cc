#include "analyzer/cluster/mpi_run.h"

#include <mpi.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analyzer/merge/partial_wire.h"
#include "analyzer/merge/shared_run.h"
#include "analyzer/cluster/shares.h"
#include "analyzer/read/trace_set.h"

namespace iotap::analyzer::cluster {


namespace {

constexpr int kPieceTag = 17;
constexpr size_t kPieceBytes = size_t{4} << 20;

int EnvInt(const char* name, int otherwise) {
  const char* v = std::getenv(name);
  int n = 0;
  return v != nullptr && absl::SimpleAtoi(v, &n) ? n : otherwise;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// MPI for the length of one command.
class Mpi {
 public:
  Mpi() {
    int provided = 0;
    // Only the calling thread talks to MPI; the analysis's threads do not.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size_);
    MPI_Comm_free(&node);
    timed_ = EnvInt("IOTAP_MPI_TIMES", 0) != 0;
    start_ = Now();
  }
  ~Mpi() { MPI_Finalize(); }
  Mpi(const Mpi&) = delete;
  Mpi& operator=(const Mpi&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Ranks on this node (sharing its cores).
  int node_size() const { return node_size_; }

  // Ends every rank: a rank that cannot go on must not leave the others
  // waiting, nor rank 0 writing a report without its share.
  [[noreturn]] void Abort(std::string_view why) const {
    std::fprintf(stderr, "iotap: rank %d of %d: %.*s; stopping every rank\n", rank_, size_,
                 static_cast<int>(why.size()), why.data());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 70);
    std::_Exit(70);
  }

  // Whether every rank passes the same `value`.
  bool AllAgree(uint64_t value) const {
    uint64_t low = 0, high = 0;
    MPI_Allreduce(&value, &low, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&value, &high, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    return low == high;
  }

  // With IOTAP_MPI_TIMES=1, the seconds since the last mark, for the
  // benchmark's figures (stderr, one line per rank at the end).
  void Mark(const char* phase) {
    if (!timed_) return;
    double now = Now();
    absl::StrAppend(&times_, " ", phase, "=", absl::SixDigits(now - start_), "s");
    start_ = now;
  }
  // With IOTAP_MPI_TIMES=1, `what` on this rank's line.
  void Note(const std::string& what) {
    if (timed_) absl::StrAppend(&notes_, " ", what);
  }
  void Barrier() const {
    if (timed_) MPI_Barrier(MPI_COMM_WORLD);  // so that "merge" is the merge alone
  }
  void PrintTimes() const {
    if (!timed_) return;
    struct rusage usage {};
    getrusage(RUSAGE_SELF, &usage);
    auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    std::fprintf(stderr, "iotap-mpi-times rank=%d ranks=%d%s cpu=%.2fs max_rss_kib=%ld%s\n", rank_,
                 size_, times_.c_str(), seconds(usage.ru_utime) + seconds(usage.ru_stime),
                 usage.ru_maxrss, notes_.c_str());
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  int node_size_ = 1;
  bool timed_ = false;
  double start_ = 0;
  std::string times_;
  std::string notes_;
};

// srun without MPI support starts tasks that each see a world of one: they
// would all write the whole report.
absl::Status CheckWorld(const Mpi& mpi) {
  int tasks = EnvInt("SLURM_STEP_NUM_TASKS", EnvInt("SLURM_NTASKS", 1));
  if (mpi.size() == 1 && tasks > 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "srun started ", tasks, " tasks, but MPI sees only this one: run srun --mpi=pmix (or "
        "pmi2, whichever `srun --mpi=list` offers and Open MPI was built with)"));
  }
  return absl::OkStatus();
}

// Rank 0 deals the files by size, a trainer's group to one rank; every
// rank learns the deal.
std::vector<int> Deal(const Mpi& mpi, const SharedRun& run) {
  std::vector<int> owner(run.file_count(), 0);
  if (mpi.rank() == 0) {
    std::vector<uint64_t> sizes;
    std::vector<int> groups;
    for (size_t i = 0; i < run.file_count(); ++i) {
      struct stat st {};
      sizes.push_back(stat(run.file(i).c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0);
      groups.push_back(run.group(i));
    }
    owner = ShareGroupsBySize(sizes, groups, mpi.size());
  }
  if (!owner.empty()) {
    MPI_Bcast(owner.data(), static_cast<int>(owner.size()), MPI_INT, 0, MPI_COMM_WORLD);
  }
  return owner;
}

void SendPartial(const SharedRun& run, int to, PartialSizes* sizes) {
  WireWriter out(
      [to](std::string_view piece) {
        MPI_Send(piece.data(), static_cast<int>(piece.size()), MPI_BYTE, to, kPieceTag,
                 MPI_COMM_WORLD);
      },
      kPieceBytes);
  run.WritePartial(out, sizes);
  MPI_Send(nullptr, 0, MPI_BYTE, to, kPieceTag, MPI_COMM_WORLD);  // the end
}

absl::Status ReceivePartial(SharedRun& run, int from) {
  WireReader in([from] {
    MPI_Status status;
    MPI_Probe(from, kPieceTag, MPI_COMM_WORLD, &status);
    int bytes = 0;
    MPI_Get_count(&status, MPI_BYTE, &bytes);
    std::string piece(static_cast<size_t>(bytes), '\0');
    MPI_Recv(piece.data(), bytes, MPI_BYTE, from, kPieceTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return piece;
  });
  return run.MergePartial(in);
}

// Reads this rank's share of the run's files and merges the ranks' states
// up the tree; true on rank 0, which then holds the whole run.
bool ReadAndReduce(Mpi& mpi, SharedRun& run, const AnalysisOptions& options) {
  std::vector<int> owner = Deal(mpi, run);
  mpi.Mark("prepare");
  std::vector<int> share = ShareOf(owner, mpi.rank());
  // The node's ranks share its cores: AnalysisOptions::threads is per node.
  const int threads = std::max(1, options.threads / mpi.node_size());
  run.Read(share, threads,
           mpi.rank() == 0 ? options.progress : std::function<void(size_t, size_t)>());
  mpi.Mark("read");
  SharedRun::SummaryBytes read = run.summary_bytes();
  mpi.Note(absl::StrCat("read_bitmaps_bytes=", read.bitmaps, " read_series_bytes=", read.series));
  // For the suite's fault test only: this rank dies before its share is
  // merged, as a node that fails would.
  if (EnvInt("IOTAP_MPI_TEST_DIE_RANK", -1) == mpi.rank()) std::_Exit(3);
  // The run ends with the last event any rank read: the timeline's bins and
  // the last epoch's end, which each rank's groups need, end there.
  int64_t end_ns = run.end_ns();
  MPI_Allreduce(MPI_IN_PLACE, &end_ns, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  absl::Status analysed = run.AnalyzeGroups(end_ns, options, threads);
  if (!analysed.ok()) mpi.Abort(std::string(analysed.message()));
  mpi.Mark("groups");
  mpi.Barrier();
  mpi.Mark("wait");
  ReductionStep step = ReductionOf(mpi.rank(), mpi.size());
  for (int child : step.children) {
    absl::Status merged = ReceivePartial(run, child);
    if (!merged.ok()) mpi.Abort(absl::StrCat("the partial analysis of rank ", child, ": ",
                                             merged.message()));
  }
  if (step.parent >= 0) {
    PartialSizes sizes;
    SendPartial(run, step.parent, &sizes);
    mpi.Note(absl::StrCat("sent_bytes=", sizes.total, " (bitmaps=", sizes.bitmaps,
                          " series=", sizes.series, " results=", sizes.results,
                          " processes=", sizes.processes, " files=", sizes.files, ")"));
  }
  mpi.Mark("merge");
  if (!step.children.empty()) {
    SharedRun::SummaryBytes merged = run.summary_bytes();
    mpi.Note(absl::StrCat("merged_bitmaps_bytes=", merged.bitmaps,
                          " merged_series_bytes=", merged.series));
  }
  return mpi.rank() == 0;
}

}  // namespace

bool StartedByLauncher() {
  const char* off = std::getenv("IOTAP_MPI");
  if (off != nullptr && std::strcmp(off, "0") == 0) return false;
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

absl::StatusOr<std::optional<report::Report>> AnalyzeRunOnRanks(const std::string& path,
                                                                 const AnalysisOptions& options) {
  Mpi mpi;
  absl::Status world = CheckWorld(mpi);
  if (!world.ok()) return world;
  const bool root = mpi.rank() == 0;
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(path);
  SharedRun run;
  absl::Status prepared = files.ok() ? run.Prepare(*files, options) : files.status();
  if (!mpi.AllAgree(prepared.ok() ? run.Fingerprint() : 0)) {
    prepared = absl::FailedPreconditionError(
        "the ranks do not see the same trace files (a directory that differs between nodes, or "
        "files still being written): give every rank the same finished run");
  }
  if (!prepared.ok()) return root ? absl::StatusOr<std::optional<report::Report>>(prepared)
                                  : std::nullopt;
  std::optional<report::Report> out;
  if (ReadAndReduce(mpi, run, options)) {
    absl::StatusOr<report::Report> r = run.FinishReport(options);
    if (!r.ok()) mpi.Abort(std::string(r.status().message()));
    out = std::move(*r);
    mpi.Mark("finish");
  }
  mpi.PrintTimes();
  return out;
}

absl::StatusOr<std::optional<RunCounts>> CountOnRanks(const std::vector<std::string>& files,
                                                      const AnalysisOptions& options) {
  Mpi mpi;
  absl::Status world = CheckWorld(mpi);
  if (!world.ok()) return world;
  SharedRun run;
  run.PrepareCounts(files);
  if (!mpi.AllAgree(run.Fingerprint())) {
    if (mpi.rank() != 0) return std::nullopt;
    return absl::FailedPreconditionError(
        "the ranks do not see the same trace files: give every rank the same finished run");
  }
  std::optional<RunCounts> out;
  if (ReadAndReduce(mpi, run, options)) {
    out.emplace(run.FinishCounts());
    mpi.Mark("finish");
  }
  mpi.PrintTimes();
  return out;
}

}  // namespace iotap::analyzer::cluster
