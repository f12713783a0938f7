#include "analyzer/steps/step_log.h"

#include <limits>
#include <string>
#include <vector>

#include "analyzer/steps/span_building.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::Gzip;
using ::testing::HasSubstr;
using testing::ReadBytes;
using testing::SharedFixtureIn;
using testing::TestData;
using testing::WriteTemp;

// The kind of a file comes from its contents, whatever its name.
TEST(ReadStepLogTest, RecognisesContentsNotNames) {
  std::string tfevents = ReadBytes(SharedFixtureIn("tfevents/pytorch_simple_value", "events.out"));
  std::string profiler = ReadBytes(TestData("torch113_cpu.pt.trace.json"));
  std::string jsonl = "{\"step\": 1, \"start\": 1, \"end\": 2}\n";
  std::string kineto = "{\"displayTimeUnit\": \"ms\", \"traceEvents\": []}";
  struct Case {
    std::string bytes;
    StepSource source;
    size_t spans;
  } cases[] = {{tfevents, StepSource::kTensorBoard, 100},
               {profiler, StepSource::kProfiler, 3},
               {jsonl, StepSource::kJsonLines, 1},
               {kineto, StepSource::kProfiler, 0}};
  int i = 0;
  for (const Case& c : cases) {
    for (bool gz : {false, true}) {
      std::string path =
          WriteTemp("file" + std::to_string(i++) + ".bin", gz ? Gzip(c.bytes) : c.bytes);
      absl::StatusOr<StepLog> log = ReadStepLog(path);
      ASSERT_TRUE(log.ok()) << log.status();
      EXPECT_EQ(log->source, c.source) << StepSourceName(log->source);
      EXPECT_EQ(log->spans.size(), c.spans);
      EXPECT_EQ(log->path, path);
    }
  }
}

TEST(ReadStepLogTest, SaysWhatItCannotRead) {
  std::string path = WriteTemp("notes.txt", "step 1 took 3 s\n");
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(std::string(log.status().message()),
            path +
                ": not a step log iotap reads: neither a TensorBoard event file (TFRecord "
                "framing), a PyTorch profiler trace (JSON with \"traceEvents\"), a JSON-lines "
                "step log (objects with \"step\", \"start\", \"end\") nor an iotap trace");
  path = WriteTemp("empty.json", "");
  log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(std::string(log.status().message()), path + ": empty file");
  log = ReadStepLog("/nonexistent/steps.jsonl");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().code(), absl::StatusCode::kNotFound);
  path =
      WriteTemp("damaged.gz", std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff\xff\xff", 12));
  log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(std::string(log.status().message()), HasSubstr(path + ": gzip data unreadable"));
}

TEST(StepSpanTest, DataWaitTotal) {
  StepSpan s;
  EXPECT_EQ(s.data_wait_ns(), 0);
  s.data_waits = {{10, 15}, {20, 40}};
  EXPECT_EQ(s.data_wait_ns(), 25);
  EXPECT_STREQ(StepSourceName(StepSource::kMarkers), "iotap markers");
}

TEST(SpanBuildingTest, WaitsAreClippedAndMerged) {
  std::vector<TimeWindow> waits = {{0, 5},   {8, 12},  {11, 14}, {15, 15},
                                   {18, 25}, {30, 30}, {40, 50}};
  size_t cursor = 0;
  StepSpan a;
  a.start_ns = 10;
  a.end_ns = 20;
  EXPECT_EQ(internal::AddWaitsInside(waits, &cursor, &a), 4);
  ASSERT_EQ(a.data_waits.size(), 3u);
  EXPECT_EQ(a.data_waits[0].start_ns, 10);  // clipped, and merged with {11, 14}
  EXPECT_EQ(a.data_waits[0].end_ns, 14);
  EXPECT_EQ(a.data_waits[1].start_ns, 15);  // an empty wait inside counts
  EXPECT_EQ(a.data_waits[1].end_ns, 15);
  EXPECT_EQ(a.data_waits[2].start_ns, 18);
  EXPECT_EQ(a.data_waits[2].end_ns, 20);
  StepSpan b;
  b.start_ns = 20;
  b.end_ns = 45;
  EXPECT_EQ(internal::AddWaitsInside(waits, &cursor, &b), 3);
  ASSERT_EQ(b.data_waits.size(), 3u);
  EXPECT_EQ(b.data_waits[0].start_ns, 20);
  EXPECT_EQ(b.data_waits[0].end_ns, 25);
  EXPECT_EQ(b.data_waits[2].end_ns, 45);
  EXPECT_EQ(cursor, 4u);  // waits before {18, 25} are done with
  EXPECT_EQ(internal::CountOutside(waits, {{10, 20}, {20, 45}}), 1);
}

TEST(SpanBuildingTest, SecondsToNs) {
  EXPECT_EQ(internal::SecondsToNs(1585499054.0), 1585499054000000000);
  // The double nearest 1622543341.758558 is 1622543341.75855803489685... s.
  EXPECT_EQ(internal::SecondsToNs(1622543341.758558), 1622543341758558035);
  EXPECT_EQ(internal::SecondsToNs(-1.0), std::nullopt);
  EXPECT_EQ(internal::SecondsToNs(1e10), std::nullopt);
  EXPECT_EQ(internal::SecondsToNs(std::numeric_limits<double>::quiet_NaN()), std::nullopt);
}

TEST(SpanBuildingTest, NothingButDamageIsAnError) {
  StepLog log;
  log.errors = {"f: record 0 at byte 0: bad", "f: record 1 at byte 9: bad"};
  absl::StatusOr<StepLog> r = internal::FinishStepLog(log);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(std::string(r.status().message()),
            "no step could be read: f: record 0 at byte 0: bad; f: record 1 at byte 9: bad");
  log.errors.clear();
  EXPECT_TRUE(internal::FinishStepLog(log).ok());
}

}  // namespace
}  // namespace iotap::analyzer
