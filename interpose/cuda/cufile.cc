// GPUDirect Storage (cuFile): reads and writes between files and GPU memory,
// recorded as I/O events on the file (see OP_CUFILE_READ in trace.proto).
//
// cuFile names files by handles that cuFileHandleRegister makes from a
// descriptor; the shim maps each handle to the descriptor's file when it is
// registered, in a fixed, lock-free hash table (registration is rare; every
// read looks its handle up). The API's declarations are in cufile_api.h.
//
// In compatibility mode libcufile moves the data with POSIX calls and cuMemcpy
// itself; the POSIX calls are recorded as well (they show the fallback), the
// copies are not (they happen inside a traced CUDA call).

#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {
namespace {

IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileHandleRegister);
IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileHandleDeregister);
IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileRead);
IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileWrite);
IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileReadAsync);
IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileWriteAsync);
IOTAP_CUDA_REAL(CudaLibrary::kCufile, cuFileBatchIOSubmit);

// Handle -> file, open addressing with linear probing. A freed slot becomes
// a tombstone so that probes for other handles go on past it.
constexpr uint32_t kHandleSlots = 1024;  // a power of two
constexpr uintptr_t kEmpty = 0;
constexpr uintptr_t kTombstone = 1;
struct HandleSlot {
  std::atomic<uintptr_t> handle{kEmpty};
  std::atomic<uint32_t> file{0};
};
constinit HandleSlot g_handles[kHandleSlots];

uint32_t Home(uintptr_t handle) {
  return static_cast<uint32_t>(((handle >> 4) * 0x9E3779B97F4A7C15ull) >> 54) & (kHandleSlots - 1);
}

void MapHandle(CUfileHandle_t fh, uint32_t file) {
  uintptr_t h = reinterpret_cast<uintptr_t>(fh);
  if (h <= kTombstone) return;
  for (uint32_t i = 0, slot = Home(h); i < kHandleSlots;
       ++i, slot = (slot + 1) & (kHandleSlots - 1)) {
    uintptr_t seen = g_handles[slot].handle.load(std::memory_order_acquire);
    if (seen == h) {
      g_handles[slot].file.store(file, std::memory_order_release);
      return;
    }
    if ((seen == kEmpty || seen == kTombstone) &&
        g_handles[slot].handle.compare_exchange_strong(seen, h, std::memory_order_acq_rel)) {
      g_handles[slot].file.store(file, std::memory_order_release);
      return;
    }
  }
  // Full: the handle's events will have no file.
}

HandleSlot* FindHandle(CUfileHandle_t fh) {
  uintptr_t h = reinterpret_cast<uintptr_t>(fh);
  if (h <= kTombstone) return nullptr;
  for (uint32_t i = 0, slot = Home(h); i < kHandleSlots;
       ++i, slot = (slot + 1) & (kHandleSlots - 1)) {
    uintptr_t seen = g_handles[slot].handle.load(std::memory_order_acquire);
    if (seen == h) return &g_handles[slot];
    if (seen == kEmpty) return nullptr;
  }
  return nullptr;
}

uint32_t FileOfHandle(CUfileHandle_t fh) {
  HandleSlot* s = FindHandle(fh);
  return s == nullptr ? 0 : s->file.load(std::memory_order_acquire);
}

// One transfer of `bytes` at `offset` of the handle's file.
RawEvent* FillTransfer(RawEvent* e, CUfileHandle_t fh, int64_t offset, uint64_t bytes,
                       int64_t result, uint16_t flags, uint64_t aux) {
  if (e == nullptr) return nullptr;
  e->file = FileOfHandle(fh);
  e->offset = offset;
  e->flags = flags | kFlagHasOffset;
  e->requested = bytes;
  e->result = result;
  e->aux = aux;
  return e;
}

Op OpOf(CUfileOpcode_t opcode) { return opcode == CUFILE_WRITE ? kOpCufileWrite : kOpCufileRead; }

// cuFileReadAsync and cuFileWriteAsync take their size and offsets by
// pointer; the event holds what they point to when the call is made.
void RecordAsync(CudaCall& call, Op op, CUfileHandle_t fh, const size_t* size_p,
                 const off_t* offset_p, CUstream stream, CUfileError_t r) {
  FillTransfer(call.Finish(op), fh, offset_p != nullptr ? *offset_p : 0,
               size_p != nullptr ? *size_p : 0, r.err, kFlagCudaAsync,
               reinterpret_cast<uintptr_t>(stream));
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT CUfileError_t cuFileHandleRegister(CUfileHandle_t* fh, CUfileDescr_t* descr) {
  CudaCall call;
  CUfileError_t r = real_cuFileHandleRegister.Get(kViaExport)(fh, descr);
  RawEvent* e = call.Finish(kOpCufileHandleRegister);
  if (call.active()) {  // busy now: descriptors may be looked up
    int fd =
        descr != nullptr && descr->type == CU_FILE_HANDLE_TYPE_OPAQUE_FD ? descr->handle.fd : -1;
    uint32_t file = fd >= 0 ? FileOf(fd) : 0;
    if (r.err == CU_FILE_SUCCESS && fh != nullptr) MapHandle(*fh, file);
    if (e != nullptr) {
      e->file = file;
      e->aux = static_cast<uint64_t>(static_cast<int64_t>(fd));
      e->result = r.err;
    }
  }
  return r;
}

IOTAP_EXPORT void cuFileHandleDeregister(CUfileHandle_t fh) {
  CudaCall call;
  real_cuFileHandleDeregister.Get(kViaExport)(fh);
  if (RawEvent* e = call.Finish(kOpCufileHandleDeregister)) e->file = FileOfHandle(fh);
  if (HandleSlot* s = call.active() ? FindHandle(fh) : nullptr) {
    s->handle.store(kTombstone, std::memory_order_release);
  }
}

IOTAP_EXPORT ssize_t cuFileRead(CUfileHandle_t fh, void* buf, size_t size, off_t file_offset,
                                off_t buf_offset) {
  CudaCall call;
  ssize_t r = real_cuFileRead.Get(kViaExport)(fh, buf, size, file_offset, buf_offset);
  FillTransfer(call.Finish(kOpCufileRead), fh, file_offset, size, r, 0, 0);
  return r;
}

IOTAP_EXPORT ssize_t cuFileWrite(CUfileHandle_t fh, const void* buf, size_t size, off_t file_offset,
                                 off_t buf_offset) {
  CudaCall call;
  ssize_t r = real_cuFileWrite.Get(kViaExport)(fh, buf, size, file_offset, buf_offset);
  FillTransfer(call.Finish(kOpCufileWrite), fh, file_offset, size, r, 0, 0);
  return r;
}

IOTAP_EXPORT CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void* buf, size_t* size_p,
                                           off_t* file_offset_p, off_t* buf_offset_p,
                                           ssize_t* bytes_read_p, CUstream stream) {
  CudaCall call;
  CUfileError_t r = real_cuFileReadAsync.Get(kViaExport)(fh, buf, size_p, file_offset_p,
                                                         buf_offset_p, bytes_read_p, stream);
  RecordAsync(call, kOpCufileRead, fh, size_p, file_offset_p, stream, r);
  return r;
}

IOTAP_EXPORT CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void* buf, size_t* size_p,
                                            off_t* file_offset_p, off_t* buf_offset_p,
                                            ssize_t* bytes_written_p, CUstream stream) {
  CudaCall call;
  CUfileError_t r = real_cuFileWriteAsync.Get(kViaExport)(fh, buf, size_p, file_offset_p,
                                                          buf_offset_p, bytes_written_p, stream);
  RecordAsync(call, kOpCufileWrite, fh, size_p, file_offset_p, stream, r);
  return r;
}

IOTAP_EXPORT CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch, unsigned nr,
                                               CUfileIOParams_t* io, unsigned int flags) {
  CudaCall call;
  CUfileError_t r = real_cuFileBatchIOSubmit.Get(kViaExport)(batch, nr, io, flags);
  if (io == nullptr || nr == 0) return r;
  uint64_t aux = reinterpret_cast<uintptr_t>(batch);
  constexpr uint16_t kBatch = kFlagCudaAsync | kFlagCufileBatch;
  RawEvent* e = call.Finish(OpOf(io[0].opcode));
  for (unsigned i = 0; i < nr && e != nullptr; ++i) {
    if (i > 0) e = call.Another(OpOf(io[i].opcode));
    FillTransfer(e, io[i].fh, io[i].u.batch.file_offset, io[i].u.batch.size, r.err, kBatch, aux);
  }
  return r;
}

namespace iotap::interpose {
namespace {

constinit const CudaEntry kEntries[] = {
    IOTAP_CUDA_ENTRY(cuFileHandleRegister), IOTAP_CUDA_ENTRY(cuFileHandleDeregister),
    IOTAP_CUDA_ENTRY(cuFileRead),           IOTAP_CUDA_ENTRY(cuFileWrite),
    IOTAP_CUDA_ENTRY(cuFileReadAsync),      IOTAP_CUDA_ENTRY(cuFileWriteAsync),
    IOTAP_CUDA_ENTRY(cuFileBatchIOSubmit),
};

}  // namespace

constinit const CudaEntryTable kCufileTable = {kEntries, sizeof(kEntries) / sizeof(kEntries[0]),
                                               CudaLibrary::kCufile, false};

}  // namespace iotap::interpose
