#include "analyzer/steps/tensorboard_reader.h"

#include <cstring>
#include <string>

#include "analyzer/steps/step_log.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::GzipStored;
using ::testing::HasSubstr;
using testing::ReadBytes;
using testing::SharedFixtureIn;
using testing::WriteTemp;

// Expected values were computed independently of iotap by
// analyzer/steps/testdata/compute_truth.py (struct for the framing, a bitwise
// CRC32C, float64 wall_time to ns as whole seconds plus the rounded fraction).
// Record k (k >= 1) of both files holds step k-1's scalar; record 0 is the
// file_version record.

std::string Tf2File() { return SharedFixtureIn("tfevents/tf2_tensor_scalars", "events.out"); }
std::string PyTorchFile() { return SharedFixtureIn("tfevents/pytorch_simple_value", "events.out"); }

// The data of record `index` of an event file.
// Record `index`'s data; "" (and a test failure) if the file has no such
// record, so that a missing or damaged fixture fails rather than crashes.
std::string RecordData(const std::string& bytes, int index) {
  // The lengths are not aligned: copied out, not loaded in place.
  auto length_at = [&](size_t offset) {
    uint64_t length;
    std::memcpy(&length, &bytes[offset], sizeof(length));
    return length;
  };
  size_t offset = 0;
  for (int i = 0;; ++i) {
    if (offset + 16 > bytes.size() || length_at(offset) > bytes.size() - offset - 16) {
      ADD_FAILURE() << "the event file has no record " << index;
      return "";
    }
    if (i == index) return bytes.substr(offset + 12, length_at(offset));
    offset += 16 + length_at(offset);
  }
}

TEST(TensorBoardReaderTest, Tf2TensorScalars) {
  absl::StatusOr<StepLog> log = ReadStepLog(Tf2File());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->source, StepSource::kTensorBoard);
  EXPECT_TRUE(log->errors.empty());
  EXPECT_TRUE(log->wall_clock);
  ASSERT_EQ(log->spans.size(), 100u);
  // Step 0 starts at the file_version record (wall_time 1585499054.0).
  EXPECT_EQ(log->spans[0].step, 0);
  EXPECT_EQ(log->spans[0].start_ns, 1585499054000000000);
  EXPECT_EQ(log->spans[0].end_ns, 1585499054133409977);
  EXPECT_EQ(log->spans[1].step, 1);
  EXPECT_EQ(log->spans[1].start_ns, 1585499054133409977);
  EXPECT_EQ(log->spans[1].end_ns, 1585499054133708000);
  EXPECT_EQ(log->spans[99].step, 99);
  EXPECT_EQ(log->spans[99].start_ns, 1585499054156116962);
  EXPECT_EQ(log->spans[99].end_ns, 1585499054156347036);
  for (const StepSpan& s : log->spans) {
    EXPECT_EQ(s.rank, -1);
    EXPECT_FALSE(s.has_data_wait);
    EXPECT_TRUE(s.data_waits.empty());
  }
  EXPECT_THAT(log->notes,
              ::testing::Contains(HasSubstr("my_metric (100 values, TF2 tensor form)")));
  EXPECT_THAT(log->notes[0], HasSubstr("a step spans from the previous step's first record"));
}

TEST(TensorBoardReaderTest, PyTorchSimpleValue) {
  absl::StatusOr<StepLog> log = ReadStepLog(PyTorchFile());
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->errors.empty());
  ASSERT_EQ(log->spans.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(log->spans[i].step, 5 * i);
  EXPECT_EQ(log->spans[0].start_ns, 1622543341757730007);
  EXPECT_EQ(log->spans[0].end_ns, 1622543341758558035);
  EXPECT_EQ(log->spans[1].start_ns, 1622543341758558035);
  EXPECT_EQ(log->spans[1].end_ns, 1622543341758702040);
  EXPECT_EQ(log->spans[99].start_ns, 1622543341769396067);
  EXPECT_EQ(log->spans[99].end_ns, 1622543341769445181);
  EXPECT_THAT(log->notes,
              ::testing::Contains(HasSubstr("strict/foo (100 values, simple_value form)")));
}

TEST(TensorBoardReaderTest, DecodesBothScalarForms) {
  absl::StatusOr<TfEvent> tf2 = DecodeTfEvent(RecordData(ReadBytes(Tf2File()), 2));
  ASSERT_TRUE(tf2.ok()) << tf2.status();
  EXPECT_EQ(tf2->step, 1);
  EXPECT_EQ(tf2->wall_time, 1585499054.133708);
  ASSERT_EQ(tf2->scalars.size(), 1u);
  EXPECT_EQ(tf2->scalars[0].tag, "my_metric");
  EXPECT_EQ(tf2->scalars[0].value, 0.5);
  EXPECT_TRUE(tf2->scalars[0].tensor_form);

  absl::StatusOr<TfEvent> pt = DecodeTfEvent(RecordData(ReadBytes(PyTorchFile()), 1));
  ASSERT_TRUE(pt.ok()) << pt.status();
  EXPECT_EQ(pt->step, 0);
  ASSERT_EQ(pt->scalars.size(), 1u);
  EXPECT_EQ(pt->scalars[0].tag, "strict/foo");
  EXPECT_EQ(pt->scalars[0].value, 1.4962565898895264);
  EXPECT_FALSE(pt->scalars[0].tensor_form);

  absl::StatusOr<TfEvent> version = DecodeTfEvent(RecordData(ReadBytes(PyTorchFile()), 0));
  ASSERT_TRUE(version.ok());
  EXPECT_TRUE(version->has_file_version);
  EXPECT_EQ(version->summary_values, 0);
  EXPECT_FALSE(DecodeTfEvent(std::string("\x0a\x05", 2)).ok());
}

TEST(TensorBoardReaderTest, BadDataCrcSkipsTheRecordOnly) {
  std::string bytes = ReadBytes(Tf2File());
  bytes[306 + 12 + 3] ^= 0x01;  // inside the data of record 5 (step 4), at byte 306
  std::string path = WriteTemp("events.out.tfevents.data-crc", bytes);
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_THAT(log->errors[0], HasSubstr(path + ": record 5 at byte 306: bad CRC of the "
                                               "record's data (stored 0x"));
  EXPECT_THAT(log->errors[0], HasSubstr("record skipped"));
  ASSERT_EQ(log->spans.size(), 99u);
  EXPECT_EQ(log->spans[3].step, 3);
  // Step 4 is gone; step 5 spans from step 3's record to its own.
  EXPECT_EQ(log->spans[4].step, 5);
  EXPECT_EQ(log->spans[4].start_ns, 1585499054134176970);
  EXPECT_EQ(log->spans[4].end_ns, 1585499054134630919);
}

TEST(TensorBoardReaderTest, BadLengthCrcStopsReading) {
  std::string bytes = ReadBytes(Tf2File());
  bytes[373] ^= 0x01;  // the length of record 6 (step 5)
  std::string path = WriteTemp("events.out.tfevents.length-crc", bytes);
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_THAT(log->errors[0], HasSubstr(path + ": record 6 at byte 373: bad CRC of the "
                                               "record's length"));
  EXPECT_THAT(log->errors[0], HasSubstr("the rest of the file cannot be framed"));
  ASSERT_EQ(log->spans.size(), 5u);
  EXPECT_EQ(log->spans[4].step, 4);
  EXPECT_EQ(log->spans[4].end_ns, 1585499054134404898);
}

TEST(TensorBoardReaderTest, DamageInTheFirstRecordIsAnError) {
  std::string bytes = ReadBytes(Tf2File());
  bytes[2] ^= 0x40;
  // The contents no longer look like TFRecord; the name still says tfevents.
  std::string path = WriteTemp("events.out.tfevents.first-record", bytes);
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(std::string(log.status().message()),
              HasSubstr(path + ": record 0 at byte 0: bad CRC of the record's length"));
}

TEST(TensorBoardReaderTest, FileCutInsideARecord) {
  std::string bytes = ReadBytes(Tf2File());
  ASSERT_EQ(bytes.size(), 6738u);
  // The last record (100, step 99) starts at 6671: 12 header bytes and 55 more.
  std::string path = WriteTemp("events.out.tfevents.cut", bytes.substr(0, 6728));
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->spans.size(), 99u);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": record 100 at byte 6671: the file ends inside the record "
                                "(45 of 55 bytes after the header): it was cut short");

  path = WriteTemp("events.out.tfevents.cut-header", bytes.substr(0, 6676));
  log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->spans.size(), 99u);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": record 100 at byte 6671: the file ends inside the "
                                "record's header (5 of 12 bytes): it was cut short");
}

TEST(TensorBoardReaderTest, GzipWholeAndCut) {
  std::string bytes = ReadBytes(Tf2File());
  std::string stored = GzipStored(bytes);
  absl::StatusOr<StepLog> log = ReadStepLog(WriteTemp("events.out.tfevents.gz", stored));
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_TRUE(log->errors.empty());
  EXPECT_EQ(log->spans.size(), 100u);

  // 2000 bytes of data survive: records 0-29 whole (record 30 starts at 1981).
  std::string path = WriteTemp("events.out.tfevents.cut.gz", stored.substr(0, 15 + 2000));
  log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();
  EXPECT_EQ(log->spans.size(), 29u);
  EXPECT_EQ(log->spans.back().step, 28);
  ASSERT_EQ(log->errors.size(), 1u);
  EXPECT_EQ(log->errors[0], path +
                                ": the gzip stream is cut short after 2000 bytes of "
                                "uncompressed data (the file is truncated) (in record 30)");
}

TEST(TensorBoardReaderTest, RefusesWhatIsNotAnEventFile) {
  std::string path = WriteTemp("not-events", "hello, this is not TFRecord framing\n");
  EXPECT_FALSE(LooksLikeTfRecord(ReadBytes(path)));
  EXPECT_TRUE(LooksLikeTfRecord(ReadBytes(Tf2File())));
  absl::StatusOr<StepLog> log = ReadTensorBoardLog(path);
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(std::string(log.status().message()), HasSubstr(path + ": record 0 at byte 0"));
  EXPECT_FALSE(ReadStepLog(path).ok());
}

}  // namespace
}  // namespace iotap::analyzer
