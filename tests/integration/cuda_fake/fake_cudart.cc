// A stand-in for the CUDA runtime, libcudart.so.13, for testing the shim
// without a GPU. Like the real one it loads the driver itself on first use,
// with dlopen("libcuda.so.1") and dlsym(handle, "cuGetProcAddress_v2"), and
// does its plain copies and pinned-memory calls through driver functions it
// gets from cuGetProcAddress, so a test sees that the shim records each
// runtime call once, not again for the driver calls inside it. The other
// copies (2D, 3D, symbols, peers) are memcpy here. Memory is host memory
// (see fake_cuda.cc); CUDA arrays are not supported.
//
// A test makes the next call fail with iotap_fake_cudart_fail_next(code).

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <string.h>

namespace {

thread_local int g_fail_next = 0;

cudaError_t Injected() {
  int code = g_fail_next;
  g_fail_next = 0;
  return static_cast<cudaError_t>(code);
}

struct Driver {
  PFN_cuMemcpy_v4000 memcpy;
  PFN_cuMemcpyHtoD_v3020 htod;
  PFN_cuMemcpyDtoH_v3020 dtoh;
  PFN_cuMemcpyDtoD_v3020 dtod;
  PFN_cuMemcpyAsync_v4000 memcpy_async;
  PFN_cuMemcpyHtoDAsync_v3020 htod_async;
  PFN_cuMemcpyDtoHAsync_v3020 dtoh_async;
  PFN_cuMemcpyDtoDAsync_v3020 dtod_async;
  PFN_cuMemHostAlloc_v2020 host_alloc;
  PFN_cuMemAllocHost_v3020 alloc_host;
  PFN_cuMemHostRegister_v6050 host_register;
  PFN_cuMemHostUnregister_v4000 host_unregister;
  PFN_cuMemFreeHost_v2000 free_host;
};

template <typename Fn>
void Get(PFN_cuGetProcAddress_v12000 get, const char* symbol, int version, bool per_thread,
         Fn* fn) {
  void* p = nullptr;
  CUdriverProcAddressQueryResult status;
  cuuint64_t flags = per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  get(symbol, &p, version, flags, &status);
  *fn = reinterpret_cast<Fn>(p);
}

Driver Load(bool per_thread) {
  Driver d{};
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  auto get = lib == nullptr
                 ? nullptr
                 : reinterpret_cast<PFN_cuGetProcAddress_v12000>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get == nullptr) return d;
  Get(get, "cuMemcpy", 13000, per_thread, &d.memcpy);
  Get(get, "cuMemcpyHtoD", 13000, per_thread, &d.htod);
  Get(get, "cuMemcpyDtoH", 13000, per_thread, &d.dtoh);
  Get(get, "cuMemcpyDtoD", 13000, per_thread, &d.dtod);
  Get(get, "cuMemcpyAsync", 13000, per_thread, &d.memcpy_async);
  Get(get, "cuMemcpyHtoDAsync", 13000, per_thread, &d.htod_async);
  Get(get, "cuMemcpyDtoHAsync", 13000, per_thread, &d.dtoh_async);
  Get(get, "cuMemcpyDtoDAsync", 13000, per_thread, &d.dtod_async);
  Get(get, "cuMemHostAlloc", 13000, per_thread, &d.host_alloc);
  Get(get, "cuMemAllocHost", 13000, per_thread, &d.alloc_host);
  Get(get, "cuMemHostRegister", 13000, per_thread, &d.host_register);
  Get(get, "cuMemHostUnregister", 13000, per_thread, &d.host_unregister);
  Get(get, "cuMemFreeHost", 13000, per_thread, &d.free_host);
  return d;
}

const Driver& TheDriver(bool per_thread) {
  static const Driver legacy = Load(false);
  static const Driver ptds = Load(true);
  return per_thread ? ptds : legacy;
}

cudaError_t FromDriver(CUresult r) { return static_cast<cudaError_t>(r); }
CUdeviceptr Dev(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }
CUstream Stream(cudaStream_t s) { return reinterpret_cast<CUstream>(s); }

cudaError_t Memcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind, bool per_thread) {
  if (cudaError_t r = Injected()) return r;
  const Driver& d = TheDriver(per_thread);
  if (d.memcpy == nullptr) return cudaErrorInitializationError;
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return FromDriver(d.htod(Dev(dst), src, n));
    case cudaMemcpyDeviceToHost:
      return FromDriver(d.dtoh(dst, Dev(src), n));
    case cudaMemcpyDeviceToDevice:
      return FromDriver(d.dtod(Dev(dst), Dev(src), n));
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
      return FromDriver(d.memcpy(Dev(dst), Dev(src), n));
  }
  return cudaErrorInvalidMemcpyDirection;
}

cudaError_t MemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s,
                        bool per_thread) {
  if (cudaError_t r = Injected()) return r;
  const Driver& d = TheDriver(per_thread);
  if (d.memcpy_async == nullptr) return cudaErrorInitializationError;
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return FromDriver(d.htod_async(Dev(dst), src, n, Stream(s)));
    case cudaMemcpyDeviceToHost:
      return FromDriver(d.dtoh_async(dst, Dev(src), n, Stream(s)));
    case cudaMemcpyDeviceToDevice:
      return FromDriver(d.dtod_async(Dev(dst), Dev(src), n, Stream(s)));
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
      return FromDriver(d.memcpy_async(Dev(dst), Dev(src), n, Stream(s)));
  }
  return cudaErrorInvalidMemcpyDirection;
}

// A copy the fake does itself.
cudaError_t Plain(void* dst, const void* src, size_t n) {
  if (cudaError_t r = Injected()) return r;
  memcpy(dst, src, n);
  return cudaSuccess;
}

cudaError_t Copy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                   size_t height) {
  if (cudaError_t r = Injected()) return r;
  for (size_t y = 0; y < height; ++y) {
    memcpy(static_cast<char*>(dst) + y * dpitch, static_cast<const char*>(src) + y * spitch, width);
  }
  return cudaSuccess;
}

cudaError_t Copy3D(const cudaMemcpy3DParms* p) {
  if (cudaError_t r = Injected()) return r;
  if (p == nullptr || p->srcArray != nullptr || p->dstArray != nullptr) {
    return cudaErrorInvalidValue;
  }
  for (size_t z = 0; z < p->extent.depth; ++z) {
    for (size_t y = 0; y < p->extent.height; ++y) {
      size_t src_row = (p->srcPos.z + z) * p->srcPtr.ysize + p->srcPos.y + y;
      size_t dst_row = (p->dstPos.z + z) * p->dstPtr.ysize + p->dstPos.y + y;
      memcpy(static_cast<char*>(p->dstPtr.ptr) + dst_row * p->dstPtr.pitch + p->dstPos.x,
             static_cast<const char*>(p->srcPtr.ptr) + src_row * p->srcPtr.pitch + p->srcPos.x,
             p->extent.width);
    }
  }
  return cudaSuccess;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT void iotap_fake_cudart_fail_next(int code) { g_fail_next = code; }

// Each copy has a legacy entry point and a per-thread-default-stream twin.
// clang-format off
#define FAKE_PAIR(legacy, ptds, params, legacy_body, ptds_body) \
  FAKE_EXPORT cudaError_t legacy params legacy_body             \
  FAKE_EXPORT cudaError_t ptds params ptds_body
// clang-format on

FAKE_PAIR(
    cudaMemcpy, cudaMemcpy_ptds, (void* dst, const void* src, size_t n, cudaMemcpyKind k),
    { return Memcpy(dst, src, n, k, false); }, { return Memcpy(dst, src, n, k, true); })
FAKE_PAIR(
    cudaMemcpyAsync, cudaMemcpyAsync_ptsz,
    (void* dst, const void* src, size_t n, cudaMemcpyKind k, cudaStream_t s),
    { return MemcpyAsync(dst, src, n, k, s, false); },
    { return MemcpyAsync(dst, src, n, k, s, true); })
#define FAKE_SAME(legacy, ptds, params, body) FAKE_PAIR(legacy, ptds, params, body, body)
FAKE_SAME(cudaMemcpy2D, cudaMemcpy2D_ptds,
          (void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t h, cudaMemcpyKind),
          { return Copy2D(dst, dp, src, sp, w, h); })
FAKE_SAME(cudaMemcpy2DAsync, cudaMemcpy2DAsync_ptsz,
          (void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t h, cudaMemcpyKind,
           cudaStream_t),
          { return Copy2D(dst, dp, src, sp, w, h); })
FAKE_SAME(cudaMemcpy3D, cudaMemcpy3D_ptds, (const cudaMemcpy3DParms* p), { return Copy3D(p); })
FAKE_SAME(cudaMemcpy3DAsync, cudaMemcpy3DAsync_ptsz, (const cudaMemcpy3DParms* p, cudaStream_t),
          { return Copy3D(p); })
FAKE_SAME(cudaMemcpyToSymbol, cudaMemcpyToSymbol_ptds,
          (const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind),
          { return Plain(static_cast<char*>(const_cast<void*>(sym)) + off, src, n); })
FAKE_SAME(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_ptds,
          (void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind),
          { return Plain(dst, static_cast<const char*>(sym) + off, n); })
FAKE_SAME(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_ptsz,
          (const void* sym, const void* src, size_t n, size_t off, cudaMemcpyKind, cudaStream_t),
          { return Plain(static_cast<char*>(const_cast<void*>(sym)) + off, src, n); })
FAKE_SAME(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync_ptsz,
          (void* dst, const void* sym, size_t n, size_t off, cudaMemcpyKind, cudaStream_t),
          { return Plain(dst, static_cast<const char*>(sym) + off, n); })

FAKE_EXPORT cudaError_t cudaMemcpyPeer(void* dst, int, const void* src, int, size_t n) {
  return Plain(dst, src, n);
}
FAKE_EXPORT cudaError_t cudaMemcpyPeerAsync(void* dst, int, const void* src, int, size_t n,
                                            cudaStream_t) {
  return Plain(dst, src, n);
}

FAKE_EXPORT cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int flags) {
  if (cudaError_t r = Injected()) return r;
  return FromDriver(TheDriver(false).host_alloc(p, bytes, flags));
}
FAKE_EXPORT cudaError_t cudaMallocHost(void** p, size_t bytes) {
  if (cudaError_t r = Injected()) return r;
  return FromDriver(TheDriver(false).alloc_host(p, bytes));
}
FAKE_EXPORT cudaError_t cudaHostRegister(void* p, size_t bytes, unsigned int flags) {
  if (cudaError_t r = Injected()) return r;
  return FromDriver(TheDriver(false).host_register(p, bytes, flags));
}
FAKE_EXPORT cudaError_t cudaHostUnregister(void* p) {
  if (cudaError_t r = Injected()) return r;
  return FromDriver(TheDriver(false).host_unregister(p));
}
FAKE_EXPORT cudaError_t cudaFreeHost(void* p) {
  if (cudaError_t r = Injected()) return r;
  return FromDriver(TheDriver(false).free_host(p));
}
