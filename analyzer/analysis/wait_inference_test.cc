// Inferred data waits (wait_inference.cc, step_waits.cc) on small synthetic
// runs whose waits are known by construction: a trainer blocked on its
// loaders' queue, on a semaphore while a thread of it receives batches or
// its pipeline threads read, a trainer loading its own batches, the gaps of
// a log of compute-only steps, and the comparison with measured waits.

#include "analyzer/analysis/wait_inference.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;  // 1700000000 s
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

int64_t At(double ms) { return kT0 + static_cast<int64_t>(ms * 1e6); }

class WaitInferenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::TempDirectory() + "/" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/run");
  }

  // A JSON-lines log of steps with only start and end, [bounds[k], ends[k]).
  std::string StepLog(const std::vector<std::pair<double, double>>& steps) {
    std::string path = dir_ + "/steps.jsonl";
    std::ofstream out(path);
    for (size_t k = 0; k < steps.size(); ++k) {
      out << "{\"step\": " << k << ", \"start\": 1700000000." << Decimals(steps[k].first)
          << ", \"end\": 1700000000." << Decimals(steps[k].second) << "}\n";
    }
    return path;
  }

  report::Report Analyze(const std::vector<std::string>& step_logs = {}) {
    AnalysisOptions options;
    options.step_logs = step_logs;
    absl::StatusOr<report::Report> r = AnalyzeRun(dir_ + "/run", options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  }

  // "000010000" for 10 ms: the decimals of seconds past 1700000000.
  static std::string Decimals(double ms) {
    char buf[16];
    snprintf(buf, sizeof(buf), "%09lld", static_cast<long long>(ms * 1e6));
    return buf;
  }

  std::string dir_;
};

// Four steps [10, 110), [110, 200), [200, 320), [320, 380) ms. The trainer
// (pid 100, waits recorded from 20 us) has two loaders that write its result
// queue, pipe:[900]; each reads its own index queue. On the trainer's main
// thread:
//   step 0: poll of pipe:[900] [10, 40), its read [40, 40.1), the
//           descriptors' socket [40.5, 41): one reception [10, 41);
//   step 1: poll [110, 120), read [120, 121);
//           a poll of pipe:[555] (no loader's) [150, 160);
//   step 2: a read of the queue that did not block [200, 200.1);
//           a semaphore wait [230, 240) while nothing else happened;
//           a semaphore wait [261, 270) while thread 7 received from the
//           queue [262, 268);
//   step 3: poll [320, 330), read [330, 331).
// `measured`: the trainer also marks the steps, with data waits of 30, 10,
// 10 and 10 ms at their starts.
void WriteLoaderRun(const std::string& dir, bool measured) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.header().set_wait_threshold_ns(20 * kUs);
  uint32_t queue = trainer.Name("pipe:[900]", InternedString::KIND_PIPE);
  uint32_t other = trainer.Name("pipe:[555]", InternedString::KIND_PIPE);
  uint32_t socket = trainer.Name("socket:[777]", InternedString::KIND_SOCKET);
  auto poll = [&](double from, double to, uint32_t file, uint32_t tid = 0) {
    trainer.Add({.op = OP_POLL, .start_ns = At(from), .end_ns = At(to), .file = file,
                 .requested = 1, .result = 1, .tid = tid});
  };
  auto read = [&](double from, double to, uint32_t file, uint32_t tid = 0) {
    trainer.Read(OP_READ, At(from), At(to), file, -1, 4, tid);
  };
  poll(10, 40, queue);
  read(40, 40.1, queue);
  read(40.5, 41, socket);
  poll(110, 120, queue);
  read(120, 121, queue);
  poll(150, 160, other);
  read(200, 200.1, queue);
  trainer.Add({.op = OP_SEM_WAIT, .start_ns = At(230), .end_ns = At(240)});
  trainer.Add({.op = OP_SEM_WAIT, .start_ns = At(261), .end_ns = At(270)});
  poll(262, 267, queue, 7);
  read(267, 268, queue, 7);
  poll(320, 330, queue);
  read(330, 331, queue);
  if (measured) {
    const double bounds[] = {10, 110, 200, 320, 380};
    for (int s = 0; s < 4; ++s) {
      trainer.Marker(OP_STEP_BEGIN, At(bounds[s]), At(bounds[s]), s);
      trainer.Marker(OP_DATA_WAIT, At(bounds[s]), At(bounds[s] + (s == 0 ? 30 : 10)), s);
      trainer.Marker(OP_STEP_END, At(bounds[s + 1]), At(bounds[s + 1]), s);
    }
  }
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(400));
  trainer.WriteTo(dir + "/trainer.iotap");
  for (int pid : {101, 102}) {
    SyntheticProcess p(pid, 100, "/usr/bin/python3", {"python3", "train.py"}, At(1),
                       ProcessHeader::ORIGIN_FORK);
    p.header().set_wait_threshold_ns(20 * kUs);
    uint32_t mine = p.Name("pipe:[90" + std::to_string(pid - 100) + "]", InternedString::KIND_PIPE);
    p.Read(OP_READ, At(5), At(6), mine, -1, 8);
    p.Read(OP_WRITE, At(30), At(30.5), p.Name("pipe:[900]", InternedString::KIND_PIPE), -1, 400);
    p.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, At(390));
    p.WriteTo(dir + "/loader-" + std::to_string(pid) + ".iotap");
  }
}

TEST_F(WaitInferenceTest, TrainerBlockedOnItsLoadersQueueIsWaitingForData) {
  WriteLoaderRun(dir_ + "/run", /*measured=*/false);
  report::Report r = Analyze({StepLog({{10, 110}, {110, 200}, {200, 320}, {320, 380}})});
  ASSERT_EQ(r.steps_size(), 4);
  const double want[] = {0.031, 0.011, 0.0091, 0.011};
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(r.steps(k).data_wait_inferred());
    EXPECT_NEAR(r.steps(k).data_wait_s(), want[k], 1e-9);
    EXPECT_EQ(r.steps(k).inferred_wait_s(), -1);
  }
  const report::StepStatistics& st = r.step_statistics();
  EXPECT_NEAR(st.data_stall_share(), (0.011 + 0.0091 + 0.011) / 0.270, 1e-9);
  const report::DataWaits& w = st.data_waits();
  EXPECT_EQ(w.inferred_steps(), 3);
  EXPECT_EQ(w.measured_steps(), 0);
  EXPECT_EQ(w.compared_steps(), 0);
  ASSERT_EQ(w.inferred_by_size(), 2);
  EXPECT_EQ(w.inferred_by(0).how(), "the trainer blocked on its loaders' queues");
  EXPECT_NEAR(w.inferred_by(0).wait_s(), 0.011 + 0.0001 + 0.011, 1e-9);
  EXPECT_EQ(w.inferred_by(1).how(),
            "the trainer blocked while a thread of it received from the loaders");
  EXPECT_NEAR(w.inferred_by(1).wait_s(), 0.009, 1e-9);
  EXPECT_EQ(st.between_steps().gaps(), 0);
  int inferred_spans = 0;
  for (const report::Span& s : r.timeline().spans()) inferred_spans += s.kind() == "inferred_wait";
  EXPECT_EQ(inferred_spans, 5);
}

TEST_F(WaitInferenceTest, MeasuredWaitsWinAndAreComparedWithInferredOnes) {
  WriteLoaderRun(dir_ + "/run", /*measured=*/true);
  report::Report r = Analyze();
  ASSERT_EQ(r.steps_size(), 4);
  const double inferred[] = {0.031, 0.011, 0.0091, 0.011};
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE(k);
    EXPECT_FALSE(r.steps(k).data_wait_inferred());
    EXPECT_NEAR(r.steps(k).data_wait_s(), k == 0 ? 0.030 : 0.010, 1e-9);
    EXPECT_NEAR(r.steps(k).inferred_wait_s(), inferred[k], 1e-9);
  }
  const report::DataWaits& w = r.step_statistics().data_waits();
  EXPECT_EQ(w.measured_steps(), 3);
  ASSERT_EQ(w.measured_by_size(), 1);
  EXPECT_EQ(w.measured_by(0), "iotap markers");
  EXPECT_EQ(w.inferred_steps(), 0);
  EXPECT_EQ(w.compared_steps(), 3);
  EXPECT_NEAR(w.measured_wait_s(), 0.030, 1e-9);
  EXPECT_NEAR(w.inferred_wait_s(), 0.0311, 1e-9);
  EXPECT_NEAR(w.measured_stall_share(), 0.030 / 0.270, 1e-9);
  EXPECT_NEAR(w.inferred_stall_share(), 0.0311 / 0.270, 1e-9);
  // Both say "waiting" during [110, 120), [200, 200.1) and [320, 330).
  EXPECT_NEAR(w.agreement_share(), 0.0201 / 0.030, 1e-9);
}

TEST_F(WaitInferenceTest, WithoutRecordedWaitsTheStallOfALoaderRunStaysUnknown) {
  WriteLoaderRun(dir_ + "/run", /*measured=*/false);
  for (const auto& e : std::filesystem::directory_iterator(dir_ + "/run")) {
    std::filesystem::remove(e.path());
  }
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(400));
  trainer.WriteTo(dir_ + "/run/trainer.iotap");
  SyntheticProcess loader(101, 100, "/usr/bin/python3", {"python3", "train.py"}, At(1),
                          ProcessHeader::ORIGIN_FORK);
  loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, At(390));
  loader.WriteTo(dir_ + "/run/loader.iotap");
  report::Report r = Analyze({StepLog({{10, 110}, {110, 200}})});
  ASSERT_EQ(r.steps_size(), 2);
  EXPECT_EQ(r.steps(1).data_wait_s(), -1);
  EXPECT_EQ(r.step_statistics().data_stall_share(), -1);
  EXPECT_EQ(r.step_statistics().data_waits().inferred_steps(), 0);
}

// A trainer without loaders (num_workers=0), no waits recorded: in each of
// three steps [0, 40), [40, 80), [80, 120) ms its main thread opens and
// reads data at [+1, +5) and [+10, +12): it loads until +12.
TEST_F(WaitInferenceTest, TrainerWithoutLoadersWaitsWhileItLoadsItsBatch) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  uint32_t f = trainer.Path("/data/images/a.png");
  for (double s : {0.0, 40.0, 80.0}) {
    trainer.Add({.op = OP_OPEN, .start_ns = At(s + 1), .end_ns = At(s + 2), .file = f});
    trainer.Read(OP_READ, At(s + 2), At(s + 5), f, 0, 100);
    trainer.Read(OP_READ, At(s + 10), At(s + 12), f, 100, 100);
  }
  // A background thread's read is not the trainer loading.
  trainer.Read(OP_READ, At(100), At(118), f, 0, 100, /*tid=*/7);
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(130));
  trainer.WriteTo(dir_ + "/run/trainer.iotap");
  report::Report r = Analyze({StepLog({{0, 40}, {40, 80}, {80, 120}})});
  ASSERT_EQ(r.steps_size(), 3);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(r.steps(k).data_wait_inferred());
    EXPECT_NEAR(r.steps(k).data_wait_s(), 0.012, 1e-9);
  }
  // Step 2's fetch: the trainer's reads [81, 85) and [90, 92) and the
  // background read from 100 inside the wait: 6 + 0 ms.
  EXPECT_NEAR(r.steps(2).fetch_s(), 0.006, 1e-9);
  const report::DataWaits& w = r.step_statistics().data_waits();
  ASSERT_EQ(w.inferred_by_size(), 1);
  EXPECT_EQ(w.inferred_by(0).how(), "the trainer loading its batch itself");
  EXPECT_NEAR(w.inferred_by(0).wait_s(), 0.024, 1e-9);
  EXPECT_NEAR(r.step_statistics().data_stall_share(), 0.3, 1e-9);
}

// A log of compute-only steps [20, 50), [70, 100), [120, 150) ms: the
// trainer (no loaders) reads its batches in the gaps, [55, 65) and
// [105, 115). The gaps count as waiting.
TEST_F(WaitInferenceTest, GapsBetweenLoggedStepsAreAnalysedAsWaits) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  uint32_t f = trainer.Path("/data/batches.bin");
  trainer.Read(OP_PREAD, At(5), At(15), f, 0, 4096);
  trainer.Read(OP_PREAD, At(55), At(65), f, 4096, 4096);
  trainer.Read(OP_PREAD, At(105), At(115), f, 8192, 4096);
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(160));
  trainer.WriteTo(dir_ + "/run/trainer.iotap");
  report::Report r = Analyze({StepLog({{20, 50}, {70, 100}, {120, 150}})});
  ASSERT_EQ(r.steps_size(), 3);
  EXPECT_EQ(r.steps(0).gap_before_s(), 0);
  for (int k = 1; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_NEAR(r.steps(k).gap_before_s(), 0.020, 1e-9);
    EXPECT_NEAR(r.steps(k).gap_fetch_s(), 0.010, 1e-9);
    EXPECT_EQ(r.steps(k).data_wait_s(), 0);
  }
  const report::StepStatistics& st = r.step_statistics();
  EXPECT_EQ(st.between_steps().gaps(), 2);
  EXPECT_NEAR(st.between_steps().total_s(), 0.040, 1e-9);
  EXPECT_NEAR(st.between_steps().share(), 0.4, 1e-9);
  EXPECT_NEAR(st.between_steps().fetch_share(), 0.5, 1e-9);
  EXPECT_NEAR(st.data_stall_share(), 0.4, 1e-9);
  EXPECT_NEAR(st.total_data_wait_s(), 0.040, 1e-9);
  EXPECT_NEAR(st.fetch_share(), 0.5, 1e-9);
  int gaps = 0;
  for (const report::Span& s : r.timeline().spans()) gaps += s.kind() == "between_steps";
  EXPECT_EQ(gaps, 2);
}

// A thread pipeline (no loader processes): the main thread waits on a
// semaphore [s + 0, s + 10) of each step [0, 50), [50, 100), [100, 150)
// while thread 9 reads [s + 2, s + 6); a condition wait [s + 30, s + 35)
// without any read is not a wait for data.
TEST_F(WaitInferenceTest, ThreadPipelineWaitsAreTheMainThreadBlockedWhileThreadsRead) {
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.header().set_wait_threshold_ns(20 * kUs);
  uint32_t f = trainer.Path("/data/train.tfrecord");
  for (double s : {0.0, 50.0, 100.0}) {
    trainer.Add({.op = OP_SEM_WAIT, .start_ns = At(s), .end_ns = At(s + 10)});
    trainer.Read(OP_READ, At(s + 2), At(s + 6), f, static_cast<int64_t>(s) * 100, 100, 9);
    trainer.Add({.op = OP_COND_WAIT, .start_ns = At(s + 30), .end_ns = At(s + 35)});
  }
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(160));
  trainer.WriteTo(dir_ + "/run/trainer.iotap");
  report::Report r = Analyze({StepLog({{0, 50}, {50, 100}, {100, 150}})});
  ASSERT_EQ(r.steps_size(), 3);
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_NEAR(r.steps(k).data_wait_s(), 0.010, 1e-9);
    EXPECT_NEAR(r.steps(k).fetch_s(), 0.004, 1e-9);
  }
  const report::DataWaits& w = r.step_statistics().data_waits();
  ASSERT_EQ(w.inferred_by_size(), 1);
  EXPECT_EQ(w.inferred_by(0).how(), "the trainer blocked while its threads read the data");
}

// The same through the report: the loader run above with a trainer of its
// own, which maps the step-0 batch's storage after the batch's reception,
// [41.2, 41.3) ms, takes a page fault in it during the step, and unmaps it
// at the start of step 1, [108, 109), before that step's reception (the loop
// dropping the batch): step 0's wait runs to 41.3 ms, not to the fault, and
// step 1 waits 1 ms more than its reception.
TEST_F(WaitInferenceTest, TheTrainerMappingAndDroppingBatchesWaitsForThem) {
  WriteLoaderRun(dir_ + "/run", /*measured=*/false);
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.header().set_wait_threshold_ns(20 * kUs);
  uint32_t queue = trainer.Name("pipe:[900]", InternedString::KIND_PIPE);
  uint32_t socket = trainer.Name("socket:[777]", InternedString::KIND_SOCKET);
  uint32_t storage =
      trainer.Name("/dev/shm/torch_101_1_0 (deleted)", InternedString::KIND_PATH);
  trainer.Add({.op = OP_POLL, .start_ns = At(10), .end_ns = At(40), .file = queue,
               .requested = 1, .result = 1});
  trainer.Read(OP_READ, At(40), At(40.1), queue, -1, 4);
  trainer.Read(OP_READ, At(40.5), At(41), socket, -1, 4);
  trainer.Add({.op = OP_MMAP, .start_ns = At(41.2), .end_ns = At(41.3), .file = storage,
               .requested = 983040});
  trainer.Add({.op = OP_MAPPED_READ, .start_ns = At(45), .end_ns = At(45.01),
               .file = storage, .requested = 4096});
  trainer.Add({.op = OP_MUNMAP, .start_ns = At(108), .end_ns = At(109), .file = storage,
               .requested = 983040});
  trainer.Add({.op = OP_POLL, .start_ns = At(110), .end_ns = At(120), .file = queue,
               .requested = 1, .result = 1});
  trainer.Read(OP_READ, At(120), At(121), queue, -1, 4);
  trainer.End(EndOfTrace::REASON_EXIT, 0, At(400));
  trainer.WriteTo(dir_ + "/run/trainer.iotap");
  report::Report r = Analyze({StepLog({{10, 108}, {108, 200}})});
  ASSERT_EQ(r.steps_size(), 2);
  EXPECT_NEAR(r.steps(0).data_wait_s(), 0.0313, 1e-9);
  EXPECT_NEAR(r.steps(1).data_wait_s(), 0.001 + 0.011, 1e-9);
}

// A trainer's trace for WaitCollector: pid 10, waits recorded from 20 us.
ProcessTrace Trainer() {
  ProcessTrace process("trainer.iotap");
  ProcessHeader header;
  header.set_pid(10);
  header.set_wait_threshold_ns(20'000);
  process.SetHeader(header);
  return process;
}

// An event of `op` on thread `tid`, the rest zero.
Event Ev(Op op, uint32_t tid) {
  Event e;
  e.op = op;
  e.tid = tid;
  return e;
}

TEST(WaitCollectorTest, ReceptionsChainWhileTheyFollowWithinAMillisecond) {
  ProcessTrace process = Trainer();
  WaitCollector c(/*trainer=*/true, kT0, 1000);
  c.OnProcess(process);
  uint32_t queue = c.Channel("pipe:[1]");
  EXPECT_EQ(c.Channel("pipe:[1]"), queue);
  uint32_t sock = c.Channel("socket:[2]");
  c.OnWait(Ev(OP_POLL, 10), 0, 100, queue);
  c.OnChannel(Ev(OP_READ, 10), 100, 110, queue, false);
  c.OnChannel(Ev(OP_WRITE, 10), 900, 910, sock, true);   // 0.79 ms later: chained
  c.OnChannel(Ev(OP_READ, 10), 3'000'000, 3'000'010, queue, false);  // a new one
  c.OnChannel(Ev(OP_WRITE, 11), 50, 60, queue, true);   // writes begin none
  c.OnWait(Ev(OP_SEM_WAIT, 10), 5'000'000, 6'000'000, WaitCollector::kNoChannel);
  c.OnWait(Ev(OP_COND_WAIT, 11), 5'000'000, 6'000'000, WaitCollector::kNoChannel);
  WaitEvidence ev = c.Finish();
  EXPECT_EQ(ev.threshold_ns, 20'000u);
  EXPECT_EQ(ev.channels, (std::vector<std::string>{"pipe:[1]", "socket:[2]"}));
  ASSERT_EQ(ev.receptions.size(), 2u);
  EXPECT_EQ(ev.receptions[0].start_ns, 0);
  EXPECT_EQ(ev.receptions[0].end_ns, 910);
  EXPECT_EQ(ev.receptions[0].channel, queue);
  EXPECT_TRUE(ev.receptions[0].main_thread);
  EXPECT_EQ(ev.receptions[1].start_ns, 3'000'000);
  ASSERT_EQ(ev.sync_waits.size(), 1u);
  EXPECT_EQ(ev.sync_waits[0].start_ns, 5'000'000);
}

// A batch read from the loaders' queue, then its shared-memory storages
// fetched over a fresh socket each (PyTorch's file_descriptor strategy): the
// wait runs on to the last of them, the gaps between included.
TEST(WaitCollectorTest, FreshSocketsSoonAfterABatchContinueItsWait) {
  ProcessTrace process = Trainer();
  WaitCollector c(/*trainer=*/true, kT0, 1000);
  c.OnProcess(process);
  uint32_t queue = c.Channel("pipe:[1]");
  uint32_t storage = c.Channel("socket:[5]");
  uint32_t late = c.Channel("socket:[6]");
  uint32_t ddp = c.Channel("socket:[7]");
  const Event read = Ev(OP_READ, 10);
  c.OnChannel(read, 1 * kMs, 2 * kMs, ddp, false);                // used before any batch
  c.OnChannel(read, 10 * kMs, 11 * kMs, queue, false);            // the batch
  c.OnChannel(read, 60 * kMs, 70 * kMs, storage, false);          // 49 ms later: continues
  c.OnChannel(read, 80 * kMs, 81 * kMs, storage, false);          // not fresh: no
  c.OnChannel(read, 82 * kMs, 83 * kMs, ddp, false);              // not fresh: no
  c.OnChannel(read, 300 * kMs, 301 * kMs, late, false);           // 217 ms later: no
  WaitEvidence ev = c.Finish();
  ASSERT_EQ(ev.receptions.size(), 5u);
  EXPECT_FALSE(ev.receptions[1].continues);
  EXPECT_TRUE(ev.receptions[2].continues);
  EXPECT_EQ(ev.receptions[2].gap_start_ns, 11 * kMs);
  EXPECT_FALSE(ev.receptions[3].continues);  // 80..83 chained: socket:[5] again, then ddp
  EXPECT_FALSE(ev.receptions[4].continues);
  absl::flat_hash_set<std::string> loader_channels = {"pipe:[1]"};
  WaitInput in{&ev, &loader_channels, /*has_loaders=*/true, nullptr, nullptr};
  std::vector<TimeWindow> merged = MergeWindows(InferWaitWindows(in, {}));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].start_ns, 10 * kMs);
  EXPECT_EQ(merged[0].end_ns, 70 * kMs);
}

// The trainer's main thread maps a batch's shared-memory storages after
// receiving it, and unmaps the previous batch's as the loop drops it: work
// that follows the batch's reception within a millisecond is part of its
// wait; an unmapping far from any reception (a batch received earlier, out
// of order) is a wait of its own, but only for a trainer with loaders. Other
// threads' calls, page faults in the mappings and calls that only close
// count for nothing alone.
TEST(WaitCollectorTest, SharedMemoryWorkAfterABatchIsPartOfItsWait) {
  ProcessTrace process = Trainer();
  WaitCollector c(/*trainer=*/true, kT0, 1000);
  c.OnProcess(process);
  uint32_t queue = c.Channel("pipe:[1]");
  c.OnChannel(Ev(OP_READ, 10), 10 * kMs, 11 * kMs, queue, false);  // the batch
  c.OnSharedMemory(Ev(OP_FSTAT, 10), 11'200 * kUs, 11'210 * kUs);
  c.OnSharedMemory(Ev(OP_MMAP, 10), 11'300 * kUs, 11'320 * kUs);
  c.OnSharedMemory(Ev(OP_CLOSE, 10), 11'400 * kUs, 11'410 * kUs);
  c.OnSharedMemory(Ev(OP_MUNMAP, 10), 11'900 * kUs, 12 * kMs);       // 0.49 ms on
  c.OnSharedMemory(Ev(OP_MAPPED_READ, 10), 12'500 * kUs, 12'600 * kUs);  // a fault
  c.OnSharedMemory(Ev(OP_MUNMAP, 11), 13 * kMs, 13'100 * kUs);       // another thread
  c.OnSharedMemory(Ev(OP_MUNMAP, 10), 50 * kMs, 51 * kMs);           // alone
  c.OnSharedMemory(Ev(OP_CLOSE, 10), 70 * kMs, 70'100 * kUs);        // alone, no unmap
  WaitEvidence ev = c.Finish();
  ASSERT_EQ(ev.shared_memory.size(), 3u);
  EXPECT_EQ(ev.shared_memory[0].start_ns, 11'200 * kUs);
  EXPECT_EQ(ev.shared_memory[0].end_ns, 12 * kMs);
  EXPECT_TRUE(ev.shared_memory[0].unmaps);
  EXPECT_TRUE(ev.shared_memory[1].unmaps);
  EXPECT_FALSE(ev.shared_memory[2].unmaps);
  absl::flat_hash_set<std::string> loader_channels = {"pipe:[1]"};
  WaitInput with{&ev, &loader_channels, /*has_loaders=*/true, nullptr, nullptr};
  std::vector<InferredWindow> windows = InferWaitWindows(with, {});
  std::vector<TimeWindow> merged = MergeWindows(windows);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].start_ns, 10 * kMs);
  EXPECT_EQ(merged[0].end_ns, 12 * kMs);
  EXPECT_EQ(merged[1].start_ns, 50 * kMs);
  EXPECT_EQ(merged[1].end_ns, 51 * kMs);
  for (const InferredWindow& w : windows) EXPECT_EQ(w.kind, WaitKind::kLoaderQueue);
  // Without loaders an unmapping alone is no wait; the batch still extends.
  WaitInput without{&ev, &loader_channels, /*has_loaders=*/false, nullptr, nullptr};
  merged = MergeWindows(InferWaitWindows(without, {}));
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(merged[0].end_ns, 12 * kMs);
  // A loader's process (not a trainer) keeps none.
  WaitCollector loader(/*trainer=*/false, kT0, 1000);
  loader.OnProcess(process);
  loader.OnSharedMemory(Ev(OP_MUNMAP, 10), 50 * kMs, 51 * kMs);
  EXPECT_TRUE(loader.Finish().shared_memory.empty());
}

TEST(WaitInferenceHelpersTest, SharedMemoryIsWhatLivesUnderDevShm) {
  EXPECT_TRUE(IsSharedMemory("/dev/shm/torch_101_3731938294_4 (deleted)"));
  EXPECT_TRUE(IsSharedMemory("/dev/shm/psm_5f2a"));
  EXPECT_FALSE(IsSharedMemory("/dev/shmem/x"));
  EXPECT_FALSE(IsSharedMemory("/tmp/dev/shm/x"));
  EXPECT_FALSE(IsSharedMemory("/dev/shm"));
}

TEST(WaitInferenceHelpersTest, WaitsInsideClipsTheUnionToAStep) {
  std::vector<InferredWindow> windows = {{10, 20, WaitKind::kLoaderQueue},
                                         {15, 30, WaitKind::kLoaderThread},
                                         {40, 50, WaitKind::kLoaderQueue}};
  std::vector<TimeWindow> merged = MergeWindows(windows);
  ASSERT_EQ(merged.size(), 2u);
  std::vector<TimeWindow> inside = WaitsInside(merged, 25, 45);
  ASSERT_EQ(inside.size(), 2u);
  EXPECT_EQ(inside[0].start_ns, 25);
  EXPECT_EQ(inside[0].end_ns, 30);
  EXPECT_EQ(inside[1].start_ns, 40);
  EXPECT_EQ(inside[1].end_ns, 45);
  EXPECT_TRUE(WaitsInside(merged, 30, 40).empty());
}

}  // namespace
}  // namespace iotap::analyzer
