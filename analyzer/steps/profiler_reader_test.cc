#include "analyzer/steps/profiler_reader.h"

#include <string>

#include "analyzer/steps/step_log.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::Contains;
using testing::Gzip;
using testing::GzipStored;
using ::testing::HasSubstr;
using testing::ReadBytes;
using testing::SharedFixture;
using testing::TestData;
using testing::WriteTemp;

// Expected times were computed independently of iotap by
// analyzer/steps/testdata/compute_truth.py: Python's json and gzip, and
// decimal arithmetic on the `ts`/`dur` text (base + ts * 1000 ns).

void ExpectSpan(const StepSpan& s, int64_t step, int64_t start_ns, int64_t end_ns) {
  EXPECT_EQ(s.step, step);
  EXPECT_EQ(s.start_ns, start_ns) << "step " << step;
  EXPECT_EQ(s.end_ns, end_ns) << "step " << step;
}

TEST(ProfilerReaderTest, CurrentKinetoWithBaseTime) {
  absl::StatusOr<StepLog> log =
      ReadStepLog(SharedFixture("kineto/cpu_only_rank-34.pt.trace.json.gz"));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->source, StepSource::kProfiler);
  EXPECT_TRUE(log->errors.empty());
  EXPECT_TRUE(log->wall_clock);
  ASSERT_EQ(log->spans.size(), 1u);
  // baseTimeNanoseconds 1719853884000000000 + ts 1212075529876.817 us.
  ExpectSpan(log->spans[0], 551, 1721065959529876817, 1721065959739985979);
  EXPECT_EQ(log->spans[0].rank, 34);
  EXPECT_EQ(log->spans[0].pid, 1074);
  EXPECT_FALSE(log->spans[0].has_data_wait);
  EXPECT_THAT(log->notes, Contains(HasSubstr("baseTimeNanoseconds")));
  // Of its 10 gloo:all_reduce spans (two process groups, each on a gloo
  // thread of its own), 2 end inside the step: in the order they ended,
  // base + ts + dur.
  ASSERT_EQ(log->collectives.size(), 2u);
  const int64_t ends[] = {1721065959721563017, 1721065959727130731};
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(log->collectives[i].step, 551);
    EXPECT_EQ(log->collectives[i].index, i);
    EXPECT_EQ(log->collectives[i].rank, 34);
    EXPECT_EQ(log->collectives[i].end_ns, ends[i]);
  }
}

TEST(ProfilerReaderTest, OlderKinetoWithEpochMicroseconds) {
  absl::StatusOr<StepLog> log =
      ReadStepLog(SharedFixture("kineto/sampled_rank-0.pt.trace.json.gz"));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->errors.empty());
  EXPECT_TRUE(log->wall_clock);
  ASSERT_EQ(log->spans.size(), 2u);
  ExpectSpan(log->spans[0], 551, 1682725898079292000, 1682725898686604000);
  ExpectSpan(log->spans[1], 552, 1682725898686653000, 1682725899309581000);
  for (const StepSpan& s : log->spans) {
    EXPECT_EQ(s.rank, 0);
    EXPECT_EQ(s.pid, 4037);
  }
  EXPECT_THAT(log->notes, Contains(HasSubstr("absolute epoch microseconds")));
  // Its NCCL kernels are all SendRecv (an all_to_all): no moment every rank
  // shares, so no collective end.
  EXPECT_TRUE(log->collectives.empty());
}

TEST(ProfilerReaderTest, TraceWithoutSteps) {
  absl::StatusOr<StepLog> log =
      ReadStepLog(SharedFixture("kineto/simple_add_gpu.pt.trace.json.gz"));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->errors.empty());
  EXPECT_EQ(log->spans.size(), 0u);
  EXPECT_THAT(log->notes, Contains(HasSubstr("no ProfilerStep#N spans")));
}

// Made by Debian's python3-torch 1.13 (see testdata/README.md): a bare
// array, "pid": "CPU functions", ts in us since the profiler started.
TEST(ProfilerReaderTest, Torch113WithoutKineto) {
  for (bool gz : {false, true}) {
    std::string path = TestData("torch113_cpu.pt.trace.json");
    if (gz) path = WriteTemp("torch113.pt.trace.json.gz", Gzip(ReadBytes(path)));
    absl::StatusOr<StepLog> log = ReadStepLog(path);
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_TRUE(log->errors.empty());
    EXPECT_FALSE(log->wall_clock);
    ASSERT_EQ(log->spans.size(), 3u);
    ExpectSpan(log->spans[0], 1, 120000, 487000);
    ExpectSpan(log->spans[1], 2, 500000, 741000);
    ExpectSpan(log->spans[2], 3, 751000, 998000);
    const int64_t waits[3][2] = {{127000, 214000}, {506000, 570000}, {757000, 814000}};
    for (int i = 0; i < 3; ++i) {
      const StepSpan& s = log->spans[i];
      EXPECT_EQ(s.rank, -1);
      EXPECT_EQ(s.pid, 0);
      EXPECT_TRUE(s.has_data_wait);
      ASSERT_EQ(s.data_waits.size(), 1u);
      EXPECT_EQ(s.data_waits[0].start_ns, waits[i][0]);
      EXPECT_EQ(s.data_waits[0].end_ns, waits[i][1]);
    }
    EXPECT_THAT(log->notes, Contains(HasSubstr("\"pid\": \"CPU functions\"")));
    EXPECT_THAT(log->notes, Contains(HasSubstr("cannot be placed on the wall clock")));
  }
}

// The current format with data waits, things to leave out, and the base
// time after the events, as Kineto writes it.
TEST(ProfilerReaderTest, DataWaitsInsideSteps) {
  const char* kTrace = R"({
  "schemaVersion": 1,
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 42, "tid": 42,
     "ts": 1000.5, "dur": 500.25, "args": {"External id": 1, "nested": [1, {"a": "b"}]}},
    {"ph": "X", "cat": "user_annotation",
     "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
     "pid": 42, "tid": 42, "ts": 1001, "dur": 99.999},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#7", "pid": 0, "tid": 7,
     "ts": 1010, "dur": 600},
    {"ph": "X", "cat": "cpu_op", "name": "aten::add \"quoted\" \u00e9", "pid": 42, "ts": 1200,
     "dur": 10},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#8", "pid": 42, "tid": 42,
     "ts": 1500.75, "dur": 400},
    {"ph": "X", "cat": "user_annotation",
     "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
     "pid": 42, "tid": 42, "ts": 1890.75, "dur": 50},
    {"ph": "i", "name": "ProfilerStep#9", "pid": 42, "tid": 42, "ts": 2000},
    {"ph": "X", "cat": "user_annotation",
     "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
     "pid": 42, "tid": 42, "ts": 3000, "dur": 5}
  ],
  "traceName": "x",
  "baseTimeNanoseconds": 1700000000000000000
})";
  absl::StatusOr<StepLog> log = ReadStepLog(WriteTemp("waits.pt.trace.json", kTrace));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->errors.empty());
  ASSERT_EQ(log->spans.size(), 2u);
  const int64_t base = 1700000000000000000;
  ExpectSpan(log->spans[0], 7, base + 1000500, base + 1500750);
  ExpectSpan(log->spans[1], 8, base + 1500750, base + 1900750);
  ASSERT_EQ(log->spans[0].data_waits.size(), 1u);
  EXPECT_EQ(log->spans[0].data_waits[0].start_ns, base + 1001000);
  EXPECT_EQ(log->spans[0].data_waits[0].end_ns, base + 1100999);
  ASSERT_EQ(log->spans[1].data_waits.size(), 1u);  // clipped to the step
  EXPECT_EQ(log->spans[1].data_waits[0].start_ns, base + 1890750);
  EXPECT_EQ(log->spans[1].data_waits[0].end_ns, base + 1900750);
  EXPECT_EQ(log->spans[1].data_wait_ns(), 10000);
  EXPECT_EQ(log->spans[0].rank, 3);
  EXPECT_EQ(log->spans[0].pid, 42);
  EXPECT_THAT(log->notes, Contains(HasSubstr("(3 waits, 1 of them outside every step)")));
}

TEST(ProfilerReaderTest, MalformedJsonKeepsTheStepsBefore) {
  const char* kTrace =
      "{\"traceEvents\": [\n"
      "{\"ph\": \"X\", \"name\": \"ProfilerStep#1\", \"pid\": 1, \"ts\": 1700000000000000, "
      "\"dur\": 10},\n"
      "{\"ph\": \"X\", \"name\": \"ProfilerStep#2\", \"pid\": 1, \"ts\": 1700000000000020, "
      "\"dur\": 10},\n"
      "{\"ph\": \"X\", \"name\": \"ProfilerStep#3\", \"pid\": 1, \"ts\": 1700000000000040, "
      "\"dur\": 10},\n"
      "{\"ph\": \"X\", \"name\": \"ProfilerStep#4\", \"pid\": 1, \"ts\": 1700000000000060 \"dur\": "
      "10},\n"
      "{\"ph\": \"X\", \"name\": \"ProfilerStep#5\", \"pid\": 1, \"ts\": 1700000000000080, "
      "\"dur\": 10}\n"
      "]}\n";
  std::string path = WriteTemp("malformed.json", kTrace);
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->spans.size(), 3u);
  ExpectSpan(log->spans[2], 3, 1700000000000040000, 1700000000000050000);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": line 5, column 72 (byte 341): expected ',' or '}', found "
                                "'\"' (after 3 trace events; the steps before it are kept)");
}

TEST(ProfilerReaderTest, CutFilesKeepTheStepsBefore) {
  std::string json = ReadBytes(TestData("torch113_cpu.pt.trace.json"));
  ASSERT_EQ(json.size(), 39460u);
  // Byte 20980 starts the event after ProfilerStep#2's wait (196 events in).
  std::string path = WriteTemp("cut.pt.trace.json", json.substr(0, 20980));
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->spans.size(), 2u);
  ExpectSpan(log->spans[1], 2, 500000, 741000);
  EXPECT_EQ(log->spans[1].data_waits.size(), 1u);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": line 1, column 20981 (byte 20980): the input ends inside "
                                "an array (1 level deep): the file is cut short? (after 196 "
                                "trace events; the steps before it are kept)");

  path = WriteTemp("cut.pt.trace.json.gz", GzipStored(json).substr(0, 15 + 20980));
  log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->spans.size(), 2u);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": the gzip stream is cut short after 20980 bytes of "
                                "uncompressed data (the file is truncated) (after 196 trace "
                                "events; the steps before it are kept)");

  // Cut before the first step ends: nothing to keep, so an error.
  path = WriteTemp("cut-early.pt.trace.json", json.substr(0, 150));
  log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(std::string(log.status().message()), HasSubstr(path + ": line 1, column 151"));
}

TEST(ProfilerReaderTest, RefusesOtherJson) {
  std::string path = WriteTemp("other.json", "{\"schemaVersion\": 1, \"foo\": [1, 2]}");
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.status().message(), path + ": not a profiler trace: no \"traceEvents\" array");
}

}  // namespace
}  // namespace iotap::analyzer
