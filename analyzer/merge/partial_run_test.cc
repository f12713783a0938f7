// The partial states of a run (partial_run.h), written and merged through
// the SharedRuns that read its shares (shared_run.h): the merged partials of
// a run read in shares are the run read whole. The report (and the counts)
// from N shares, merged two by two up a binomial tree as the MPI driver
// (analyzer/cluster/) merges them, or in a random order, equal the
// one-process result, field for field. Here the shares are SharedRuns of one
// process and the partials strings cut into small pieces;
// tests/integration/cluster_test.cc runs the same under mpirun. A field
// added to the run's state or to a trainer group's result (GroupResult) but
// not to the partial fails here, on a run that uses it: the runs below use
// every part of a group's result (EveryPartOfAGroupsResultIsUsed).

#include "analyzer/merge/shared_run.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "analyzer/read/run_catalog.h"
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
using testing::WrittenOnce;

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

// How the shares are made and merged: by default each trainer's group (and
// each file of no group) dealt round the ranks by catalog index, merged up
// the binomial tree as the MPI driver merges them; with a `seed`, each
// dealt to a random rank and merged straight into rank 0 in a random order.
struct Sharing {
  unsigned seed = 0;
  // Files (by a part of their path) dealt to the last rank whatever the rest.
  std::string to_last_rank;
};

// The rank of each catalog entry of `run`.
std::vector<int> Deal(const SharedRun& run, int ranks, const Sharing& sharing) {
  std::mt19937 random(sharing.seed);
  std::map<int, int> rank_of_group;
  std::vector<int> rank(run.file_count());
  for (size_t i = 0; i < run.file_count(); ++i) {
    const int g = run.group(i);
    const int unit = g >= 0 ? g : static_cast<int>(i);
    if (g >= 0 && rank_of_group.count(g)) {
      rank[i] = rank_of_group[g];
    } else {
      rank[i] = sharing.seed == 0 ? unit % ranks : static_cast<int>(random() % ranks);
      if (g >= 0) rank_of_group[g] = rank[i];
    }
    if (!sharing.to_last_rank.empty() &&
        run.file(i).find(sharing.to_last_rank) != std::string::npos) {
      rank[i] = ranks - 1;
    }
  }
  return rank;
}

// `ranks` runs prepared alike, each reading its share and analysing its
// groups once every run has read (with the run's end, the latest of the
// shares'), merged into run 0, which is returned.
std::unique_ptr<SharedRun> ReadInShares(const std::vector<std::string>& files,
                                        const AnalysisOptions& options, int ranks, bool counts,
                                        const Sharing& sharing = {}) {
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
  std::vector<int> rank = Deal(*runs[0], ranks, sharing);
  for (size_t i = 0; i < rank.size(); ++i) shares[rank[i]].push_back(static_cast<int>(i));
  for (int r = 0; r < ranks; ++r) runs[r]->Read(shares[r], options.threads, nullptr);
  int64_t end_ns = INT64_MIN;
  for (const auto& run : runs) end_ns = std::max(end_ns, run->end_ns());
  for (const auto& run : runs) {
    absl::Status analysed = run->AnalyzeGroups(end_ns, options, options.threads);
    EXPECT_TRUE(analysed.ok()) << analysed;
  }
  if (sharing.seed != 0) {
    std::vector<int> order;
    for (int r = 1; r < ranks; ++r) order.push_back(r);
    std::shuffle(order.begin(), order.end(), std::mt19937(sharing.seed));
    for (int r : order) {
      absl::Status merged = MergeThroughWire(*runs[r], *runs[0]);
      EXPECT_TRUE(merged.ok()) << merged;
    }
    return std::move(runs[0]);
  }
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
  // process: shared as the MPI driver shares a run, and (the groups' results
  // arriving in other orders) at random.
  static void ExpectSameAsOneProcess(const std::string& dir, AnalysisOptions options = {},
                                     const std::string& to_last_rank = "") {
    absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir);
    ASSERT_TRUE(files.ok()) << files.status();
    absl::StatusOr<report::Report> whole = AnalyzeTraceFiles(*files, options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    for (unsigned seed : {0u, 1u, 2u}) {
      Sharing sharing{seed, to_last_rank};
      std::unique_ptr<SharedRun> shared = ReadInShares(*files, options, GetParam(), false, sharing);
      absl::StatusOr<report::Report> merged = shared->FinishReport(options);
      ASSERT_TRUE(merged.ok()) << merged.status();
      EXPECT_EQ(merged->SerializeAsString(), whole->SerializeAsString())
          << "shared with seed " << seed << "\none process:\n"
          << whole->DebugString() << "\nshares:\n"
          << merged->DebugString();
    }

    RunCounts one = CountTraceFiles(*files, options);
    for (unsigned seed : {0u, 1u}) {
      RunCounts counted =
          ReadInShares(*files, options, GetParam(), true, Sharing{seed, ""})->FinishCounts();
      EXPECT_EQ(counted.files_read, one.files_read);
      EXPECT_EQ(counted.WithFileRows().SerializeAsString(), one.WithFileRows().SerializeAsString())
          << "one process:\n"
          << one.stats.DebugString() << "\nshares:\n"
          << counted.stats.DebugString();
    }
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

// The layers added since the partials were first written: inferred waits
// (pipes a trainer waits on, its loaders' channels, a trainer without
// loaders reading for itself), Python stack samples, page faults of mapped
// reads and io_uring requests, with notes from several processes.
constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;

int64_t At(double ms) { return kT0 + static_cast<int64_t>(ms * 1e6); }

void PySample(SyntheticProcess& p, const std::string& function, int tid, double start, double end) {
  uint32_t f = p.Name(function + std::string(1, '\0') + "/x/torch/data.py" + std::string(1, '\0') +
                          "10",
                      InternedString::KIND_PY_FUNCTION);
  uint32_t stack = p.Name(Varints({f, 12}), InternedString::KIND_PY_STACK);
  p.Add({.op = OP_PY_SAMPLE, .start_ns = At(start), .end_ns = At(end), .file = stack,
         .requested = static_cast<uint64_t>((end - start) * kMs / 2),
         .flags = FLAG_EXPLICIT_TIMES, .aux = static_cast<uint64_t>(tid),
         .tid = static_cast<uint32_t>(tid + 1000)});
}

void Faults(SyntheticProcess& p, const std::string& note, bool counters) {
  Packet sampling;
  sampling.mutable_fault_sampling()->set_source(counters ? FaultSampling::SOURCE_THREAD_COUNTERS
                                                         : FaultSampling::SOURCE_PERF_SAMPLES);
  sampling.mutable_fault_sampling()->set_note(note);
  sampling.mutable_fault_sampling()->set_lost_faults(counters ? 0 : 3);
  p.Packet(sampling);
  uint32_t data = p.Path("/data/mapped.bin");
  p.Add({.op = OP_MAPPED_READ, .start_ns = At(50), .end_ns = At(50.2), .file = data,
         .requested = 4096, .result = 65536});
  p.Add({.op = OP_URING_READ, .start_ns = At(60), .end_ns = At(61), .file = data,
         .requested = 8192, .result = 8192});
  p.Add({.op = OP_URING_ENTER, .start_ns = At(60), .end_ns = At(60.1), .requested = 2,
         .result = 2});
}

void WriteNewerLayersRun(const std::string& dir) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.header().set_wait_threshold_ns(20'000);
  uint32_t queue = trainer.Name("pipe:[900]", InternedString::KIND_PIPE);
  for (int s = 0; s < 4; ++s) {
    double start = 10 + 100 * s;
    trainer.Marker(OP_STEP_BEGIN, At(start), At(start), s);
    trainer.Marker(OP_DATA_WAIT, At(start), At(start + 10 + s), s);
    trainer.Marker(OP_STEP_END, At(start + 100), At(start + 100), s);
    trainer.Add({.op = OP_POLL, .start_ns = At(start), .end_ns = At(start + 9), .file = queue,
                 .requested = 1, .result = 1});
    trainer.Read(OP_READ, At(start + 9), At(start + 9.5), queue, -1, 4);
    PySample(trainer, "train_step", 100, start + 20, start + 40);
  }
  Faults(trainer, "", false);
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(450));
  trainer.WriteTo(dir + "/trainer.iotap");
  for (int pid : {101, 102}) {
    SyntheticProcess p(pid, 100, "/usr/bin/python3", {"python3", "train.py"}, At(1),
                       ProcessHeader::ORIGIN_FORK);
    p.header().set_wait_threshold_ns(20'000);
    uint32_t data = p.Path("/data/shard-" + std::to_string(pid) + ".tar");
    for (int k = 0; k < 8; ++k) p.Read(OP_PREAD, At(5 + 50 * k), At(7 + 50 * k), data, k * 4096, 4096);
    p.Read(OP_WRITE, At(30), At(30.5), p.Name("pipe:[900]", InternedString::KIND_PIPE), -1, 400);
    p.Read(OP_WRITE, At(31), At(31.5), p.Name("socket:[9" + std::to_string(pid) + "]",
                                              InternedString::KIND_SOCKET), -1, 40);
    PySample(p, "ColorJitter.forward", pid, 12, 30);
    Faults(p, pid == 101 ? "perf refused" : "no mmap", true);
    p.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, At(440));
    p.WriteTo(dir + "/loader-" + std::to_string(pid) + ".iotap");
  }
  // A trainer of its own, without loaders: it reads its data itself.
  SyntheticProcess alone(300, 1, "/usr/bin/python3", {"python3", "solo.py"}, kT0,
                         ProcessHeader::ORIGIN_EXEC, "node1");
  alone.header().set_wait_threshold_ns(20'000);
  alone.header().set_rank(1);
  uint32_t file = alone.Path("/data/solo.bin");
  for (int s = 0; s < 3; ++s) {
    double start = 20 + 100 * s;
    alone.Marker(OP_STEP_BEGIN, At(start), At(start), s);
    alone.Read(OP_PREAD, At(start + 1), At(start + 6), file, s * 65536, 65536);
    alone.Marker(OP_STEP_END, At(start + 90), At(start + 90), s);
  }
  alone.End(EndOfTrace::REASON_EXIT, 0, At(400));
  alone.WriteTo(dir + "/solo.iotap");
}

const std::string& NewerLayersDirectory() { return WrittenOnce<WriteNewerLayersRun>("newer-layers"); }

TEST_P(PartialRunTest, WaitsPythonSamplesMappedReadsAndUring) {
  const std::string& dir = NewerLayersDirectory();
  ExpectSameAsOneProcess(dir);
  // The run holds what this test is for.
  absl::StatusOr<report::Report> r = AnalyzeRun(dir, AnalysisOptions());
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->py_profiles_size(), 0);
  bool compared = false;
  for (const report::Step& step : r->steps()) compared |= step.inferred_wait_s() >= 0;
  EXPECT_TRUE(compared);
  RunCounts counts = CountTraceFiles(*ListTraceFiles(dir), AnalysisOptions());
  EXPECT_NE(counts.WithFileRows().DebugString().find("/data/mapped.bin"), std::string::npos);
  EXPECT_NE(counts.stats.DebugString().find("perf refused"), std::string::npos);
}

// Three trainers and a process of no group, from `kT0` (ms):
//   pid 100, rank 0, loaders 101 and 102: 4 steps of 100 ms from 10 ms,
//     each waiting 10 ms for data; epochs marked at 5 and 210 ms; a CUDA
//     copy in step 1; loaders reading, using CPU and waiting for one.
//   pid 300, rank 1, no loaders: only data waits (each DataLoader
//     iteration is a step, which its markers' definition note says), and
//     reads of its own.
//   pid 400 (python3 agent.py), neither steps nor loaders: a helper, whose
//     reads still count as the run's busy time.
//   pid 500 (/bin/sh): a read from 20 ms to 2,000 ms, written in its file's
//     first frame, then short reads up to 500 ms: the run's end is known
//     only once that file is read.
constexpr int64_t kLateEndMs = 2000;

void WriteGroupsRun(const std::string& dir) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.header().set_rank(0);
  uint32_t epoch = trainer.Name("epoch", InternedString::KIND_MARK);
  trainer.Add({.op = OP_MARK, .start_ns = At(5), .end_ns = At(5), .file = epoch});
  for (int s = 0; s < 4; ++s) {
    double start = 10 + 100 * s;
    if (s == 2) {
      trainer.Add({.op = OP_MARK, .start_ns = At(start), .end_ns = At(start), .file = epoch});
    }
    trainer.Marker(OP_STEP_BEGIN, At(start), At(start), s);
    trainer.Marker(OP_DATA_WAIT, At(start), At(start + 10), s);
    trainer.Marker(OP_STEP_END, At(start + 100), At(start + 100), s);
  }
  trainer.Add({.op = OP_CUDA_MEMCPY_HTOD,
               .start_ns = At(150),
               .end_ns = At(150.3),
               .requested = 1 << 20,
               .flags = FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC,
               .aux = 0x7f00});
  trainer.Cpu(At(0), 0);
  trainer.Cpu(At(400), 300 * kMs);
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(420));
  trainer.WriteTo(dir + "/trainer-100.iotap");
  for (int pid : {101, 102}) {
    SyntheticProcess p(pid, 100, "/usr/bin/python3", {"python3", "train.py"}, At(1),
                       ProcessHeader::ORIGIN_FORK);
    uint32_t data = p.Path("/data/shard-" + std::to_string(pid) + ".bin");
    for (int k = 0; k < 8; ++k) {
      p.Read(OP_PREAD, At(12 + 50 * k), At(15 + 50 * k), data, k * 4096, 4096);
    }
    // CPU time, and time runnable without a CPU (an oversubscribed host).
    for (int k = 0; k <= 2; ++k) {
      Packet resources;
      resources.mutable_resources()->set_monotonic_ns(At(200 * k));
      resources.mutable_resources()->set_user_cpu_ns((pid - 100) * 70 * k * kMs);
      resources.mutable_resources()->set_run_queue_ns(k * k * 9 * kMs);
      p.Packet(resources);
    }
    p.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, At(410));
    p.WriteTo(dir + "/loader-" + std::to_string(pid) + ".iotap");
  }
  SyntheticProcess alone(300, 1, "/usr/bin/python3", {"python3", "solo.py"}, kT0,
                         ProcessHeader::ORIGIN_EXEC, "node1");
  alone.header().set_rank(1);
  alone.header().set_wait_threshold_ns(20'000);
  uint32_t file = alone.Path("/data/solo.bin");
  for (int s = 0; s < 5; ++s) {
    double start = 20 + 60 * s;
    alone.Marker(OP_DATA_WAIT, At(start), At(start + 8), s);
    alone.Read(OP_PREAD, At(start + 1), At(start + 6), file, s * 65536, 65536);
  }
  alone.End(EndOfTrace::REASON_EXIT, 0, At(400));
  alone.WriteTo(dir + "/trainer-300.iotap");
  SyntheticProcess agent(400, 1, "/usr/bin/python3", {"python3", "agent.py"}, kT0);
  uint32_t config = agent.Path("/etc/agent.json");
  agent.Read(OP_PREAD, At(3), At(4), config, 0, 512);
  agent.End(EndOfTrace::REASON_EXIT, 0, At(430));
  agent.WriteTo(dir + "/agent-400.iotap");
  SyntheticProcess late(500, 1, "/bin/sh", {"sh", "-c", "cp"}, kT0);
  uint32_t copied = late.Path("/data/copied.bin");
  late.Read(OP_PREAD, At(20), At(kLateEndMs), copied, 0, 1 << 20);
  for (int k = 1; k <= 8; ++k) {
    late.Read(OP_PREAD, At(50 * k), At(50 * k + 1), copied, k << 20, 4096);
  }
  late.WriteTo(dir + "/late-500.iotap", /*events_per_frame=*/2);
}

const std::string& GroupsRunDirectory() { return WrittenOnce<WriteGroupsRun>("groups-run"); }

// Epochs, inferred waits of a trainer without loaders, a CUDA copy in a
// step, a trainer demoted to helper; the late process read by the last rank
// (by every other rank's groups' figures only through the run's end).
TEST_P(PartialRunTest, EpochsHelpersAndALateEventOnTheLastRank) {
  const std::string& dir = GroupsRunDirectory();
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir);
  ASSERT_TRUE(files.ok());
  // What this test is for: the run ends later than the catalog says, with an
  // event of a file of no group.
  RunCatalog catalog = CatalogTraceFiles(*files);
  ASSERT_LT(catalog.end_unix_ns, At(kLateEndMs - 1000));
  absl::StatusOr<report::Report> r = AnalyzeTraceFiles(*files, AnalysisOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->epochs().epoch_size(), 2);
  EXPECT_DOUBLE_EQ(r->epochs().epoch(1).end_s(), kLateEndMs / 1e3);
  const int64_t bins = r->timeline().bins();
  EXPECT_DOUBLE_EQ(r->timeline().bin_width_s(), ((kLateEndMs * kMs + bins - 1) / bins) / 1e9);
  int helpers = 0;
  for (const report::Process& p : r->processes()) {
    helpers += p.pid() == 400 && p.role() == report::HELPER;
  }
  EXPECT_EQ(helpers, 1);
  EXPECT_EQ(r->workers().trainers(), 2);
  ExpectSameAsOneProcess(dir, AnalysisOptions(), "late-500");
}

// Step logs (--steps) over ranks: a JSON-lines log whose steps name ranks 0
// and 1 (rank 1's without their waits, which are inferred; and one rank of
// no process: given to the first trainer, with a note), with a line that is
// no step, and a log that cannot be read. The markers' steps are not used,
// their notes still are.
AnalysisOptions StepLogOptions() {
  static const std::string logs = [] {
    std::string d = TempDirectory() + "/groups-run-logs";
    std::filesystem::create_directories(d);
    auto line = [](int step, double start_ms, double end_ms, int rank, bool wait) {
      return absl::StrFormat(
          "{\"step\": %d, \"start\": 1700000000.%09d, \"end\": 1700000000.%09d, %s"
          "\"rank\": %d}\n",
          step, static_cast<int>(start_ms * 1e6), static_cast<int>(end_ms * 1e6),
          wait ? "\"data_wait\": 0.004, " : "", rank);
    };
    std::ofstream out(d + "/steps.jsonl");
    for (int s = 0; s < 3; ++s) out << line(s, 10 + 120 * s, 120 + 120 * s, 0, true);
    out << "not a step\n";
    for (int s = 0; s < 4; ++s) out << line(s, 25 + 80 * s, 95 + 80 * s, 1, false);
    out << line(9, 300, 330, 7, true);
    return d;
  }();
  AnalysisOptions options;
  options.step_logs = {logs + "/steps.jsonl", logs + "/missing.jsonl"};
  return options;
}

TEST_P(PartialRunTest, StepLogsOverRanks) {
  const AnalysisOptions options = StepLogOptions();
  absl::StatusOr<report::Report> r = AnalyzeRun(GroupsRunDirectory(), options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->steps_size(), 8);
  ASSERT_EQ(r->run().step_sources_size(), 1);
  EXPECT_EQ(r->run().step_sources(0), options.step_logs[0]);
  EXPECT_GT(r->step_statistics().data_waits().inferred_steps(), 0);
  std::string notes;
  for (const report::Note& n : r->notes()) notes += n.message() + "\n";
  EXPECT_NE(notes.find("each iteration of the DataLoader is a step"), std::string::npos) << notes;
  EXPECT_NE(notes.find("some steps name no rank or process"), std::string::npos) << notes;
  EXPECT_NE(notes.find("step log not used"), std::string::npos) << notes;
  EXPECT_NE(notes.find("line 4"), std::string::npos) << notes;
  ExpectSameAsOneProcess(GroupsRunDirectory(), options, "late-500");
}

// Every part of a group's result is used by some run the tests above share,
// so that one a partial did not carry would change a report there.
TEST(PartialRunCoverageTest, EveryPartOfAGroupsResultIsUsed) {
  auto report = [](const std::string& dir) {
    absl::StatusOr<report::Report> r = AnalyzeRun(dir, AnalysisOptions());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  };
  report::Report groups = report(GroupsRunDirectory()), hostile = report(HostileRunDirectory());
  // notes, step_sources, steps, compute_s, warmup_skipped, waits, io, cores:
  EXPECT_GT(groups.overlap().compute_s(), 0);
  EXPECT_GT(groups.step_statistics().warmup_steps_skipped(), 0);
  EXPECT_GT(groups.overlap().outside_steps_io_s(), 0);
  EXPECT_GT(groups.step_statistics().loader_cores(), 0);
  EXPECT_GT(groups.step_statistics().loader_run_queue_cores(), 0);
  EXPECT_GT(groups.step_statistics().trainer_cores(), 0);
  EXPECT_EQ(groups.run().step_sources_size(), 2);
  // epochs, series, spans, CUDA copies in steps, Python profiles:
  EXPECT_EQ(groups.epochs().epoch_size(), 2);
  EXPECT_GT(groups.timeline().spans_size(), 0);
  EXPECT_GT(groups.timeline().series_size(), 0);
  ASSERT_GT(groups.cuda_copies_size(), 0);
  EXPECT_GT(groups.cuda_copies(0).in_steps_s(), 0);
  absl::StatusOr<report::Report> logs = AnalyzeRun(GroupsRunDirectory(), StepLogOptions());
  ASSERT_TRUE(logs.ok()) << logs.status();
  EXPECT_GT(logs->step_statistics().data_waits().inferred_steps(), 0);
  report::Report newer = report(NewerLayersDirectory());
  EXPECT_GT(newer.py_profiles_size(), 0);
  EXPECT_GT(newer.step_statistics().data_waits().compared_steps(), 0);
  EXPECT_GT(hostile.steps_size(), 0);
}

// The MPI driver deals a trainer and its loaders to one rank: a share
// holding part of a group cannot analyse it, and says so.
TEST(PartialRunSplitTest, AGroupSplitBetweenSharesIsRefused) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(GroupsRunDirectory());
  ASSERT_TRUE(files.ok());
  SharedRun run;
  ASSERT_TRUE(run.Prepare(*files, AnalysisOptions()).ok());
  std::vector<int> trainer_only;
  for (size_t i = 0; i < run.file_count(); ++i) {
    if (run.file(i).find("loader-") == std::string::npos) {
      trainer_only.push_back(static_cast<int>(i));
    }
  }
  run.Read(trainer_only, 1, nullptr);
  absl::Status analysed = run.AnalyzeGroups(run.end_ns(), AnalysisOptions(), 1);
  EXPECT_EQ(analysed.code(), absl::StatusCode::kFailedPrecondition) << analysed;
  EXPECT_NE(analysed.message().find("pid 100"), std::string::npos) << analysed;
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
