// The merged partials of a run read in shares are the run read whole: the
// report (and the counts) from N shares, merged two by two up a binomial
// tree as the MPI driver (analyzer/cluster/) merges them, equal the
// one-process result, field for field. Here the shares are SharedRuns of
// one process and the partials strings cut into small pieces;
// tests/integration/cluster_test.cc runs the same under mpirun. A field
// added to the run's state but not to its partial fails here, on a run
// that uses it.

#include "analyzer/analysis/shared_run.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/read/trace_set.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/skewed_hosts.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::HostileRunDirectory;
using testing::ReadBytes;
using testing::TempDirectory;

// Merges `from`'s partial into `into`, through a stream cut into pieces of
// `piece` bytes.
absl::Status MergeThroughWire(const SharedRun& from, SharedRun& into, size_t piece = 61) {
  std::vector<std::string> pieces;
  WireWriter out([&](std::string_view p) { pieces.emplace_back(p); }, piece);
  from.WritePartial(out);
  size_t next = 0;
  WireReader in([&] { return next < pieces.size() ? pieces[next++] : std::string(); });
  return into.MergePartial(in);
}

// Rank r's children in a binomial tree of `ranks` (as shares.h builds it).
std::vector<int> Children(int r, int ranks) {
  std::vector<int> children;
  for (int bit = 1; bit < ranks && !(r & bit); bit <<= 1) {
    if (r + bit < ranks) children.push_back(r + bit);
  }
  return children;
}

// `ranks` runs prepared alike, each reading its share, merged up the
// binomial tree into run 0, which is returned. Files are dealt round the
// ranks a trainer's group at a time (`by_group`, as the MPI driver does), or
// file by file, so that groups span ranks too.
std::unique_ptr<SharedRun> ReadInShares(const std::vector<std::string>& files,
                                        const AnalysisOptions& options, int ranks, bool counts,
                                        bool by_group) {
  std::vector<std::unique_ptr<SharedRun>> runs;
  for (int r = 0; r < ranks; ++r) {
    runs.push_back(std::make_unique<SharedRun>());
    if (counts) {
      runs.back()->PrepareCounts(files);
    } else {
      EXPECT_TRUE(runs.back()->Prepare(files, options).ok());
    }
  }
  std::vector<std::vector<int>> shares(ranks);
  for (size_t i = 0; i < runs[0]->file_count(); ++i) {
    int g = runs[0]->group(i);
    shares[(by_group && g >= 0 ? g : static_cast<int>(i)) % ranks].push_back(static_cast<int>(i));
  }
  for (int r = 0; r < ranks; ++r) runs[r]->Read(shares[r], options.threads, nullptr);
  // A rank's children are ranks above it: from the last rank down, each has
  // its children's partials merged before it sends its own.
  for (int r = ranks - 1; r >= 0; --r) {
    for (int child : Children(r, ranks)) {
      absl::Status merged = MergeThroughWire(*runs[child], *runs[r]);
      EXPECT_TRUE(merged.ok()) << merged;
    }
  }
  return std::move(runs[0]);
}

class PartialRunTest : public ::testing::TestWithParam<int> {
 protected:
  static std::string Dir(const std::string& name) {
    std::string d = TempDirectory() + "/" + name;
    std::filesystem::create_directories(d);
    return d;
  }

  // The report and counts of `dir` in GetParam() shares equal those of one
  // process.
  static void ExpectSameAsOneProcess(const std::string& dir, AnalysisOptions options = {}) {
    absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir);
    ASSERT_TRUE(files.ok()) << files.status();
    absl::StatusOr<report::Report> whole = AnalyzeTraceFiles(*files, options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    for (bool by_group : {true, false}) {
      std::unique_ptr<SharedRun> shared = ReadInShares(*files, options, GetParam(), false, by_group);
      absl::StatusOr<report::Report> merged = shared->FinishReport(options);
      ASSERT_TRUE(merged.ok()) << merged.status();
      EXPECT_EQ(merged->SerializeAsString(), whole->SerializeAsString())
          << (by_group ? "groups together" : "file by file") << "\none process:\n"
          << whole->DebugString() << "\nshares:\n" << merged->DebugString();
    }

    RunCounts one = CountTraceFiles(*files, options);
    RunCounts counted = ReadInShares(*files, options, GetParam(), true, false)->FinishCounts();
    EXPECT_EQ(counted.files_read, one.files_read);
    EXPECT_EQ(counted.stats.SerializeAsString(), one.stats.SerializeAsString())
        << "one process:\n" << one.stats.DebugString() << "\nshares:\n"
        << counted.stats.DebugString();
  }
};

TEST_P(PartialRunTest, HostileRunEveryLayer) { ExpectSameAsOneProcess(HostileRunDirectory()); }

TEST_P(PartialRunTest, ManyStepsOnTwoHosts) {
  static const std::string dir = [] {
    std::string d = Dir("many-steps");
    WriteManyStepRun(d, 4, 2, 300, 2);
    return d;
  }();
  ExpectSameAsOneProcess(dir);
}

TEST_P(PartialRunTest, ATimeRangeOfSkewedHosts) {
  static const std::string dir = [] {
    std::string d = Dir("skewed");
    SkewedJob job;
    job.hosts = {{3e6, -20e-6}, {50e6, 50e-6}};
    job.ranks_per_host = 2;
    job.duration_ns = 120 * kSecond;
    WriteSkewedJob(d, job);
    return d;
  }();
  AnalysisOptions options;
  options.range.from_ns = 10 * kSecond;
  options.range.to_ns = 70 * kSecond;
  ExpectSameAsOneProcess(dir, options);
}

// A file cut short, an empty one and one that is not a trace at all: each
// named in the issues and notes, in the one-process order, whichever rank
// read it.
TEST_P(PartialRunTest, DamagedAndEmptyFiles) {
  static const std::string dir = [] {
    std::string d = Dir("damaged");
    WriteManyStepRun(d, 2, 2, 100);
    std::vector<std::string> files = *ListTraceFiles(d);
    std::string bytes = ReadBytes(files[0]);
    std::ofstream(d + "/cut.1.iotap", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    std::ofstream(d + "/empty.2.iotap", std::ios::binary);
    std::ofstream(d + "/garbage.3.iotap", std::ios::binary) << std::string(5000, 'x');
    return d;
  }();
  ExpectSameAsOneProcess(dir);
}

INSTANTIATE_TEST_SUITE_P(Ranks, PartialRunTest, ::testing::Values(1, 2, 3, 8),
                         [](const auto& info) { return "N" + std::to_string(info.param); });

TEST(PartialRunDamageTest, ACutPartialFailsToMerge) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(HostileRunDirectory());
  ASSERT_TRUE(files.ok());
  SharedRun from, into;
  ASSERT_TRUE(from.Prepare(*files, AnalysisOptions()).ok());
  ASSERT_TRUE(into.Prepare(*files, AnalysisOptions()).ok());
  from.Read({0}, 1, nullptr);
  std::string bytes;
  WireWriter out([&](std::string_view p) { bytes += p; });
  from.WritePartial(out);
  bool given = false;
  WireReader in([&] {
    if (given) return std::string();
    given = true;
    return bytes.substr(0, bytes.size() - 3);
  });
  EXPECT_FALSE(into.MergePartial(in).ok());
}

TEST(PartialRunDamageTest, APartialOfAnotherRunIsRefused) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(HostileRunDirectory());
  ASSERT_TRUE(files.ok());
  SharedRun from, into;
  ASSERT_TRUE(from.Prepare(*files, AnalysisOptions()).ok());
  std::vector<std::string> fewer(files->begin(), files->end() - 1);
  ASSERT_TRUE(into.Prepare(fewer, AnalysisOptions()).ok());
  absl::Status merged = MergeThroughWire(from, into);
  EXPECT_EQ(merged.code(), absl::StatusCode::kFailedPrecondition) << merged;
}

}  // namespace
}  // namespace iotap::analyzer
