#include "analyzer/event.h"

#include <array>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

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

// Which op numbers the schema defines, looked up without a call per event.
const std::array<bool, 512> kKnownOps = [] {
  std::array<bool, 512> known{};
  for (size_t i = 0; i < known.size(); ++i) known[i] = Op_IsValid(static_cast<int>(i));
  return known;
}();
// Replaces each OP_TFRECORD_RECORDS event by the OP_TFRECORD_RECORD events it
// stands for (trace.proto), which share its seq.
absl::Status ExpandRecordGroups(EventBatch* batch) {
  std::vector<Event> out;
  out.reserve(batch->events.size() * 2);
  for (const Event& e : batch->events) {
    if (e.op != OP_TFRECORD_RECORDS) {
      out.push_back(e);
      continue;
    }
    uint64_t count = e.aux >> 56;
    if (count < 2 || count > 8) {
      return absl::DataLossError(absl::StrCat("a TFRecord record group of thread ", batch->tid,
                                              " claims ", count, " records (2 to 8 expected)"));
    }
    bool index_known = (e.flags & FLAG_TFRECORD_INDEX_UNKNOWN) == 0;
    uint64_t lengths[2] = {e.requested, static_cast<uint64_t>(e.result)};
    int64_t offset = e.offset;
    for (uint64_t k = 0; k < count; ++k) {
      Event r = e;
      r.op = OP_TFRECORD_RECORD;
      r.offset = offset;
      r.requested = (lengths[k / 4] >> (16 * (k % 4))) & 0xffff;
      r.result = 1;
      r.aux = index_known ? (e.aux & ((uint64_t{1} << 56) - 1)) + k : 0;
      out.push_back(r);
      offset += 16 + static_cast<int64_t>(r.requested);
    }
  }
  batch->events = std::move(out);
  return absl::OkStatus();
}

}  // namespace

absl::Status DecodeChunk(const EventChunk& chunk, EventBatch* batch) {
  const int n = chunk.op_size();
  if (!SizeOk(chunk.start_gap(), n) || !SizeOk(chunk.duration(), n) ||
      !SizeOk(chunk.file(), n) || !SizeOk(chunk.offset_delta(), n) ||
      !SizeOk(chunk.requested(), n) || !SizeOk(chunk.result(), n) ||
      !SizeOk(chunk.error(), n) || !SizeOk(chunk.flags(), n) || !SizeOk(chunk.parent(), n) ||
      !SizeOk(chunk.aux(), n)) {
    return absl::DataLossError(
        absl::StrCat("event chunk of thread ", chunk.tid(), " has columns of different lengths (",
                     n, " ops)"));
  }
  const int64_t unit = chunk.time_unit_ns() == 0 ? 1 : chunk.time_unit_ns();
  batch->tid = chunk.tid();
  batch->dropped_before = chunk.dropped_before();
  batch->events.resize(n);
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
  int64_t end_units = static_cast<int64_t>(chunk.base_time_ns()) / unit;
  int64_t offset = 0;
  for (int i = 0; i < n; ++i) {
    Event& e = batch->events[i];
    int64_t start_units = end_units + gap[i];
    end_units = start_units + static_cast<int64_t>(duration[i]);
    e.seq = chunk.first_seq() + static_cast<uint64_t>(i);
    e.start_ns = start_units * unit;
    e.end_ns = end_units * unit;
    e.op = op[i] < kKnownOps.size() && kKnownOps[op[i]] ? static_cast<Op>(op[i]) : OP_UNSPECIFIED;
    e.file = file[i];
    e.flags = flags[i];
    bool has_offset = (e.flags & FLAG_HAS_OFFSET) != 0;
    offset += has_offset ? offset_delta[i] : 0;
    e.offset = has_offset ? offset : 0;
    e.requested = requested[i];
    e.result = result[i];
    e.error = error[i];
    e.parent = parent[i];
    e.aux = aux[i];
    e.tid = chunk.tid();
  }
  for (const Event& e : batch->events) {
    if (e.op == OP_TFRECORD_RECORDS) return ExpandRecordGroups(batch);
  }
  return absl::OkStatus();
}

Layer LayerOf(Op op) {
  int v = static_cast<int>(op);
  if (v >= 1 && v < 100) return Layer::kPosix;
  if (v >= 100 && v < 150) return Layer::kStdio;
  if (v >= 150 && v < 200) return Layer::kHdf5;
  if (v >= 200 && v < 220) return Layer::kTfRecord;
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
      return Transfer::kWrite;
    default:
      return Transfer::kNone;
  }
}

uint64_t BytesMoved(const Event& e) {
  if (TransferOf(e.op) == Transfer::kNone) return 0;
  // A queued cuFile request (async or batch) holds its submission's status:
  // what it asked for is what it moves once queued.
  if (LayerOf(e.op) == Layer::kGds && (e.flags & FLAG_CUDA_ASYNC)) {
    return e.result == 0 ? e.requested : 0;
  }
  return e.result <= 0 ? 0 : static_cast<uint64_t>(e.result);
}

bool IsOpen(Op op) {
  switch (op) {
    case OP_OPEN:
    case OP_OPENAT:
    case OP_CREAT:
    case OP_MKSTEMP:
    case OP_FOPEN:
    case OP_FREOPEN:
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
      return true;
    default:
      return false;
  }
}

}  // namespace iotap::analyzer
