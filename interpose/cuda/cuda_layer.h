// The CUDA layer's wrapper shape and the helpers every CUDA wrapper shares.
//
//   IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuMemcpyHtoD);   // at namespace scope
//   ...
//   template <CudaVia kVia>
//   CUresult MemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
//     CudaCall call;
//     CUresult r = real_cuMemcpyHtoD.Get(kVia)(dst, src, n);
//     RecordCopy(call, n, kStream, kFlagCudaDriverApi, r,
//                [&] { return CopyShape{kOpCudaMemcpyHtod, HostFlag(src)}; });
//     return r;
//   }
//
// CudaCall is TraceCall plus a per-thread nesting flag: a CUDA call made
// inside a traced CUDA call (the driver calls cudart makes for cudaMemcpy, or
// cuMemHostAlloc inside cudaHostAlloc) passes through unrecorded, so each
// call the program made is one event. The CUDA headers are needed to build
// this layer and nothing CUDA is needed to run it (see cuda_resolve.h).

#ifndef IOTAP_INTERPOSE_CUDA_CUDA_LAYER_H_
#define IOTAP_INTERPOSE_CUDA_CUDA_LAYER_H_

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdint.h>
#include <sys/types.h>

#include <atomic>

#include "interpose/core/io_event.h"
#include "interpose/core/trace_call.h"
#include "interpose/cuda/cuda_resolve.h"
#include "interpose/cuda/cufile_api.h"
#include "interpose/cuda/pinned_ranges.h"

namespace iotap::interpose {

// Set while this thread is inside a CUDA wrapper.
extern __thread bool tls_in_cuda __attribute__((tls_model("initial-exec")));

// Starts CUPTI activity collection the first time a CUDA wrapper runs, when
// IOTAP_CUPTI=1 (cupti.cc).
extern std::atomic<bool> g_cupti_unchecked;
void CuptiFirstCall();

class CudaCall {
 public:
  CudaCall() : outer_(!tls_in_cuda), call_(outer_ ? uint32_t{kLayerCuda} : 0u) {
    tls_in_cuda = true;
    if (__builtin_expect(g_cupti_unchecked.load(std::memory_order_relaxed), 0) && call_.active()) {
      CuptiFirstCall();
    }
  }
  ~CudaCall() {
    if (outer_) tls_in_cuda = false;
  }
  CudaCall(const CudaCall&) = delete;
  CudaCall& operator=(const CudaCall&) = delete;

  // Whether this call is recorded (and may update the shim's tables).
  bool active() const { return call_.active(); }
  // As TraceCall::Finish. CUDA calls report failure in their return code,
  // which wrappers put in `result`; `error` (errno) stays 0.
  RawEvent* Finish(Op op) { return call_.Finish(op, false); }
  RawEvent* Another(Op op) { return call_.Another(op); }

 private:
  bool outer_;
  TraceCall call_;
};

// What a wrapper returns when the real function cannot be found.
template <typename R>
R CudaMissingResult();
template <>
inline cudaError_t CudaMissingResult<cudaError_t>() {
  return cudaErrorSymbolNotFound;
}
template <>
inline CUresult CudaMissingResult<CUresult>() {
  return CUDA_ERROR_NOT_FOUND;
}
template <>
inline CUfileError_t CudaMissingResult<CUfileError_t>() {
  return CUfileError_t{CU_FILE_DRIVER_NOT_INITIALIZED, CUDA_SUCCESS};
}
template <>  // cuFileRead and cuFileWrite: a negated CUfileOpError
inline ssize_t CudaMissingResult<ssize_t>() {
  return -CU_FILE_DRIVER_NOT_INITIALIZED;
}
template <>
inline void CudaMissingResult<void>() {}

template <typename Fn>
struct CudaMissing;
template <typename R, typename... Args>
struct CudaMissing<R (*)(Args...)> {
  static R Call(Args...) { return CudaMissingResult<R>(); }
};

// The real functions behind one wrapper, one slot per CudaVia.
template <typename Fn>
class CudaReal {
 public:
  constexpr CudaReal(const char* name, CudaLibrary lib) : name_(name), lib_(lib) {}

  Fn Get(CudaVia via) {
    void* f = slots_[via].load(std::memory_order_relaxed);
    if (__builtin_expect(f == nullptr, 0)) f = ResolveCuda(lib_, name_, &slots_[via]);
    return f != nullptr ? reinterpret_cast<Fn>(f) : &CudaMissing<Fn>::Call;
  }
  constexpr std::atomic<void*>* slot(CudaVia via) { return &slots_[via]; }

 private:
  const char* name_;
  CudaLibrary lib_;
  std::atomic<void*> slots_[2] = {};
};

#define IOTAP_CUDA_STRING(x) IOTAP_CUDA_STRING_2(x)
#define IOTAP_CUDA_STRING_2(x) #x

// Declares real_NAME, the real functions of the wrapper NAME, typed from the
// CUDA header's declaration of NAME. NAME may be one of the headers' macros
// (cuMemcpyHtoD is cuMemcpyHtoD_v2, or cuMemcpyHtoD_v2_ptds in a per-thread
// build); the function looked up is what it expands to.
#define IOTAP_CUDA_REAL(lib, name)                                        \
  constinit ::iotap::interpose::CudaReal<decltype(&::name)> real_##name { \
    IOTAP_CUDA_STRING(name), lib                                          \
  }

// A CudaEntry (cuda_resolve.h) for the exported wrapper NAME only.
#define IOTAP_CUDA_ENTRY(name)                                                         \
  {                                                                                    \
    IOTAP_CUDA_STRING(name), real_##name.slot(::iotap::interpose::kViaExport),         \
        &::iotap::interpose::FunctionAddress<&::name>, nullptr, 0, 0, nullptr, nullptr \
  }

// A CudaEntry for the driver wrapper NAME, whose template Wrapper<CudaVia>
// cuGetProcAddress hands out when asked for SYMBOL with a CUDA version in
// [MIN, MAX) (MAX 0: no end).
#define IOTAP_CUDA_DRIVER_ENTRY(name, Wrapper, symbol, min_version, max_version)            \
  {                                                                                         \
    IOTAP_CUDA_STRING(name), real_##name.slot(::iotap::interpose::kViaExport),              \
        &::iotap::interpose::FunctionAddress<&::name>, symbol, min_version, max_version,    \
        real_##name.slot(::iotap::interpose::kViaProcAddress),                              \
        &::iotap::interpose::FunctionAddress<&Wrapper<::iotap::interpose::kViaProcAddress>> \
  }

// The flag of a copy's host side (see FLAG_CUDA_PINNED in trace.proto).
IOTAP_HOT uint16_t HostFlag(const void* host) {
  switch (PinnedLookup(reinterpret_cast<uintptr_t>(host))) {
    case HostMemory::kPinned:
      return kFlagCudaPinned;
    case HostMemory::kPageable:
      return kFlagCudaPageable;
    case HostMemory::kUnknown:
      break;
  }
  return 0;
}

// For a copy whose direction the driver infers: pinned if either side is.
IOTAP_HOT uint16_t EitherPinned(const void* a, const void* b) {
  return (HostFlag(a) | HostFlag(b)) & kFlagCudaPinned;
}

struct CopyShape {
  Op op;
  uint16_t host_flag;
};

// Direction and host side from a cudaMemcpyKind.
IOTAP_HOT CopyShape ShapeOfKind(cudaMemcpyKind kind, const void* dst, const void* src) {
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return {kOpCudaMemcpyHtod, HostFlag(src)};
    case cudaMemcpyDeviceToHost:
      return {kOpCudaMemcpyDtoh, HostFlag(dst)};
    case cudaMemcpyDeviceToDevice:
      return {kOpCudaMemcpyDtod, 0};
    case cudaMemcpyHostToHost:
      return {kOpCudaMemcpyHtoh, HostFlag(src)};
    default:  // cudaMemcpyDefault, or a kind the call will reject
      return {kOpCudaMemcpyDefault, EitherPinned(dst, src)};
  }
}

// Direction and host side from the CUmemorytype of a driver 2D or 3D copy.
IOTAP_HOT CopyShape ShapeOfMemoryTypes(CUmemorytype src_type, const void* src_host,
                                       CUmemorytype dst_type, const void* dst_host) {
  auto device = [](CUmemorytype t) {
    return t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_ARRAY;
  };
  if (src_type == CU_MEMORYTYPE_HOST && device(dst_type)) {
    return {kOpCudaMemcpyHtod, HostFlag(src_host)};
  }
  if (device(src_type) && dst_type == CU_MEMORYTYPE_HOST) {
    return {kOpCudaMemcpyDtoh, HostFlag(dst_host)};
  }
  if (device(src_type) && device(dst_type)) return {kOpCudaMemcpyDtod, 0};
  if (src_type == CU_MEMORYTYPE_HOST && dst_type == CU_MEMORYTYPE_HOST) {
    return {kOpCudaMemcpyHtoh, HostFlag(src_host)};
  }
  return {kOpCudaMemcpyDefault, EitherPinned(src_host, dst_host)};
}

// The aux of a copy on `stream`; `default_stream` is what stream 0 means for
// the entry point (0 legacy, 2 per-thread; see OP_CUDA_MEMCPY_HTOD).
IOTAP_HOT uint64_t StreamAux(const void* stream, uint64_t default_stream) {
  return stream == nullptr ? default_stream : reinterpret_cast<uintptr_t>(stream);
}

// Records a copy. `shape` runs only if the event is recorded, so a copy that
// is not costs no pinned lookup.
template <typename ShapeFn>
IOTAP_HOT void RecordCopy(CudaCall& call, uint64_t bytes, uint64_t stream, uint16_t flags,
                          int64_t result, ShapeFn shape) {
  RawEvent* e = call.Finish(kOpCudaMemcpyDefault);
  if (e == nullptr) return;
  CopyShape s = shape();
  e->op = s.op;
  e->flags = flags | s.host_flag;
  e->requested = bytes;
  e->result = result;
  e->aux = stream;
}

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CUDA_CUDA_LAYER_H_
