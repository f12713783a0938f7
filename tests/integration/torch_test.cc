// Ground truth for a real PyTorch job: examples/imagefolder/train.py (Debian's
// torch 1.13 on the CPU) trains on 1000 PNG images of 32x32 pixels through
// torchvision's ImageFolder, with 0, 2 or 4 DataLoader workers started by
// fork or spawn, under strace -f and iotap in the same run. For every image,
// the reads, bytes read and opens in `iotap stats --json` equal strace's and
// the bytes equal the image's size times the epochs; the trace holds exactly
// the processes the job started, none lost events, and each ended the way
// that kind of process ends.
//
// Processes, as Python 3.11 and torch 1.13 start them:
// - fork: the main process and one forked child per worker. Workers leave
//   through os._exit (multiprocessing's popen_fork), so their end is
//   REASON_UNDERSCORE_EXIT.
// - spawn: the main process, one new python per worker (vfork + exec, so no
//   forked copy is traced before the exec) and multiprocessing's resource
//   tracker, a python that the first semaphore of a spawn context starts and
//   that exits when the main process is gone. Spawned workers return from
//   spawn_main into sys.exit, so their end is REASON_EXIT.
// torch's DataLoader terminates a worker (SIGTERM, which torch's worker
// handler turns into _exit(0), indistinguishable by its end record) only if
// it fails to exit within 5 s of being told to; strace shows every signal
// delivered, so the tests check there is no SIGTERM (and no death by signal)
// in its log.

#include <filesystem>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kImages = 1000;
constexpr int kBatch = 50;  // 20 steps an epoch

struct Image {
  std::string path;
  uint64_t size;
};

std::string TrainScript() { return SourcePath("examples/imagefolder/train.py"); }

// The images of one format, made on first use (about a second) and kept for
// the rest of the test binary's run.
struct Dataset {
  std::string root;
  std::vector<Image> images;
};

const Dataset& ImagesOf(const std::string& format) {
  static TempDir dir;  // removed when the test binary exits
  static std::map<std::string, Dataset> made;
  auto [it, fresh] = made.try_emplace(format);
  Dataset& d = it->second;
  if (!fresh) return d;
  d.root = dir.Sub(format);
  RunResult r = RunProgram({Python(), TrainScript(), "--data", d.root, "--generate-only",
                            "--images", std::to_string(kImages), "--format", format});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  for (const auto& e : fs::recursive_directory_iterator(d.root)) {
    if (e.is_regular_file()) d.images.push_back({e.path().string(), e.file_size()});
  }
  return d;
}

struct Job {
  int workers;
  std::string start_method;  // "fork" or "spawn"; unused with 0 workers
  std::string format = "png";
  int epochs = 1;
  bool persistent = false;
  std::string transform = "light";
};

std::string JobName(const ::testing::TestParamInfo<Job>& info) {
  const Job& j = info.param;
  if (j.workers == 0) return "NoWorkers";
  return std::to_string(j.workers) + "Workers" + (j.start_method == "fork" ? "Fork" : "Spawn");
}

// Shown instead of the object's bytes where gtest prints a parameter.
void PrintTo(const Job& j, std::ostream* os) {
  if (j.workers == 0) {
    *os << "no workers";
  } else {
    *os << j.workers << (j.persistent ? " persistent " : " ") << j.start_method << " workers";
  }
  *os << ", " << j.epochs << " x " << kImages << " " << j.format << ", " << j.transform;
}

class TorchTest : public ::testing::TestWithParam<Job> {
 protected:
  // Runs the job under strace and iotap and checks everything the file
  // header promises.
  void RunAndCheck(const Job& job) {
    const Dataset& data = ImagesOf(job.format);
    ASSERT_EQ(data.images.size(), static_cast<size_t>(kImages));
    const std::string& root = data.root;
    const std::vector<Image>& images = data.images;
    std::vector<std::string> argv = {Python(),           TrainScript(),
                                     "--data",           root,
                                     "--num-workers",    std::to_string(job.workers),
                                     "--start-method",   job.start_method,
                                     "--epochs",         std::to_string(job.epochs),
                                     "--batch-size",     std::to_string(kBatch),
                                     "--transform-cost", job.transform};
    if (job.persistent) argv.push_back("--persistent-workers");
    std::string trace = dir_.Sub("trace");
    std::string log = dir_.Sub("strace.log");
    RunResult r = RunTracedUnderStrace(argv, trace, log);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const int steps = job.epochs * kImages / kBatch;
    EXPECT_NE(r.out.find(std::to_string(steps) + " steps, " + std::to_string(job.epochs * kImages) +
                         " images"),
              std::string::npos)
        << r.out;

    // Every image, exactly as strace saw it, read whole once per epoch.
    auto strace = ParseStrace(log);
    StatsSummary stats = StatsOf(trace);
    EXPECT_EQ(stats.dropped_events, 0u);
    for (const Image& image : images) {
      SCOPED_TRACE(image.path);
      const StraceFileCounts& truth = strace[image.path];
      const StatsFileCounts& seen = stats.files[image.path];
      EXPECT_EQ(seen.reads, truth.reads);
      EXPECT_EQ(seen.read_bytes, truth.read_bytes);
      EXPECT_EQ(seen.opens, truth.opens);
      EXPECT_EQ(seen.read_bytes, job.epochs * image.size);
      EXPECT_EQ(seen.opens, job.epochs);
      if (HasFailure()) break;  // one image's story is enough
    }

    std::string strace_text = ReadFile(log);
    EXPECT_EQ(strace_text.find("--- SIGTERM"), std::string::npos) << "a worker was terminated";
    EXPECT_EQ(strace_text.find("+++ killed by"), std::string::npos) << "a process was killed";

    CheckProcesses(job, root, stats.processes);
  }

  void CheckProcesses(const Job& job, const std::string& root, int stats_processes) {
    LoadedRun run = LoadRun(dir_.Sub("trace"));
    EXPECT_TRUE(run.issues.empty());
    const LoadedProcess* main = nullptr;
    std::vector<const LoadedProcess*> workers, trackers;
    for (const LoadedProcess& p : run.processes) {
      std::string argv;
      for (const std::string& a : p.header.argv()) argv += a + " ";
      if (argv.find("multiprocessing.resource_tracker") != std::string::npos) {
        trackers.push_back(&p);
      } else if (argv.find("spawn_main(") != std::string::npos ||
                 p.header.origin() == ProcessHeader::ORIGIN_FORK) {
        workers.push_back(&p);
      } else {
        EXPECT_EQ(main, nullptr) << "two main processes: " << argv;
        main = &p;
      }
    }
    ASSERT_NE(main, nullptr);
    const bool spawn = job.workers > 0 && job.start_method == "spawn";
    // Non-persistent workers are started afresh each epoch.
    const int started = job.workers * (job.persistent ? 1 : job.epochs);
    EXPECT_EQ(static_cast<int>(workers.size()), started);
    EXPECT_EQ(trackers.size(), spawn ? 1u : 0u);
    EXPECT_EQ(stats_processes, 1 + started + (spawn ? 1 : 0));
    EXPECT_EQ(run.processes.size(), static_cast<size_t>(stats_processes));

    auto image_opens = [&](const LoadedProcess& p) {
      int n = 0;
      for (const LoadedEvent& e : p.events) {
        if ((e.op == OP_OPEN || e.op == OP_OPENAT) && e.name.rfind(root + "/", 0) == 0) ++n;
      }
      return n;
    };
    auto expect_end = [](const LoadedProcess& p, EndOfTrace::Reason reason) {
      SCOPED_TRACE(p.trace_file);
      EXPECT_EQ(p.dropped, 0u);
      ASSERT_TRUE(p.end.has_value()) << "no end record";
      EXPECT_EQ(p.end->reason(), reason);
      EXPECT_EQ(p.end->exit_code(), 0);
      EXPECT_TRUE(p.end->exit_code_known());
      EXPECT_EQ(p.end->events_dropped(), 0u);
    };
    expect_end(*main, EndOfTrace::REASON_EXIT);
    for (const LoadedProcess* t : trackers) {
      expect_end(*t, EndOfTrace::REASON_EXIT);
      EXPECT_EQ(t->header.ppid(), main->header.pid());
      EXPECT_EQ(image_opens(*t), 0);
    }
    // The DataLoader hands batches to its workers in turn, so each worker
    // reads the same number of whole batches.
    EXPECT_EQ(image_opens(*main), job.workers == 0 ? job.epochs * kImages : 0);
    for (const LoadedProcess* w : workers) {
      expect_end(*w, spawn ? EndOfTrace::REASON_EXIT : EndOfTrace::REASON_UNDERSCORE_EXIT);
      EXPECT_EQ(w->header.ppid(), main->header.pid());
      EXPECT_EQ(image_opens(*w), job.epochs * kImages / started) << w->trace_file;
    }
  }

  TempDir dir_;
};

TEST_P(TorchTest, ImageFolderReadsMatchStrace) { RunAndCheck(GetParam()); }

INSTANTIATE_TEST_SUITE_P(DataLoader, TorchTest,
                         ::testing::Values(Job{0, "fork"}, Job{2, "fork"}, Job{4, "fork"},
                                           Job{2, "spawn"}, Job{4, "spawn"}),
                         JobName);

// JPEG decoding, the heavy transforms and two epochs with workers kept
// between them: every image is read whole twice, by the same two workers.
TEST_F(TorchTest, PersistentWorkersTwoEpochsJpeg) {
  RunAndCheck(Job{2, "fork", "jpeg", 2, /*persistent=*/true, "heavy"});
}

}  // namespace
}  // namespace iotap::testing
