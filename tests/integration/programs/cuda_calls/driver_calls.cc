// The driver API's calls: every copy entry point and its per-thread twin,
// the pinned-memory calls, and cuGetProcAddress used directly.

#include <cudaTypedefs.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "absl/strings/str_cat.h"
#include "tests/integration/programs/cuda_calls/calls.h"

#undef cuGetProcAddress

namespace iotap::cuda_calls {
namespace {

template <typename Fn>
Fn As(void* fn) {
  return reinterpret_cast<Fn>(fn);
}

CUdeviceptr Dev(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
CUstream Stream(void* s) { return static_cast<CUstream>(s); }

// A 1D copy with `plan` through `copy(dst, src, n)`.
template <typename CopyFn>
void Copy1D(const char* symbol, Context& c, const Plan& p, void* stream, bool async, CopyFn copy) {
  size_t n = BytesOf(c.index);
  Fill(p.src, n, c.index);
  Clear(p.dst, n);
  MaybeFail(c, Lib::kDriver);
  CUresult r = copy(p.dst, p.src, n);
  Report(symbol, CopyFields(p, n, stream, async), r, memcmp(p.dst, p.src, n) == 0);
}

void Memcpy(const char* s, void* fn, Context& c) {
  Copy1D(s, c, PlanOf(c, cudaMemcpyDefault), nullptr, false, [&](char* d, char* src, size_t n) {
    return As<PFN_cuMemcpy_v4000>(fn)(Dev(d), Dev(src), n);
  });
}
void MemcpyAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy1D(s, c, PlanOf(c, cudaMemcpyDefault), st, true, [&](char* d, char* src, size_t n) {
    return As<PFN_cuMemcpyAsync_v4000>(fn)(Dev(d), Dev(src), n, Stream(st));
  });
}
void HtoD(const char* s, void* fn, Context& c) {
  Copy1D(
      s, c, PlanOf(c, cudaMemcpyHostToDevice), nullptr, false,
      [&](char* d, char* src, size_t n) { return As<PFN_cuMemcpyHtoD_v3020>(fn)(Dev(d), src, n); });
}
void HtoDAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy1D(s, c, PlanOf(c, cudaMemcpyHostToDevice), st, true, [&](char* d, char* src, size_t n) {
    return As<PFN_cuMemcpyHtoDAsync_v3020>(fn)(Dev(d), src, n, Stream(st));
  });
}
void DtoH(const char* s, void* fn, Context& c) {
  Copy1D(
      s, c, PlanOf(c, cudaMemcpyDeviceToHost), nullptr, false,
      [&](char* d, char* src, size_t n) { return As<PFN_cuMemcpyDtoH_v3020>(fn)(d, Dev(src), n); });
}
void DtoHAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy1D(s, c, PlanOf(c, cudaMemcpyDeviceToHost), st, true, [&](char* d, char* src, size_t n) {
    return As<PFN_cuMemcpyDtoHAsync_v3020>(fn)(d, Dev(src), n, Stream(st));
  });
}
void DtoD(const char* s, void* fn, Context& c) {
  Copy1D(s, c, PlanOf(c, cudaMemcpyDeviceToDevice), nullptr, false,
         [&](char* d, char* src, size_t n) {
           return As<PFN_cuMemcpyDtoD_v3020>(fn)(Dev(d), Dev(src), n);
         });
}
void DtoDAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy1D(s, c, PlanOf(c, cudaMemcpyDeviceToDevice), st, true, [&](char* d, char* src, size_t n) {
    return As<PFN_cuMemcpyDtoDAsync_v3020>(fn)(Dev(d), Dev(src), n, Stream(st));
  });
}

// 2D and 3D copies describe each side by a CUmemorytype; Default is
// CU_MEMORYTYPE_UNIFIED on both sides.
CUmemorytype SrcType(cudaMemcpyKind k) {
  return k == cudaMemcpyHostToDevice || k == cudaMemcpyHostToHost ? CU_MEMORYTYPE_HOST
         : k == cudaMemcpyDefault                                 ? CU_MEMORYTYPE_UNIFIED
                                                                  : CU_MEMORYTYPE_DEVICE;
}
CUmemorytype DstType(cudaMemcpyKind k) {
  return k == cudaMemcpyDeviceToHost || k == cudaMemcpyHostToHost ? CU_MEMORYTYPE_HOST
         : k == cudaMemcpyDefault                                 ? CU_MEMORYTYPE_UNIFIED
                                                                  : CU_MEMORYTYPE_DEVICE;
}

template <typename Copy>
void Describe(Copy* copy, const Plan& p, size_t width, size_t height) {
  copy->srcMemoryType = SrcType(p.kind);
  copy->dstMemoryType = DstType(p.kind);
  if (copy->srcMemoryType == CU_MEMORYTYPE_HOST)
    copy->srcHost = p.src;
  else
    copy->srcDevice = Dev(p.src);
  if (copy->dstMemoryType == CU_MEMORYTYPE_HOST)
    copy->dstHost = p.dst;
  else
    copy->dstDevice = Dev(p.dst);
  copy->srcPitch = copy->dstPitch = 256;
  copy->WidthInBytes = width;
  copy->Height = height;
}

// Rows of (64 + index) bytes, 4 of them (2D) or 2 by 2 slices (3D).
template <typename Copy, typename CallFn>
void CopyRows(const char* s, Context& c, void* stream, bool async, CallFn call) {
  Plan p = PlanOf(c);
  size_t width = 64 + c.index;
  Fill(p.src, 1024, c.index);
  Clear(p.dst, 1024);
  Copy copy = {};
  if constexpr (std::is_same_v<Copy, CUDA_MEMCPY3D>) {
    Describe(&copy, p, width, 2);
    copy.Depth = 2;
    copy.srcHeight = copy.dstHeight = 2;
  } else {
    Describe(&copy, p, width, 4);
  }
  MaybeFail(c, Lib::kDriver);
  CUresult r = call(&copy);
  bool ok = true;
  for (size_t row = 0; row < 4; ++row)
    ok = ok && memcmp(p.dst + row * 256, p.src + row * 256, width) == 0;
  Report(s, CopyFields(p, width * 4, stream, async), r, ok);
}

void Memcpy2D(const char* s, void* fn, Context& c) {
  CopyRows<CUDA_MEMCPY2D>(s, c, nullptr, false, [&](const CUDA_MEMCPY2D* copy) {
    return As<PFN_cuMemcpy2D_v3020>(fn)(copy);
  });
}
void Memcpy2DAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  CopyRows<CUDA_MEMCPY2D>(s, c, st, true, [&](const CUDA_MEMCPY2D* copy) {
    return As<PFN_cuMemcpy2DAsync_v3020>(fn)(copy, Stream(st));
  });
}
void Memcpy3D(const char* s, void* fn, Context& c) {
  CopyRows<CUDA_MEMCPY3D>(s, c, nullptr, false, [&](const CUDA_MEMCPY3D* copy) {
    return As<PFN_cuMemcpy3D_v3020>(fn)(copy);
  });
}
void Memcpy3DAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  CopyRows<CUDA_MEMCPY3D>(s, c, st, true, [&](const CUDA_MEMCPY3D* copy) {
    return As<PFN_cuMemcpy3DAsync_v3020>(fn)(copy, Stream(st));
  });
}

Plan PeerPlan(Context& c) { return {cudaMemcpyDeviceToDevice, c.device, c.device2, "-"}; }
void Peer(const char* s, void* fn, Context& c) {
  Plan p = PeerPlan(c);
  size_t n = BytesOf(c.index);
  Fill(p.src, n, c.index);
  Clear(p.dst, n);
  MaybeFail(c, Lib::kDriver);
  CUresult r = As<PFN_cuMemcpyPeer_v4000>(fn)(Dev(p.dst), nullptr, Dev(p.src), nullptr, n);
  Report(s, absl::StrCat("kind=Peer bytes=", n, " stream=- host=-"), r,
         memcmp(p.dst, p.src, n) == 0);
}
void PeerAsync(const char* s, void* fn, Context& c) {
  Plan p = PeerPlan(c);
  size_t n = BytesOf(c.index);
  void* st = StreamOf(c.index);
  Fill(p.src, n, c.index);
  Clear(p.dst, n);
  MaybeFail(c, Lib::kDriver);
  CUresult r =
      As<PFN_cuMemcpyPeerAsync_v4000>(fn)(Dev(p.dst), nullptr, Dev(p.src), nullptr, n, Stream(st));
  Report(s, absl::StrCat("kind=Peer bytes=", n, " stream=", StreamText(st), " host=-"), r,
         memcmp(p.dst, p.src, n) == 0);
}

// cuGetProcAddress called directly: look cuMemcpyHtoD up and copy with it.
void GetProcAddressV1(const char* s, void* fn, Context& c) {
  void* htod = nullptr;
  CUresult r = As<PFN_cuGetProcAddress_v11030>(fn)("cuMemcpyHtoD", &htod, 11030, 0);
  if (r != CUDA_SUCCESS) return Report(s, "lookup", r, false);
  HtoD(s, htod, c);
}
void GetProcAddressV2(const char* s, void* fn, Context& c) {
  void* htod = nullptr;
  CUdriverProcAddressQueryResult status;
  CUresult r = As<PFN_cuGetProcAddress_v12000>(fn)("cuMemcpyHtoD", &htod, 12000, 0, &status);
  if (r != CUDA_SUCCESS) return Report(s, "lookup", r, false);
  HtoD(s, htod, c);
}

void MemHostAlloc(const char* s, void* fn, Context& c) {
  void* p = nullptr;
  size_t n = PinnedBytes(c);
  CUresult r = As<PFN_cuMemHostAlloc_v2020>(fn)(&p, n, CU_MEMHOSTALLOC_PORTABLE);
  if (r == CUDA_SUCCESS) Allocated(c, "cuMemFreeHost", p, n);
  Report(s, absl::StrCat("bytes=", n, " flags=", CU_MEMHOSTALLOC_PORTABLE), r, true);
}
void MemAllocHost(const char* s, void* fn, Context& c) {
  void* p = nullptr;
  size_t n = PinnedBytes(c);
  CUresult r = As<PFN_cuMemAllocHost_v3020>(fn)(&p, n);
  if (r == CUDA_SUCCESS) Allocated(c, "cuMemFreeHost#2", p, n);
  Report(s, absl::StrCat("bytes=", n, " flags=0"), r, true);
}
void MemHostRegister(const char* s, void* fn, Context& c) {
  size_t n = PinnedBytes(c);
  void* p = aligned_alloc(4096, n);
  CUresult r = As<PFN_cuMemHostRegister_v6050>(fn)(p, n, CU_MEMHOSTREGISTER_PORTABLE);
  if (r == CUDA_SUCCESS) Allocated(c, "cuMemHostUnregister", p, n);
  Report(s, absl::StrCat("bytes=", n, " flags=", CU_MEMHOSTREGISTER_PORTABLE), r, true);
}
template <typename Fn>
void Release(const char* s, const char* key, void* fn, Context& c) {
  CUresult r = As<Fn>(fn)(c.to_release[key]);
  Report(s, absl::StrCat("bytes=", c.released_bytes[key]), r, true);
}
void MemFreeHost(const char* s, void* fn, Context& c) {
  Release<PFN_cuMemFreeHost_v2000>(s, "cuMemFreeHost", fn, c);
}
void MemFreeHost2(const char* s, void* fn, Context& c) {
  Release<PFN_cuMemFreeHost_v2000>(s, "cuMemFreeHost#2", fn, c);
}
void MemHostUnregister(const char* s, void* fn, Context& c) {
  Release<PFN_cuMemHostUnregister_v4000>(s, "cuMemHostUnregister", fn, c);
}

}  // namespace

#define DRIVER(symbol, phase, proc, invoker) \
  { symbol, Lib::kDriver, phase, proc, false, invoker }
// clang-format off
#define DRIVER_COPY_PAIR(legacy, per_thread, proc, invoker)        \
  {legacy, Lib::kDriver, Phase::kTransfer, proc, false, invoker}, \
  {per_thread, Lib::kDriver, Phase::kTransfer, proc, true, invoker}
// clang-format on

const Call kDriverCalls[] = {
    DRIVER("cuMemHostAlloc", Phase::kAllocate, "cuMemHostAlloc", MemHostAlloc),
    DRIVER("cuMemAllocHost_v2", Phase::kAllocate, "cuMemAllocHost", MemAllocHost),
    DRIVER("cuMemHostRegister_v2", Phase::kAllocate, "cuMemHostRegister", MemHostRegister),
    DRIVER_COPY_PAIR("cuMemcpy", "cuMemcpy_ptds", "cuMemcpy", Memcpy),
    DRIVER_COPY_PAIR("cuMemcpyAsync", "cuMemcpyAsync_ptsz", "cuMemcpyAsync", MemcpyAsync),
    DRIVER_COPY_PAIR("cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuMemcpyHtoD", HtoD),
    DRIVER_COPY_PAIR("cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds", "cuMemcpyDtoH", DtoH),
    DRIVER_COPY_PAIR("cuMemcpyDtoD_v2", "cuMemcpyDtoD_v2_ptds", "cuMemcpyDtoD", DtoD),
    DRIVER_COPY_PAIR("cuMemcpyHtoDAsync_v2", "cuMemcpyHtoDAsync_v2_ptsz", "cuMemcpyHtoDAsync",
                     HtoDAsync),
    DRIVER_COPY_PAIR("cuMemcpyDtoHAsync_v2", "cuMemcpyDtoHAsync_v2_ptsz", "cuMemcpyDtoHAsync",
                     DtoHAsync),
    DRIVER_COPY_PAIR("cuMemcpyDtoDAsync_v2", "cuMemcpyDtoDAsync_v2_ptsz", "cuMemcpyDtoDAsync",
                     DtoDAsync),
    DRIVER_COPY_PAIR("cuMemcpy2D_v2", "cuMemcpy2D_v2_ptds", "cuMemcpy2D", Memcpy2D),
    DRIVER_COPY_PAIR("cuMemcpy2DAsync_v2", "cuMemcpy2DAsync_v2_ptsz", "cuMemcpy2DAsync",
                     Memcpy2DAsync),
    DRIVER_COPY_PAIR("cuMemcpy3D_v2", "cuMemcpy3D_v2_ptds", "cuMemcpy3D", Memcpy3D),
    DRIVER_COPY_PAIR("cuMemcpy3DAsync_v2", "cuMemcpy3DAsync_v2_ptsz", "cuMemcpy3DAsync",
                     Memcpy3DAsync),
    DRIVER_COPY_PAIR("cuMemcpyPeer", "cuMemcpyPeer_ptds", "cuMemcpyPeer", Peer),
    DRIVER_COPY_PAIR("cuMemcpyPeerAsync", "cuMemcpyPeerAsync_ptsz", "cuMemcpyPeerAsync", PeerAsync),
    // Not through cuGetProcAddress: a run asks for both versions anyway.
    DRIVER("cuGetProcAddress", Phase::kTransfer, nullptr, GetProcAddressV1),
    DRIVER("cuGetProcAddress_v2", Phase::kTransfer, nullptr, GetProcAddressV2),
    DRIVER("cuMemFreeHost", Phase::kRelease, "cuMemFreeHost", MemFreeHost),
    DRIVER("cuMemFreeHost", Phase::kRelease, "cuMemFreeHost", MemFreeHost2),
    DRIVER("cuMemHostUnregister", Phase::kRelease, "cuMemHostUnregister", MemHostUnregister),
};
const size_t kDriverCallCount = sizeof(kDriverCalls) / sizeof(kDriverCalls[0]);

}  // namespace iotap::cuda_calls
