// TensorBoard event files (events.out.tfevents.*) as step logs.
//
// An event file is TFRecord framing around `Event` messages:
//   uint64 length, uint32 masked_crc32c(length), data, uint32 masked_crc32c(data)
// (little-endian), where each Event has wall_time = 1 (double, epoch seconds),
// step = 2, file_version = 3, summary = 5. Scalars come in two forms: PyTorch's
// SummaryWriter writes Summary.Value.simple_value (2); TensorFlow 2 writes a
// scalar `tensor` (8: TensorProto with dtype 1 and tensor_content 4 or
// float_val 5, ...) with plugin "scalars".
//
// TensorBoard keeps one time per step, the moment its values were written, so
// a step's span is inferred: step N spans from the previous step's first
// record to its own first record; the first step from the file's first record
// (the file_version record, written when the writer was created). Records
// that repeat a step number already seen do not start a new span. The log
// says nothing of data waits (has_data_wait stays false).
//
// Both CRCs of every record are checked. A bad data CRC skips that record
// (the framing is intact) and reading goes on; a bad length CRC or a file cut
// inside a record ends reading there. Either is reported in StepLog::errors
// with the file, the record number (0-based) and its byte offset.

#ifndef IOTAP_ANALYZER_STEPS_TENSORBOARD_READER_H_
#define IOTAP_ANALYZER_STEPS_TENSORBOARD_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

// One scalar of an Event's summary.
struct TfScalar {
  std::string tag;
  double value = 0;
  bool tensor_form = false;  // TF2 tensor rather than simple_value
};

// The parts of an Event message that step logs use.
struct TfEvent {
  double wall_time = 0;
  int64_t step = 0;
  bool has_file_version = false;
  int summary_values = 0;         // Summary.value entries of any kind
  std::vector<TfScalar> scalars;  // those that are scalars, in order
};

// Decodes one record's data as an Event. Fails on malformed protobuf.
absl::StatusOr<TfEvent> DecodeTfEvent(std::string_view data);

// Reads an event file (plain or gzip-compressed) into step spans.
absl::StatusOr<StepLog> ReadTensorBoardLog(const std::string& path);

// Whether `head` (a file's first bytes, at least 12) starts with a TFRecord
// header whose length CRC is right.
bool LooksLikeTfRecord(std::string_view head);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_TENSORBOARD_READER_H_
