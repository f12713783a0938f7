#include "analyzer/steps/jsonl_reader.h"

#include <string>

#include "analyzer/steps/step_log.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::Contains;
using testing::Gzip;
using ::testing::HasSubstr;
using testing::WriteTemp;

constexpr char kLog[] =
    R"({"step": 0, "start": 1700000000.125, "end": 1700000000.480, "data_wait": 0.052, "rank": 1, "epoch": 1, "loss": NaN}
{"step": 1, "start": 1700000000.480, "end": 1700000000.500000001, "data_waits": [[1700000000.49, 1700000000.495], [1700000000.481, 1700000000.482], [1700000000.499, 1700000001]]}

  {"forward": 0.1, "step": 2, "end": 1700000001, "start": 1700000000.5, "pid": 77, "data_wait": 2, "phases": {"backward": [1, 2]}}
{"step": 3, "start": 1700000001, "end": 1700000001}
)";

TEST(JsonLinesReaderTest, ReadsEveryField) {
  for (bool gz : {false, true}) {
    absl::StatusOr<StepLog> log =
        ReadStepLog(WriteTemp(gz ? "steps.jsonl.gz" : "steps.jsonl", gz ? Gzip(kLog) : kLog));
    ASSERT_TRUE(log.ok()) << log.status();
    EXPECT_EQ(log->source, StepSource::kJsonLines);
    EXPECT_TRUE(log->errors.empty()) << log->errors[0];
    ASSERT_EQ(log->spans.size(), 4u);
    // Sorted by (rank, pid, start): rank -1 first.
    const StepSpan& s1 = log->spans[0];
    EXPECT_EQ(s1.step, 1);
    EXPECT_EQ(s1.start_ns, 1700000000480000000);
    EXPECT_EQ(s1.end_ns, 1700000000500000001);
    ASSERT_EQ(s1.data_waits.size(), 3u);  // sorted, the last cut to the step
    EXPECT_EQ(s1.data_waits[0].start_ns, 1700000000481000000);
    EXPECT_EQ(s1.data_waits[0].end_ns, 1700000000482000000);
    EXPECT_EQ(s1.data_waits[1].start_ns, 1700000000490000000);
    EXPECT_EQ(s1.data_waits[2].end_ns, 1700000000500000001);
    EXPECT_EQ(s1.data_wait_ns(), 1000000 + 5000000 + 1000001);

    const StepSpan& s3 = log->spans[1];
    EXPECT_EQ(s3.step, 3);
    EXPECT_EQ(s3.duration_ns(), 0);
    EXPECT_FALSE(s3.has_data_wait);

    const StepSpan& s2 = log->spans[2];
    EXPECT_EQ(s2.step, 2);
    EXPECT_EQ(s2.pid, 77);
    EXPECT_TRUE(s2.has_data_wait);
    ASSERT_EQ(s2.data_waits.size(), 1u);  // 2 s of wait in a 0.5 s step: cut to it
    EXPECT_EQ(s2.data_waits[0].start_ns, 1700000000500000000);
    EXPECT_EQ(s2.data_waits[0].end_ns, 1700000001000000000);

    const StepSpan& s0 = log->spans[3];
    EXPECT_EQ(s0.step, 0);
    EXPECT_EQ(s0.rank, 1);
    EXPECT_EQ(s0.start_ns, 1700000000125000000);
    EXPECT_EQ(s0.end_ns, 1700000000480000000);
    ASSERT_EQ(s0.data_waits.size(), 1u);  // placed at the start of the step
    EXPECT_EQ(s0.data_waits[0].start_ns, 1700000000125000000);
    EXPECT_EQ(s0.data_waits[0].end_ns, 1700000000177000000);
    EXPECT_THAT(log->notes,
                Contains(HasSubstr("2 steps give data_wait as a duration only: it is placed at the "
                                   "start of its step")));
    EXPECT_THAT(log->notes, Contains(HasSubstr("(1 of them longer than their step, cut to it)")));
  }
}

// A field named like a wait is what the user meant as data_wait: a note of
// its own says so; the other fields iotap does not read are named together.
TEST(JsonLinesReaderTest, UnknownFieldsAreNamedInNotes) {
  absl::StatusOr<StepLog> log = ReadStepLog(WriteTemp("unknown.jsonl", kLog));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_THAT(log->notes,
              Contains("unknown field \"phases\"; iotap reads \"data_wait\" and \"data_waits\"")
                  .Times(0));
  EXPECT_THAT(log->notes, Contains("fields iotap does not read, ignored: \"epoch\", \"forward\", "
                                   "\"loss\", \"phases\""));
  std::string waits = R"({"step": 0, "start": 1.0, "end": 2.0, "wait": 0.5, "loss": 1}
{"step": 1, "start": 2.0, "end": 3.0, "WaitTime": 0.5, "wait": 0.1}
)";
  log = ReadStepLog(WriteTemp("waits.jsonl", waits));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_FALSE(log->spans[0].has_data_wait);
  EXPECT_THAT(log->notes,
              Contains("unknown field \"wait\"; iotap reads \"data_wait\" and \"data_waits\""));
  EXPECT_THAT(log->notes, Contains("unknown field \"WaitTime\"; iotap reads \"data_wait\" and "
                                   "\"data_waits\""));
  EXPECT_THAT(log->notes, Contains("fields iotap does not read, ignored: \"loss\""));
}

TEST(JsonLinesReaderTest, BadLinesAreNamedAndSkipped) {
  std::string text =
      "{\"step\": 0, \"start\": 10, \"end\": 11}\n"
      "{\"step\": 1, \"start\": 11, \"end\": 12\n"  // line 2: not closed
      "{\"step\": 2, \"start\": 12, \"end\": 13}\n"
      "{\"step\": 3, \"start\": 13}\n"                   // line 4: no end
      "{\"step\": 4.5, \"start\": 14, \"end\": 15}\n"    // line 5: not an integer
      "{\"step\": 5, \"start\": 16, \"end\": 15}\n"      // line 6: ends first
      "[1, 2]\n"                                         // line 7: not an object
      "{\"step\": 7, \"start\": \"17\", \"end\": 18}\n"  // line 8: a string
      "{\"step\": 8, \"start\": 18, \"end\": 19} x\n"    // line 9: trailing text
      "{\"step\": 9, \"start\": 19, \"end\": 20, \"data_waits\": [[19, 18]]}\n"  // line 10
      "{\"step\": 10, \"start\": 20, \"end\": 21}";  // line 11, no newline
  std::string path = WriteTemp("bad.jsonl", text);
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->spans.size(), 3u);
  EXPECT_EQ(log->spans[0].step, 0);
  EXPECT_EQ(log->spans[1].step, 2);
  EXPECT_EQ(log->spans[2].step, 10);
  EXPECT_EQ(log->spans[2].start_ns, 20000000000);
  EXPECT_THAT(log->errors,
              ::testing::ElementsAre(
                  path + ": line 2, column 35 (byte 70): the input ends inside an object (1 level "
                         "deep): the file is cut short?: line skipped",
                  path + ": line 4: the required field \"end\" is missing: line skipped",
                  path + ": line 5, column 10 (byte 141): \"step\" must be an integer: line "
                         "skipped",
                  path + ": line 6: \"end\" is before \"start\": line skipped",
                  path + ": line 7, column 1 (byte 206): expected a JSON object: line skipped",
                  path + ": line 8, column 22 (byte 234): \"start\" must be a number of "
                         "seconds: line skipped",
                  path + ": line 9, column 37 (byte 287): unexpected 'x' after the end of the "
                         "JSON value: line skipped",
                  path + ": line 10, column 59 (byte 347): a data_waits pair must be [start, "
                         "end] with end >= start: line skipped"));
}

TEST(JsonLinesReaderTest, NothingReadableIsAnError) {
  std::string path = WriteTemp("garbage.jsonl", "{\"step\": 1}\nnot json\n");
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(std::string(log.status().message()),
            "no step could be read: " + path +
                ": line 1: the required field \"start\" is missing: line skipped; " + path +
                ": line 2, column 2 (byte 13): expected 'null', found 'o': line skipped");
}

TEST(JsonLinesReaderTest, CutGzipKeepsTheLinesBefore) {
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text += "{\"step\": " + std::to_string(i) + ", \"start\": " + std::to_string(1000 + i) +
            ", \"end\": " + std::to_string(1001 + i) + "}\n";
  }
  // Lines 0-9 take 40 bytes each, 10-99 take 42: 600 bytes hold lines
  // 0-13 whole and part of line 14.
  std::string path = WriteTemp("cut.jsonl.gz", testing::GzipStored(text).substr(0, 15 + 600));
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->spans.size(), 14u);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": the gzip stream is cut short after 600 bytes of "
                                "uncompressed data (the file is truncated) (in line 15; the "
                                "lines before it are kept)");
}

TEST(JsonLinesReaderTest, ManyBadLinesAreCounted) {
  std::string text;
  for (int i = 0; i < 25; ++i) text += "oops\n";
  text += "{\"step\": 1, \"start\": 1, \"end\": 2}\n";
  absl::StatusOr<StepLog> log = ReadJsonLinesLog(WriteTemp("many-bad.jsonl", text));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->spans.size(), 1u);
  ASSERT_EQ(log->errors.size(), 21u);
  EXPECT_EQ(log->errors.back(), "... and 5 more errors like these");
}

}  // namespace
}  // namespace iotap::analyzer
