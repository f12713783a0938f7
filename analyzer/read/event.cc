#include "analyzer/read/event.h"

#include <array>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "proto/wire/varint.h"

namespace iotap::analyzer {

namespace {

// A column may be absent (all zeros) or hold one value per event.
template <typename Column>
bool SizeOk(const Column& column, int n) {
  return column.empty() || column.size() == n;
}

// The column's values, or `n` zeros for an absent column, so the decoding
// loop has no branch per value.
template <typename T>
const T* Values(const google::protobuf::RepeatedField<T>& column, int n) {
  if (!column.empty()) return column.data();
  thread_local std::vector<T> zeros;
  if (zeros.size() < static_cast<size_t>(n)) zeros.resize(n, 0);
  return zeros.data();
}

// What an op number is to the decoder, looked up without a call per event:
// one the schema does not define, one it does, or a compact TFRecord event
// (OP_TFRECORD_RECORDS, OP_TFRECORD_RUN) that ExpandRecordGroups expands.
enum OpClass : uint8_t { kUnknownOp, kKnownOp, kCompactOp };
const std::array<uint8_t, 512> kOpClasses = [] {
  std::array<uint8_t, 512> classes{};
  for (size_t i = 0; i < classes.size(); ++i) {
    classes[i] = !Op_IsValid(static_cast<int>(i)) ? kUnknownOp
                 : i == OP_TFRECORD_RECORDS || i == OP_TFRECORD_RUN ? kCompactOp
                                                                    : kKnownOp;
  }
  return classes;
}();
// The most record events the compact events of one chunk may stand for:
// the shim writes at most 4096 events per chunk, each for at most 255
// records. More is damage, and would make a small file take gigabytes.
constexpr uint64_t kMaxExpandedRecords = 1u << 20;

// How many records a compact event stands for, or an error.
absl::StatusOr<uint64_t> CompactCount(const Event& e, uint32_t tid) {
  bool run = e.op == OP_TFRECORD_RUN;
  uint64_t count = run ? static_cast<uint64_t>(e.result) : e.aux >> 56;
  uint64_t most = run ? 255 : 8;
  if (count < 2 || count > most) {
    return absl::DataLossError(absl::StrCat("a TFRecord record ", run ? "run" : "group",
                                            " of thread ", tid, " claims ", count,
                                            " records (2 to ", most, " expected)"));
  }
  return count;
}

// Replaces each OP_TFRECORD_RECORDS and OP_TFRECORD_RUN event by the
// OP_TFRECORD_RECORD events it stands for (trace.proto), which share its
// seq.
absl::Status ExpandRecordGroups(EventBatch* batch) {
  std::vector<Event> out;
  out.reserve(batch->events.size() * 2);
  uint64_t expanded = 0;
  for (const Event& e : batch->events) {
    if (e.op != OP_TFRECORD_RECORDS && e.op != OP_TFRECORD_RUN) {
      out.push_back(e);
      continue;
    }
    absl::StatusOr<uint64_t> count = CompactCount(e, batch->tid);
    if (!count.ok()) return count.status();
    expanded += *count;
    if (expanded > kMaxExpandedRecords) {
      return absl::DataLossError(absl::StrCat("an event chunk of thread ", batch->tid,
                                              " stands for more than ", kMaxExpandedRecords,
                                              " TFRecord records"));
    }
    bool run = e.op == OP_TFRECORD_RUN;
    bool index_known = (e.flags & FLAG_TFRECORD_INDEX_UNKNOWN) == 0;
    uint64_t first_index = run ? e.aux : e.aux & ((uint64_t{1} << 56) - 1);
    uint64_t lengths[2] = {e.requested, static_cast<uint64_t>(e.result)};
    uint64_t offset = static_cast<uint64_t>(e.offset);  // wraps, as in Assemble
    for (uint64_t k = 0; k < *count; ++k) {
      Event r = e;
      r.op = OP_TFRECORD_RECORD;
      r.offset = static_cast<int64_t>(offset);
      r.requested = run ? e.requested : (lengths[k / 4] >> (16 * (k % 4))) & 0xffff;
      r.result = 1;
      r.aux = index_known ? first_index + k : 0;
      out.push_back(r);
      offset += 16 + r.requested;
    }
  }
  batch->events = std::move(out);
  return absl::OkStatus();
}

// What a chunk says besides its columns.
struct ChunkHeader {
  uint32_t tid = 0;
  uint64_t base_time_ns = 0;
  uint32_t time_unit_ns = 0;
  uint64_t first_seq = 0;
  uint64_t dropped_before = 0;
};

absl::Status ColumnLengthError(uint32_t tid, int n) {
  return absl::DataLossError(absl::StrCat(
      "event chunk of thread ", tid, " has columns of different lengths (", n, " ops)"));
}

// One event's column values as stored (signed columns as the bits of the
// int64, zigzag already undone).
struct ColumnValues {
  uint64_t op, gap, duration, file, offset_delta, requested, result, error, flags, parent, aux;
};

// Undoes the deltas of `n` events whose column values `next(i)` gives, in
// order.
template <typename Next>
absl::Status Assemble(const ChunkHeader& h, int n, Next next, EventBatch* batch) {
  const int64_t unit = h.time_unit_ns == 0 ? 1 : h.time_unit_ns;
  batch->tid = h.tid;
  batch->dropped_before = h.dropped_before;
  batch->events.resize(n);
  // Deltas add up modulo 2^64, as two's complement: a damaged chunk may
  // hold any values, and signed overflow would be undefined.
  uint64_t end_units = static_cast<uint64_t>(static_cast<int64_t>(h.base_time_ns) / unit);
  uint64_t offset = 0;
  bool groups = false;
  // Times past kMaxMonotonicNs, or ending before they start, are damage:
  // the analysis adds wall-clock offsets to them.
  const uint64_t max_units = static_cast<uint64_t>(kMaxMonotonicNs) / static_cast<uint64_t>(unit);
  bool times_ok = true;
  Event* events = batch->events.data();
  for (int i = 0; i < n; ++i) {
    const ColumnValues v = next(i);
    Event& e = events[i];
    uint64_t start_units = end_units + v.gap;
    end_units = start_units + v.duration;
    e.seq = h.first_seq + static_cast<uint64_t>(i);
    // (start <= end <= max: both in range.)
    times_ok &= (end_units <= max_units) & (start_units <= end_units);
    e.start_ns = static_cast<int64_t>(start_units * static_cast<uint64_t>(unit));
    e.end_ns = static_cast<int64_t>(end_units * static_cast<uint64_t>(unit));
    uint32_t o = static_cast<uint32_t>(v.op);
    const uint8_t op_class = o < kOpClasses.size() ? kOpClasses[o] : uint8_t{kUnknownOp};
    e.op = op_class != kUnknownOp ? static_cast<Op>(o) : OP_UNSPECIFIED;
    groups |= op_class == kCompactOp;
    e.file = static_cast<uint32_t>(v.file);
    e.flags = static_cast<uint32_t>(v.flags);
    bool has_offset = (e.flags & FLAG_HAS_OFFSET) != 0;
    offset += has_offset ? v.offset_delta : 0;
    e.offset = has_offset ? static_cast<int64_t>(offset) : 0;
    e.requested = v.requested;
    e.result = static_cast<int64_t>(v.result);
    e.error = static_cast<uint32_t>(v.error);
    e.parent = v.parent;
    e.aux = v.aux;
    e.tid = h.tid;
  }
  if (!times_ok) {
    batch->events.clear();
    return absl::DataLossError(absl::StrCat(
        "event chunk of thread ", h.tid, " has event times out of range"));
  }
  return groups ? ExpandRecordGroups(batch) : absl::OkStatus();
}

// Decodes `n` events from padded columns (ChunkDecoder::Decode); nullopt
// if a varint takes more than 10 bytes. With `kNarrow`, the op, error,
// flags and parent columns hold one byte per event (an absent column's
// zeros, small op numbers and flags, no error), each value that byte: they
// are read without finding each varint's end.
template <typename Packer, bool kNarrow>
std::optional<absl::Status> DecodeColumns(const ChunkHeader& h, int n,
                                          const uint8_t* const (&column)[11], EventBatch* batch) {
  bool ok = true;
  // Each column's place in a local of its own, which the compiler can keep
  // in a register; as elements of `column` they went to memory and back at
  // every varint.
  const uint8_t* op = column[0];
  const uint8_t* gap = column[1];
  const uint8_t* duration = column[2];
  const uint8_t* file = column[3];
  const uint8_t* offset_delta = column[4];
  const uint8_t* requested = column[5];
  const uint8_t* result = column[6];
  const uint8_t* error = column[7];
  const uint8_t* flags = column[8];
  const uint8_t* parent = column[9];
  const uint8_t* aux = column[10];
  absl::Status status = Assemble(
      h, n,
      [&](int i) {
        ColumnValues v;
        v.op = kNarrow ? op[i] : wire::NextPaddedVarint<Packer>(op, ok);
        v.gap = static_cast<uint64_t>(wire::UnZigZag(wire::NextPaddedVarint<Packer>(gap, ok)));
        v.duration = wire::NextPaddedVarint<Packer>(duration, ok);
        v.file = wire::NextPaddedVarint<Packer>(file, ok);
        v.offset_delta =
            static_cast<uint64_t>(wire::UnZigZag(wire::NextPaddedVarint<Packer>(offset_delta, ok)));
        v.requested = wire::NextPaddedVarint<Packer>(requested, ok);
        v.result = static_cast<uint64_t>(wire::UnZigZag(wire::NextPaddedVarint<Packer>(result, ok)));
        v.error = kNarrow ? error[i] : wire::NextPaddedVarint<Packer>(error, ok);
        v.flags = kNarrow ? flags[i] : wire::NextPaddedVarint<Packer>(flags, ok);
        v.parent = kNarrow ? parent[i] : wire::NextPaddedVarint<Packer>(parent, ok);
        v.aux = wire::NextPaddedVarint<Packer>(aux, ok);
        return v;
      },
      batch);
  if (!ok) return std::nullopt;
  return status;
}

#if defined(__x86_64__)
// DecodeColumns with PEXT, compiled for the processors that have it (BMI2,
// and BMI1 with it: every one that has BMI2 has BMI1), so that finding each
// varint's end and length takes their one-instruction forms (ANDN, BLSMSK,
// TZCNT) too: a sixth of the decoder's instructions.
template <bool kNarrow>
__attribute__((target("bmi,bmi2"))) std::optional<absl::Status> DecodeColumnsWithPext(
    const ChunkHeader& h, int n, const uint8_t* const (&column)[11], EventBatch* batch) {
  return DecodeColumns<wire::PextPacker, kNarrow>(h, n, column, batch);
}
#endif

// DecodeColumns with the packer this processor runs fastest, narrow or not.
template <bool kNarrow>
std::optional<absl::Status> DecodeColumnsWithFastestPacker(const ChunkHeader& h, int n,
                                                           const uint8_t* const (&column)[11],
                                                           EventBatch* batch) {
#if defined(__x86_64__)
  static const bool pext = wire::PextIsFast();
  if (pext) return DecodeColumnsWithPext<kNarrow>(h, n, column, batch);
#endif
  return DecodeColumns<wire::ShiftPacker, kNarrow>(h, n, column, batch);
}

}  // namespace

absl::Status DecodeChunk(const EventChunk& chunk, EventBatch* batch) {
  const int n = chunk.op_size();
  if (!SizeOk(chunk.start_gap(), n) || !SizeOk(chunk.duration(), n) ||
      !SizeOk(chunk.file(), n) || !SizeOk(chunk.offset_delta(), n) ||
      !SizeOk(chunk.requested(), n) || !SizeOk(chunk.result(), n) ||
      !SizeOk(chunk.error(), n) || !SizeOk(chunk.flags(), n) || !SizeOk(chunk.parent(), n) ||
      !SizeOk(chunk.aux(), n)) {
    return ColumnLengthError(chunk.tid(), n);
  }
  ChunkHeader h{chunk.tid(), chunk.base_time_ns(), chunk.time_unit_ns(), chunk.first_seq(),
                chunk.dropped_before()};
  const uint32_t* op = chunk.op().data();
  const int64_t* gap = Values(chunk.start_gap(), n);
  const uint64_t* duration = Values(chunk.duration(), n);
  const uint32_t* file = Values(chunk.file(), n);
  const int64_t* offset_delta = Values(chunk.offset_delta(), n);
  const uint64_t* requested = Values(chunk.requested(), n);
  const int64_t* result = Values(chunk.result(), n);
  const uint32_t* error = Values(chunk.error(), n);
  const uint32_t* flags = Values(chunk.flags(), n);
  const uint64_t* parent = Values(chunk.parent(), n);
  const uint64_t* aux = Values(chunk.aux(), n);
  return Assemble(
      h, n,
      [&](int i) {
        return ColumnValues{op[i],
                            static_cast<uint64_t>(gap[i]),
                            duration[i],
                            file[i],
                            static_cast<uint64_t>(offset_delta[i]),
                            requested[i],
                            static_cast<uint64_t>(result[i]),
                            error[i],
                            flags[i],
                            parent[i],
                            aux[i]};
      },
      batch);
}

std::optional<absl::Status> ChunkDecoder::Decode(const uint8_t* data, size_t size,
                                                 EventBatch* batch) {
  // Field numbers of the columns: 10 + index.
  constexpr int kFirstColumn = 10;
  struct Span {
    const uint8_t* data = nullptr;
    size_t size = 0;
    bool seen = false;
  };
  std::array<Span, kColumns> spans;
  ChunkHeader h;
  const uint8_t* p = data;
  const uint8_t* end = data + size;
  while (p < end) {
    uint64_t tag;
    if (!wire::ReadVarint(&p, end, &tag) || tag > UINT32_MAX) return std::nullopt;
    const uint64_t field = tag >> 3;
    const int wire = static_cast<int>(tag & 7);
    if (field == 0) return std::nullopt;
    if (field >= 1 && field <= 5) {
      uint64_t v;
      if (wire != 0 || !wire::ReadVarint(&p, end, &v)) return std::nullopt;
      switch (field) {
        case 1: h.tid = static_cast<uint32_t>(v); break;
        case 2: h.base_time_ns = v; break;
        case 3: h.time_unit_ns = static_cast<uint32_t>(v); break;
        case 4: h.first_seq = v; break;
        case 5: h.dropped_before = v; break;
      }
      continue;
    }
    if (field >= kFirstColumn && field < kFirstColumn + kColumns) {
      uint64_t length;
      Span& span = spans[field - kFirstColumn];
      if (wire != 2 || span.seen || !wire::ReadVarint(&p, end, &length) ||
          length > static_cast<uint64_t>(end - p)) {
        return std::nullopt;  // unpacked, given twice, or cut
      }
      span = Span{p, static_cast<size_t>(length), true};
      p += length;
      continue;
    }
    // An unknown field: skipped, as libprotobuf keeps it aside.
    uint64_t length = 0;
    switch (wire) {
      case 0:
        if (!wire::ReadVarint(&p, end, &length)) return std::nullopt;
        length = 0;
        break;
      case 1: length = 8; break;
      case 2:
        if (!wire::ReadVarint(&p, end, &length)) return std::nullopt;
        break;
      case 5: length = 4; break;
      default: return std::nullopt;  // groups and invalid wire types
    }
    if (length > static_cast<uint64_t>(end - p)) return std::nullopt;
    p += length;
  }
  // Each column must hold one varint per op, or none; anything else (a
  // cut varint, columns of different lengths) libprotobuf judges. A column
  // of as many bytes as varints holds one byte per event.
  int64_t n = 0;
  bool one_byte[kColumns];
  for (int c = 0; c < kColumns; ++c) {
    int64_t count = wire::CountVarints(spans[c].data, spans[c].size);
    if (count < 0 || (c > 0 && count != 0 && count != n)) return std::nullopt;
    if (c == 0) n = count;
    one_byte[c] = count == static_cast<int64_t>(spans[c].size);  // absent: n zeros below
  }
  if (n > INT32_MAX) return std::nullopt;
  // Each column where an 8-byte load at any of its varints stays inside the
  // message: read in place (a varint ends inside its column, whatever bytes
  // follow it). The others (the message's last field, absent columns) side
  // by side, each followed by zeros; an absent column is `n` zeros, one-byte
  // varints of 0.
  constexpr size_t kPadding = 16;
  auto in_place = [&](const Span& span) {
    return span.size > 0 && static_cast<size_t>(end - (span.data + span.size)) >= kPadding;
  };
  size_t total = 0;
  for (const Span& span : spans) {
    if (!in_place(span)) total += (span.size > 0 ? span.size : n) + kPadding;
  }
  if (scratch_.size() < total) scratch_.resize(total);
  const uint8_t* column[kColumns];
  uint8_t* at = scratch_.data();
  for (int c = 0; c < kColumns; ++c) {
    if (in_place(spans[c])) {
      column[c] = spans[c].data;
      continue;
    }
    column[c] = at;
    if (spans[c].size > 0) {
      std::memcpy(at, spans[c].data, spans[c].size);
      at += spans[c].size;
    } else {
      std::memset(at, 0, n);
      at += n;
    }
    std::memset(at, 0, kPadding);
    at += kPadding;
  }
  // One varint of every column per event: the columns' reads do not wait
  // for one another, so they overlap.
  if (one_byte[0] && one_byte[7] && one_byte[8] && one_byte[9]) {
    return DecodeColumnsWithFastestPacker<true>(h, static_cast<int>(n), column, batch);
  }
  return DecodeColumnsWithFastestPacker<false>(h, static_cast<int>(n), column, batch);
}

Layer LayerOf(Op op) {
  int v = static_cast<int>(op);
  if (v == OP_MAPPED_READ || v == OP_MREMAP) return Layer::kMapped;
  if (v >= OP_URING_SETUP && v < 100) return Layer::kUring;
  if (v >= OP_POLL && v <= OP_COND_WAIT) return Layer::kWait;
  if (v >= 1 && v < 100) return Layer::kPosix;
  if (v >= 100 && v < 150) return Layer::kStdio;
  if (v >= 150 && v < 196) return Layer::kHdf5;
  if (v >= 196 && v < 220) return Layer::kTfRecord;
  if (v >= 220 && v < 270) return Layer::kCuda;
  if (v >= 270 && v < 300) return Layer::kGds;
  if (v >= 300 && v < 320) return Layer::kMarker;
  return Layer::kOther;
}

const char* LayerName(Layer layer) {
  switch (layer) {
    case Layer::kPosix: return "POSIX";
    case Layer::kStdio: return "STDIO";
    case Layer::kHdf5: return "HDF5";
    case Layer::kTfRecord: return "TFRecord";
    case Layer::kCuda: return "CUDA";
    case Layer::kGds: return "GDS";
    case Layer::kMarker: return "MARK";
    case Layer::kMapped: return "MAPPED";
    case Layer::kUring: return "URING";
    case Layer::kWait: return "WAIT";
    case Layer::kOther: return "OTHER";
  }
  return "OTHER";
}

std::string OpName(Op op) {
  switch (op) {
    case OP_H5F_CREATE: return "H5Fcreate";
    case OP_H5F_OPEN: return "H5Fopen";
    case OP_H5F_FLUSH: return "H5Fflush";
    case OP_H5F_CLOSE: return "H5Fclose";
    case OP_H5D_CREATE: return "H5Dcreate";
    case OP_H5D_OPEN: return "H5Dopen";
    case OP_H5O_OPEN: return "H5Oopen";
    case OP_H5O_CLOSE: return "H5Oclose";
    case OP_H5D_CLOSE: return "H5Dclose";
    case OP_H5D_READ: return "H5Dread";
    case OP_H5D_WRITE: return "H5Dwrite";
    case OP_H5D_READ_CHUNK: return "H5Dread_chunk";
    case OP_H5D_WRITE_CHUNK: return "H5Dwrite_chunk";
    case OP_CUDA_MEMCPY_HTOD: return "cudaMemcpyHtoD";
    case OP_CUDA_MEMCPY_DTOH: return "cudaMemcpyDtoH";
    case OP_CUDA_MEMCPY_DTOD: return "cudaMemcpyDtoD";
    case OP_CUDA_MEMCPY_HTOH: return "cudaMemcpyHtoH";
    case OP_CUDA_MEMCPY_PEER: return "cudaMemcpyPeer";
    case OP_CUDA_MEMCPY_DEFAULT: return "cudaMemcpy";
    case OP_CUDA_HOST_ALLOC: return "cudaHostAlloc";
    case OP_CUDA_HOST_FREE: return "cudaFreeHost";
    case OP_CUDA_HOST_REGISTER: return "cudaHostRegister";
    case OP_CUDA_HOST_UNREGISTER: return "cudaHostUnregister";
    case OP_CUPTI_MEMCPY: return "gpuMemcpy";
    case OP_CUPTI_KERNEL: return "gpuKernel";
    case OP_CUFILE_READ: return "cuFileRead";
    case OP_CUFILE_WRITE: return "cuFileWrite";
    case OP_CUFILE_HANDLE_REGISTER: return "cuFileRegister";
    case OP_CUFILE_HANDLE_DEREGISTER: return "cuFileDeregister";
    case OP_TFRECORD_RECORD: return "record";
    default: break;
  }
  std::string name = Op_Name(op);
  if (name.empty()) return absl::StrCat("op", static_cast<int>(op));
  if (name.rfind("OP_", 0) == 0) name = name.substr(3);
  return absl::AsciiStrToLower(name);
}

Transfer TransferOf(Op op) {
  switch (op) {
    case OP_READ:
    case OP_RECV:
    case OP_PREAD:
    case OP_READV:
    case OP_PREADV:
    case OP_PREADV2:
    case OP_COPY_FILE_RANGE_IN:
    case OP_SENDFILE_IN:
    case OP_FREAD:
    case OP_FGETS:
    case OP_FGETC:
    case OP_CUFILE_READ:
    case OP_MAPPED_READ:
    case OP_URING_READ:
      return Transfer::kRead;
    case OP_WRITE:
    case OP_PWRITE:
    case OP_WRITEV:
    case OP_PWRITEV:
    case OP_PWRITEV2:
    case OP_COPY_FILE_RANGE_OUT:
    case OP_SENDFILE_OUT:
    case OP_FWRITE:
    case OP_FPUTC:
    case OP_FPUTS:
    case OP_FPRINTF:
    case OP_CUFILE_WRITE:
    case OP_URING_WRITE:
      return Transfer::kWrite;
    default:
      return Transfer::kNone;
  }
}

bool IsOpen(Op op) {
  switch (op) {
    case OP_OPEN:
    case OP_OPENAT:
    case OP_CREAT:
    case OP_MKSTEMP:
    case OP_FOPEN:
    case OP_FREOPEN:
    case OP_URING_OPENAT:
      return true;
    default:
      return false;
  }
}

bool IsMetadata(Op op) {
  switch (op) {
    case OP_OPEN:
    case OP_OPENAT:
    case OP_CREAT:
    case OP_MKSTEMP:
    case OP_CLOSE:
    case OP_LSEEK:
    case OP_STAT:
    case OP_LSTAT:
    case OP_FSTAT:
    case OP_FSTATAT:
    case OP_STATX:
    case OP_OPENDIR:
    case OP_READDIR:
    case OP_CLOSEDIR:
    case OP_UNLINK:
    case OP_RENAME:
    case OP_MKDIR:
    case OP_RMDIR:
    case OP_FOPEN:
    case OP_FDOPEN:
    case OP_FREOPEN:
    case OP_FCLOSE:
    case OP_FSEEK:
    case OP_FTELL:
    case OP_URING_OPENAT:
    case OP_URING_CLOSE:
    case OP_URING_STATX:
      return true;
    default:
      return false;
  }
}

namespace internal {

const std::array<OpTraits, kOpTableSize> kOpTraits = [] {
  std::array<OpTraits, kOpTableSize> traits;
  for (int i = 0; i < kOpTableSize; ++i) {
    Op op = static_cast<Op>(i);
    traits[i] = OpTraits{LayerOf(op), TransferOf(op), IsOpen(op), IsMetadata(op)};
  }
  return traits;
}();

}  // namespace internal

}  // namespace iotap::analyzer
