// Decoded events: what the columns of an EventChunk mean, one event at a time.
//
// An EventBatch holds the events of one chunk with every delta undone: times
// are absolute CLOCK_MONOTONIC nanoseconds and offsets absolute bytes. See
// `enum Op` in proto/iotap/trace.proto for what each field means per op.

#ifndef IOTAP_ANALYZER_READ_EVENT_H_
#define IOTAP_ANALYZER_READ_EVENT_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "iotap/trace.pb.h"

namespace iotap::analyzer {

// The largest times a trace may hold, in ns: CLOCK_MONOTONIC (time since
// boot) below 2^61 (73 years), the wall clock below 2^62 (the year 2116).
// The reader takes anything past them for damage, so that the differences
// of wall-clock times the analysis derives from them cannot overflow.
inline constexpr int64_t kMaxMonotonicNs = int64_t{1} << 61;
inline constexpr int64_t kMaxRealtimeNs = int64_t{1} << 62;

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
// an OP_TFRECORD_RECORDS or OP_TFRECORD_RUN event becomes the
// OP_TFRECORD_RECORD events it stands for, all with its seq, so a batch may
// hold more events than the chunk.
absl::Status DecodeChunk(const EventChunk& chunk, EventBatch* batch);

// Decodes EventChunk messages straight from their wire bytes, as DecodeChunk
// does from a parsed message, with the same results and errors: the reader's
// path for every event packet, which skips building the message (libprotobuf
// would copy each packed column into a RepeatedField first).
//
//   ChunkDecoder decoder;
//   std::optional<absl::Status> s = decoder.Decode(bytes, size, &batch);
//   if (!s.has_value()) { /* parse an EventChunk, then DecodeChunk */ }
//
// It takes the encoding the shim writes: known fields with their declared
// wire types, each column packed and given at most once, unknown fields of
// any wire type but groups. Anything else, including bytes that are not a
// valid message at all, it leaves to libprotobuf (returns nullopt), so
// damage is judged in one place.
class ChunkDecoder {
 public:
  std::optional<absl::Status> Decode(const uint8_t* data, size_t size, EventBatch* batch);

 private:
  static constexpr int kColumns = 11;  // fields 10 to 20
  std::vector<uint8_t> scratch_;      // columns that cannot be read in place, padded
};

// The layer an op belongs to.
// kMapped: reads through file mappings (page faults, OP_MAPPED_READ and
// OP_MREMAP); kUring: io_uring's calls and requests (OP_URING_*).
// kWait: the waits layer's blocking waits (poll, select, epoll, semaphores,
// conditions), which move no data and are no layer's I/O.
enum class Layer {
  kPosix, kStdio, kHdf5, kTfRecord, kCuda, kGds, kMarker, kMapped, kUring, kWait, kOther
};
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
// Whether the op opens a file (open, openat, creat, mkstemp, fopen, freopen).
bool IsOpen(Op op);
// Whether the op is metadata work (stat family, directory scans, unlink,
// rename, mkdir, close, seeks and the like).
bool IsMetadata(Op op);

// All of the above for one op, from a table: what per-event loops ask.
struct OpTraits {
  Layer layer = Layer::kOther;
  Transfer transfer = Transfer::kNone;
  bool open = false;
  bool metadata = false;
};
namespace internal {
inline constexpr int kOpTableSize = 512;  // past every op number the schema defines
extern const std::array<OpTraits, kOpTableSize> kOpTraits;
}  // namespace internal
inline const OpTraits& TraitsOf(Op op) {
  auto v = static_cast<uint32_t>(op);
  return internal::kOpTraits[v < internal::kOpTableSize ? v : 0];
}

// Bytes the event moved (its result, if it is a transfer that succeeded;
// what a queued cuFile request asked for, if it was queued).
// `t` is TraitsOf(e.op), where the caller has it already.
inline uint64_t BytesMoved(const Event& e, const OpTraits& t) {
  if (t.transfer == Transfer::kNone) return 0;
  // A queued cuFile request (async or batch) holds its submission's status:
  // what it asked for is what it moves once queued.
  if (t.layer == Layer::kGds && (e.flags & FLAG_CUDA_ASYNC)) {
    return e.result == 0 ? e.requested : 0;
  }
  return e.result <= 0 ? 0 : static_cast<uint64_t>(e.result);
}
inline uint64_t BytesMoved(const Event& e) { return BytesMoved(e, TraitsOf(e.op)); }

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_EVENT_H_
