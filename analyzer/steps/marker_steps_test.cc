#include "analyzer/steps/marker_steps.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

// Wall clock at CLOCK_MONOTONIC 0 for the first snapshot; the second,
// 10 s later, finds the wall clock 500 ns further ahead (NTP slewing).
constexpr int64_t kWall = 1700000000000000000;
constexpr int64_t kLater = 10000000000;

ProcessTrace Process(const std::string& path, int pid, int rank) {
  ProcessTrace p(path);
  ProcessHeader h;
  h.set_pid(pid);
  h.set_rank(rank);
  p.SetHeader(h);
  ClockSnapshot early, late;
  early.set_monotonic_ns(0);
  early.set_realtime_ns(kWall);
  late.set_monotonic_ns(kLater);
  late.set_realtime_ns(kWall + kLater + 500);
  p.AddClock(early);
  p.AddClock(late);
  StringTable strings;
  InternedString* s = strings.add_entry();
  s->set_id(1);
  s->set_value("epoch");
  s->set_kind(InternedString::KIND_MARK);
  p.AddStrings(strings);
  return p;
}

Event Marker(Op op, int64_t start, int64_t end, uint64_t step, uint32_t file = 0) {
  Event e;
  e.op = op;
  e.start_ns = start;
  e.end_ns = end;
  e.aux = step;
  e.file = file;
  return e;
}

EventBatch Batch(std::vector<Event> events) {
  EventBatch b;
  b.events = std::move(events);
  return b;
}

// Feeds one file's events (in batches) and returns the collector's logs.
std::vector<StepLog> Collect(const ProcessTrace& p, const std::vector<EventBatch>& batches) {
  MarkerCollector collector;
  collector.OnProcess(p);
  for (const EventBatch& b : batches) collector.OnEvents(p, b);
  collector.OnFileEnd(p);
  return collector.TakeLogs();
}

TEST(MarkerCollectorTest, StepsFromOptimizerSteps) {
  ProcessTrace p = Process("run/host.42.iotap", 42, 3);
  std::vector<StepLog> logs = Collect(
      p, {Batch({Marker(OP_MARK, 500, 500, 0, 1), Marker(OP_DATA_WAIT, 1000, 1500, 0),
                 Marker(OP_READ, 1100, 1200, 0), Marker(OP_OPTIMIZER_STEP, 2000, 2100, 0)}),
          // A second thread's chunk may arrive later with earlier events.
          Batch({Marker(OP_DATA_WAIT, 2200, 2600, 1), Marker(OP_OPTIMIZER_STEP, 3000, 3050, 1),
                 // A second optimizer on the same batch: the same step.
                 Marker(OP_OPTIMIZER_STEP, 3060, 3100, 1),
                 // The loop ended before step 2's optimizer step.
                 Marker(OP_DATA_WAIT, 3200, 3300, 2)}),
          Batch({Marker(OP_DATA_WAIT, kLater + 100, kLater + 300, 2),
                 Marker(OP_OPTIMIZER_STEP, kLater + 400, kLater + 450, 2)})});
  ASSERT_EQ(logs.size(), 1u);
  const StepLog& log = logs[0];
  EXPECT_EQ(log.source, StepSource::kMarkers);
  EXPECT_EQ(log.path, "markers of pid 42 in run/host.42.iotap");
  EXPECT_TRUE(log.errors.empty());
  ASSERT_EQ(log.spans.size(), 3u);
  const StepSpan& s0 = log.spans[0];
  EXPECT_EQ(s0.step, 0);
  EXPECT_EQ(s0.rank, 3);
  EXPECT_EQ(s0.pid, 42);
  EXPECT_EQ(s0.start_ns, kWall + 1000);  // its first data wait
  EXPECT_EQ(s0.end_ns, kWall + 2100);
  EXPECT_TRUE(s0.has_data_wait);
  ASSERT_EQ(s0.data_waits.size(), 1u);
  EXPECT_EQ(s0.data_waits[0].start_ns, kWall + 1000);
  EXPECT_EQ(s0.data_waits[0].end_ns, kWall + 1500);
  const StepSpan& s1 = log.spans[1];
  EXPECT_EQ(s1.step, 1);
  EXPECT_EQ(s1.start_ns, kWall + 2100);
  EXPECT_EQ(s1.end_ns, kWall + 3100);
  ASSERT_EQ(s1.data_waits.size(), 1u);
  EXPECT_EQ(s1.data_waits[0].start_ns, kWall + 2200);
  // Step 2 starts near the first snapshot and ends near the second, which
  // places its end 500 ns later; its waits move with its start.
  const StepSpan& s2 = log.spans[2];
  EXPECT_EQ(s2.step, 2);
  EXPECT_EQ(s2.start_ns, kWall + 3100);
  EXPECT_EQ(s2.end_ns, kWall + kLater + 950);
  ASSERT_EQ(s2.data_waits.size(), 2u);
  EXPECT_EQ(s2.data_waits[0].start_ns, kWall + 3200);
  EXPECT_EQ(s2.data_waits[1].start_ns, kWall + kLater + 100);
  EXPECT_EQ(s2.data_wait_ns(), 300);
  ASSERT_EQ(log.marks.size(), 1u);
  EXPECT_EQ(log.marks[0].name, "epoch");
  EXPECT_EQ(log.marks[0].time_ns, kWall + 500);
  EXPECT_EQ(log.marks[0].rank, 3);
  EXPECT_THAT(log.notes, Contains(HasSubstr("steps from the optimizer steps")));
}

TEST(MarkerCollectorTest, ExplicitMarkersWin) {
  ProcessTrace p = Process("run/host.7.iotap", 7, -1);
  std::vector<StepLog> logs = Collect(
      p, {Batch({Marker(OP_STEP_BEGIN, 100, 100, 5), Marker(OP_STEP_END, 900, 900, 5),
                 Marker(OP_DATA_WAIT, 950, 1100, 0), Marker(OP_OPTIMIZER_STEP, 1200, 1300, 0),
                 Marker(OP_STEP_BEGIN, 1000, 1000, 6), Marker(OP_STEP_END, 1900, 1900, 6),
                 Marker(OP_STEP_END, 2000, 2000, 9), Marker(OP_STEP_BEGIN, 2100, 2100, 7),
                 Marker(OP_DATA_WAIT, kLater + 5, kLater + 10, 0)})});
  ASSERT_EQ(logs.size(), 1u);
  const StepLog& log = logs[0];
  ASSERT_EQ(log.spans.size(), 2u);
  EXPECT_EQ(log.spans[0].step, 5);
  EXPECT_EQ(log.spans[0].start_ns, kWall + 100);
  EXPECT_EQ(log.spans[0].end_ns, kWall + 900);
  EXPECT_TRUE(log.spans[0].has_data_wait);
  EXPECT_TRUE(log.spans[0].data_waits.empty());
  EXPECT_EQ(log.spans[1].step, 6);
  EXPECT_EQ(log.spans[1].rank, -1);
  ASSERT_EQ(log.spans[1].data_waits.size(), 1u);  // clipped to the step
  EXPECT_EQ(log.spans[1].data_waits[0].start_ns, kWall + 1000);
  EXPECT_EQ(log.spans[1].data_waits[0].end_ns, kWall + 1100);
  EXPECT_THAT(log.notes, Contains(HasSubstr("iotap_step_begin/iotap_step_end")));
  EXPECT_THAT(log.notes, Contains("1 steps began but never ended (the process ended first?) and "
                                  "are left out, the first step 7"));
  EXPECT_THAT(log.notes, Contains("1 end markers without a begin are left out"));
  EXPECT_THAT(log.notes, Contains("1 of 2 data waits lie outside every step (after the last "
                                  "one, or between explicit steps)"));
}

TEST(MarkerCollectorTest, OneLogPerFileWithMarkers) {
  MarkerCollector collector;
  ProcessTrace a = Process("run/a.iotap", 10, 0);
  ProcessTrace b = Process("run/b.iotap", 11, 0);  // a DataLoader worker: no markers
  ProcessTrace c = Process("run/c.iotap", 12, 1);
  for (ProcessTrace* p : {&a, &b, &c}) {
    collector.OnProcess(*p);
    if (p != &b) {
      collector.OnEvents(*p,
                         Batch({Marker(OP_STEP_BEGIN, 10, 10, 1), Marker(OP_STEP_END, 20, 20, 1)}));
    } else {
      collector.OnEvents(*p, Batch({Marker(OP_READ, 10, 20, 0)}));
    }
    collector.OnFileEnd(*p);
  }
  std::vector<StepLog> logs = collector.TakeLogs();
  ASSERT_EQ(logs.size(), 2u);
  EXPECT_EQ(logs[0].spans[0].pid, 10);
  EXPECT_EQ(logs[1].spans[0].pid, 12);
  EXPECT_EQ(logs[1].spans[0].rank, 1);
  EXPECT_FALSE(logs[0].spans[0].has_data_wait);
  EXPECT_TRUE(collector.TakeLogs().empty());
}

// An evaluation loop: data waits without optimizer steps. Each iteration of
// the loader is a step, from one batch request to the next, or to an
// "epoch" mark (a new pass over the loader) between them; the last request
// begins none.
TEST(MarkerCollectorTest, WaitsWithoutOptimizerStepsMakeLoaderIterationSteps) {
  ProcessTrace p = Process("run/eval.iotap", 5, -1);
  std::vector<StepLog> logs = Collect(
      p, {Batch({Marker(OP_DATA_WAIT, 10, 20, 0), Marker(OP_DATA_WAIT, 30, 40, 0),
                 Marker(OP_MARK, 50, 50, 0, 1), Marker(OP_DATA_WAIT, 55, 60, 0),
                 Marker(OP_DATA_WAIT, 70, 72, 0)})});
  ASSERT_EQ(logs.size(), 1u);
  const std::vector<StepSpan>& spans = logs[0].spans;
  ASSERT_EQ(spans.size(), 3u);
  const int64_t t0 = spans[0].start_ns;  // wait 0's start, on the wall clock
  const int64_t want[3][3] = {{0, 20, 10}, {20, 40, 10}, {45, 60, 5}};  // start, end, wait
  for (int k = 0; k < 3; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(spans[k].step, k);
    EXPECT_EQ(spans[k].start_ns - t0, want[k][0]);
    EXPECT_EQ(spans[k].end_ns - t0, want[k][1]);
    EXPECT_EQ(spans[k].data_wait_ns(), want[k][2]);
  }
  EXPECT_NE(logs[0].step_definition.find("each iteration of the DataLoader is a step"),
            std::string::npos);
  for (const std::string& note : logs[0].notes) {
    EXPECT_EQ(note.find("outside every step"), std::string::npos) << note;
  }
}

TEST(MarkerCollectorTest, OneWaitWithoutStepsMakesNoStep) {
  ProcessTrace p = Process("run/eval.iotap", 5, -1);
  std::vector<StepLog> logs = Collect(p, {Batch({Marker(OP_DATA_WAIT, 10, 20, 0)})});
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_TRUE(logs[0].spans.empty());
  EXPECT_TRUE(logs[0].step_definition.empty());
  EXPECT_THAT(logs[0].notes, Contains("1 data waits but no step markers, optimizer steps or "
                                      "second batch: no steps"));
}

}  // namespace
}  // namespace iotap::analyzer
