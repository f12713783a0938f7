// Page-locked host memory, runtime and driver API: the calls that make host
// memory pinned or pageable again. Each feeds the table of pinned ranges
// (pinned_ranges.h) that classifies the host side of every copy, and is
// recorded as an event. The runtime's calls reach the driver's inside them;
// only the outer one counts (CudaCall).
//
// A range is added after the call succeeded and removed before the call that
// releases it (put back if that fails), so a copy from memory that the
// allocator may already hand out again never counts as pinned.

#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {
namespace {

IOTAP_CUDA_REAL(CudaLibrary::kRuntime, cudaHostAlloc);
IOTAP_CUDA_REAL(CudaLibrary::kRuntime, cudaMallocHost);
IOTAP_CUDA_REAL(CudaLibrary::kRuntime, cudaHostRegister);
IOTAP_CUDA_REAL(CudaLibrary::kRuntime, cudaHostUnregister);
IOTAP_CUDA_REAL(CudaLibrary::kRuntime, cudaFreeHost);
IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuMemHostAlloc);
IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuMemAllocHost);
IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuMemHostRegister);
IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuMemHostUnregister);
IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuMemFreeHost);

// After an allocation or registration of `bytes` at `p` (null if it failed).
void RecordPinned(CudaCall& call, Op op, void* p, uint64_t bytes, uint64_t aux, uint16_t flags,
                  int64_t result) {
  if (!call.active()) return;
  if (result == 0 && p != nullptr) PinnedAdd(reinterpret_cast<uintptr_t>(p), bytes);
  RawEvent* e = call.Finish(op);
  if (e == nullptr) return;
  e->flags = flags;
  if (result == 0 && p != nullptr) {
    e->offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
    e->flags |= kFlagHasOffset;
  }
  e->requested = bytes;
  e->aux = aux;
  e->result = result;
}

// Before a free or unregistration: takes the range out; returns its size.
uint64_t BeginRelease(CudaCall& call, void* p) {
  return call.active() ? PinnedRemove(reinterpret_cast<uintptr_t>(p)) : 0;
}

void EndRelease(CudaCall& call, Op op, void* p, uint64_t bytes, uint16_t flags, int64_t result) {
  if (!call.active()) return;
  if (result != 0 && bytes != 0) PinnedAdd(reinterpret_cast<uintptr_t>(p), bytes);
  RawEvent* e = call.Finish(op);
  if (e == nullptr) return;
  e->flags = flags | kFlagHasOffset;
  e->offset = static_cast<int64_t>(reinterpret_cast<uintptr_t>(p));
  e->requested = bytes;
  e->result = result;
}

template <CudaVia kVia>
CUresult MemHostAlloc(void** pp, size_t bytes, unsigned int flags) {
  CudaCall call;
  CUresult r = real_cuMemHostAlloc.Get(kVia)(pp, bytes, flags);
  RecordPinned(call, kOpCudaHostAlloc, r == CUDA_SUCCESS ? *pp : nullptr, bytes, flags,
               kFlagCudaDriverApi, r);
  return r;
}

template <CudaVia kVia>
CUresult MemAllocHost(void** pp, size_t bytes) {
  CudaCall call;
  CUresult r = real_cuMemAllocHost.Get(kVia)(pp, bytes);
  RecordPinned(call, kOpCudaHostAlloc, r == CUDA_SUCCESS ? *pp : nullptr, bytes, 0,
               kFlagCudaDriverApi, r);
  return r;
}

template <CudaVia kVia>
CUresult MemHostRegister(void* p, size_t bytes, unsigned int flags) {
  CudaCall call;
  CUresult r = real_cuMemHostRegister.Get(kVia)(p, bytes, flags);
  RecordPinned(call, kOpCudaHostRegister, p, bytes, flags, kFlagCudaDriverApi, r);
  return r;
}

template <CudaVia kVia>
CUresult MemHostUnregister(void* p) {
  CudaCall call;
  uint64_t bytes = BeginRelease(call, p);
  CUresult r = real_cuMemHostUnregister.Get(kVia)(p);
  EndRelease(call, kOpCudaHostUnregister, p, bytes, kFlagCudaDriverApi, r);
  return r;
}

template <CudaVia kVia>
CUresult MemFreeHost(void* p) {
  CudaCall call;
  uint64_t bytes = BeginRelease(call, p);
  CUresult r = real_cuMemFreeHost.Get(kVia)(p);
  EndRelease(call, kOpCudaHostFree, p, bytes, kFlagCudaDriverApi, r);
  return r;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int flags) {
  CudaCall call;
  cudaError_t r = real_cudaHostAlloc.Get(kViaExport)(p, bytes, flags);
  RecordPinned(call, kOpCudaHostAlloc, r == cudaSuccess ? *p : nullptr, bytes, flags, 0, r);
  return r;
}

IOTAP_EXPORT cudaError_t cudaMallocHost(void** p, size_t bytes) {
  CudaCall call;
  cudaError_t r = real_cudaMallocHost.Get(kViaExport)(p, bytes);
  RecordPinned(call, kOpCudaHostAlloc, r == cudaSuccess ? *p : nullptr, bytes, 0, 0, r);
  return r;
}

IOTAP_EXPORT cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned int flags) {
  CudaCall call;
  cudaError_t r = real_cudaHostRegister.Get(kViaExport)(p, bytes, flags);
  RecordPinned(call, kOpCudaHostRegister, p, bytes, flags, 0, r);
  return r;
}

IOTAP_EXPORT cudaError_t cudaHostUnregister(void* p) {
  CudaCall call;
  uint64_t bytes = BeginRelease(call, p);
  cudaError_t r = real_cudaHostUnregister.Get(kViaExport)(p);
  EndRelease(call, kOpCudaHostUnregister, p, bytes, 0, r);
  return r;
}

IOTAP_EXPORT cudaError_t cudaFreeHost(void* p) {
  CudaCall call;
  uint64_t bytes = BeginRelease(call, p);
  cudaError_t r = real_cudaFreeHost.Get(kViaExport)(p);
  EndRelease(call, kOpCudaHostFree, p, bytes, 0, r);
  return r;
}

IOTAP_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytes, unsigned int flags) {
  return MemHostAlloc<kViaExport>(pp, bytes, flags);
}
IOTAP_EXPORT CUresult cuMemAllocHost(void** pp, size_t bytes) {
  return MemAllocHost<kViaExport>(pp, bytes);
}
IOTAP_EXPORT CUresult cuMemHostRegister(void* p, size_t bytes, unsigned int flags) {
  return MemHostRegister<kViaExport>(p, bytes, flags);
}
IOTAP_EXPORT CUresult cuMemHostUnregister(void* p) { return MemHostUnregister<kViaExport>(p); }
IOTAP_EXPORT CUresult cuMemFreeHost(void* p) { return MemFreeHost<kViaExport>(p); }

namespace iotap::interpose {
namespace {

constinit const CudaEntry kRuntimeEntries[] = {
    IOTAP_CUDA_ENTRY(cudaHostAlloc),    IOTAP_CUDA_ENTRY(cudaMallocHost),
    IOTAP_CUDA_ENTRY(cudaHostRegister), IOTAP_CUDA_ENTRY(cudaHostUnregister),
    IOTAP_CUDA_ENTRY(cudaFreeHost),
};

// cuGetProcAddress versions: cuMemAllocHost_v2 since 3.2, cuMemHostRegister_v2
// since 6.5 (the same ABI as the 4.0 original, which is left unwrapped).
constinit const CudaEntry kDriverEntries[] = {
    IOTAP_CUDA_DRIVER_ENTRY(cuMemHostAlloc, MemHostAlloc, "cuMemHostAlloc", 2020, 0),
    IOTAP_CUDA_DRIVER_ENTRY(cuMemAllocHost, MemAllocHost, "cuMemAllocHost", 3020, 0),
    IOTAP_CUDA_DRIVER_ENTRY(cuMemHostRegister, MemHostRegister, "cuMemHostRegister", 6050, 0),
    IOTAP_CUDA_DRIVER_ENTRY(cuMemHostUnregister, MemHostUnregister, "cuMemHostUnregister", 4000, 0),
    IOTAP_CUDA_DRIVER_ENTRY(cuMemFreeHost, MemFreeHost, "cuMemFreeHost", 2000, 0),
};

}  // namespace

constinit const CudaEntryTable kCudaHostRuntimeTable = {
    kRuntimeEntries, sizeof(kRuntimeEntries) / sizeof(kRuntimeEntries[0]), CudaLibrary::kRuntime,
    false};
constinit const CudaEntryTable kCudaHostDriverTable = {
    kDriverEntries, sizeof(kDriverEntries) / sizeof(kDriverEntries[0]), CudaLibrary::kDriver,
    false};

}  // namespace iotap::interpose
