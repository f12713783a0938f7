// Decoded events: what the columns of an EventChunk mean, one event at a time.
//
// An EventBatch holds the events of one chunk with every delta undone: times
// are absolute CLOCK_MONOTONIC nanoseconds and offsets absolute bytes. See
// `enum Op` in proto/iotap/trace.proto for what each field means per op.

#ifndef IOTAP_ANALYZER_EVENT_H_
#define IOTAP_ANALYZER_EVENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

struct Event {
  uint64_t seq = 0;       // position in the thread's event sequence
  int64_t start_ns = 0;   // CLOCK_MONOTONIC
  int64_t end_ns = 0;
  int64_t offset = 0;     // meaningful when HasOffset()
  uint64_t requested = 0;
  int64_t result = 0;
  uint64_t aux = 0;
  uint64_t parent = 0;
  uint32_t file = 0;      // interned string id
  uint32_t error = 0;
  uint32_t flags = 0;
  uint32_t tid = 0;
  Op op = OP_UNSPECIFIED;

  bool HasOffset() const { return (flags & FLAG_HAS_OFFSET) != 0; }
  bool Failed() const { return error != 0; }
  int64_t duration_ns() const { return end_ns - start_ns; }
};

struct EventBatch {
  uint32_t tid = 0;
  uint64_t dropped_before = 0;  // events this thread lost just before the batch
  std::vector<Event> events;

  size_t size() const { return events.size(); }
};

// Decodes `chunk` into `batch` (reusing its memory). Fails if the columns
// disagree in length or a value is out of range. Compact forms are expanded:
// an OP_TFRECORD_RECORDS event becomes the OP_TFRECORD_RECORD events it
// stands for, all with its seq, so a batch may hold more events than the
// chunk.
absl::Status DecodeChunk(const EventChunk& chunk, EventBatch* batch);

// The layer an op belongs to.
enum class Layer { kPosix, kStdio, kHdf5, kTfRecord, kCuda, kGds, kMarker, kOther };
Layer LayerOf(Op op);
const char* LayerName(Layer layer);

// Short op name for listings: "read", "pread", "H5Dread", "cudaMemcpyHtoD"
// (every CUDA copy, runtime or driver, is named by its direction;
// "cudaMemcpy" is one whose direction the driver inferred), "gpuMemcpy" and
// "gpuKernel" (CUPTI's device-side records)...
std::string OpName(Op op);

// What an op does to data, for counting.
enum class Transfer { kNone, kRead, kWrite };
Transfer TransferOf(Op op);
// Bytes the event moved (its result, if it is a transfer that succeeded;
// what a queued cuFile request asked for, if it was queued).
uint64_t BytesMoved(const Event& e);
// Whether the op opens a file (open, openat, creat, mkstemp, fopen, freopen).
bool IsOpen(Op op);
// Whether the op is metadata work (stat family, directory scans, unlink,
// rename, mkdir, close, seeks and the like).
bool IsMetadata(Op op);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_EVENT_H_
