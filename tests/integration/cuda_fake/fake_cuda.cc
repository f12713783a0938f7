// A stand-in for the CUDA driver, libcuda.so.1, for testing the shim without
// a GPU. "Device memory" is host memory: a CUdeviceptr is a host address and
// every copy is a memcpy, so a test can check that data arrive. Pinned
// allocations are aligned host allocations the fake keeps track of, so that
// freeing or unregistering something twice fails as it does on a GPU.
//
// A test makes the next call fail with iotap_fake_cuda_fail_next(code): the
// call then does nothing and returns `code`.
//
// cuGetProcAddress behaves as the driver's does for the functions here: the
// base name, a CUDA version (cuMemcpyHtoD below 3.2 is the 32-bit original,
// which the fake exports as iotap_fake_cuMemcpyHtoD_v1) and the stream mode
// (CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM gives the _ptds/_ptsz form).

#include <cuda.h>
#include <cudaTypedefs.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <set>

#undef cuGetProcAddress

namespace {

thread_local int g_fail_next = 0;
std::mutex g_lock;
std::set<void*> g_allocated;
std::set<void*> g_registered;

// The code the current call returns instead of doing its work, or 0.
CUresult Injected() {
  int code = g_fail_next;
  g_fail_next = 0;
  return static_cast<CUresult>(code);
}

void* Ptr(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

CUresult Copy(void* dst, const void* src, size_t n) {
  if (CUresult r = Injected()) return r;
  if (n != 0 && (dst == nullptr || src == nullptr)) return CUDA_ERROR_INVALID_VALUE;
  memcpy(dst, src, n);
  return CUDA_SUCCESS;
}

// The address of one side of a 2D or 3D copy (arrays are not supported).
char* Side(CUmemorytype type, const void* host, CUdeviceptr device) {
  return static_cast<char*>(const_cast<void*>(type == CU_MEMORYTYPE_HOST ? host : Ptr(device)));
}

CUresult Copy2D(const CUDA_MEMCPY2D* c) {
  if (CUresult r = Injected()) return r;
  if (c == nullptr || c->srcMemoryType == CU_MEMORYTYPE_ARRAY ||
      c->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  char* src = Side(c->srcMemoryType, c->srcHost, c->srcDevice);
  char* dst = Side(c->dstMemoryType, c->dstHost, c->dstDevice);
  for (size_t y = 0; y < c->Height; ++y) {
    memcpy(dst + (c->dstY + y) * c->dstPitch + c->dstXInBytes,
           src + (c->srcY + y) * c->srcPitch + c->srcXInBytes, c->WidthInBytes);
  }
  return CUDA_SUCCESS;
}

CUresult Copy3D(const CUDA_MEMCPY3D* c) {
  if (CUresult r = Injected()) return r;
  if (c == nullptr || c->srcMemoryType == CU_MEMORYTYPE_ARRAY ||
      c->dstMemoryType == CU_MEMORYTYPE_ARRAY) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  char* src = Side(c->srcMemoryType, c->srcHost, c->srcDevice);
  char* dst = Side(c->dstMemoryType, c->dstHost, c->dstDevice);
  for (size_t z = 0; z < c->Depth; ++z) {
    for (size_t y = 0; y < c->Height; ++y) {
      memcpy(dst + ((c->dstZ + z) * c->dstHeight + c->dstY + y) * c->dstPitch + c->dstXInBytes,
             src + ((c->srcZ + z) * c->srcHeight + c->srcY + y) * c->srcPitch + c->srcXInBytes,
             c->WidthInBytes);
    }
  }
  return CUDA_SUCCESS;
}

CUresult HostAlloc(void** pp, size_t bytes) {
  if (CUresult r = Injected()) return r;
  if (pp == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *pp = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  std::lock_guard<std::mutex> lock(g_lock);
  g_allocated.insert(*pp);
  return CUDA_SUCCESS;
}

CUresult Forget(std::set<void*>& set, void* p, CUresult unknown, bool free_it) {
  if (CUresult r = Injected()) return r;
  std::lock_guard<std::mutex> lock(g_lock);
  if (set.erase(p) == 0) return unknown;
  if (free_it) free(p);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

#define FAKE_EXPORT __attribute__((visibility("default")))

FAKE_EXPORT void iotap_fake_cuda_fail_next(int code) { g_fail_next = code; }

// The pre-3.2 cuMemcpyHtoD (32-bit device pointers), never wrapped.
FAKE_EXPORT CUresult iotap_fake_cuMemcpyHtoD_v1(unsigned int, const void*, unsigned int) {
  return CUDA_ERROR_NOT_SUPPORTED;
}

// Copies: each legacy entry point and its per-thread-default-stream twin.
// clang-format off
#define FAKE_COPY_PAIR(legacy, ptds, params, body) \
  FAKE_EXPORT CUresult legacy params body          \
  FAKE_EXPORT CUresult ptds params body
// clang-format on

FAKE_COPY_PAIR(cuMemcpy, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
               { return Copy(Ptr(dst), Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpyAsync, cuMemcpyAsync_ptsz,
               (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream),
               { return Copy(Ptr(dst), Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void* src, size_t n),
               { return Copy(Ptr(dst), src, n); })
FAKE_COPY_PAIR(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, (void* dst, CUdeviceptr src, size_t n),
               { return Copy(dst, Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
               { return Copy(Ptr(dst), Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
               (CUdeviceptr dst, const void* src, size_t n, CUstream),
               { return Copy(Ptr(dst), src, n); })
FAKE_COPY_PAIR(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
               (void* dst, CUdeviceptr src, size_t n, CUstream), { return Copy(dst, Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
               (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream),
               { return Copy(Ptr(dst), Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D* c), { return Copy2D(c); })
FAKE_COPY_PAIR(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D* c, CUstream),
               { return Copy2D(c); })
FAKE_COPY_PAIR(cuMemcpy3D_v2, cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D* c), { return Copy3D(c); })
FAKE_COPY_PAIR(cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D* c, CUstream),
               { return Copy3D(c); })
FAKE_COPY_PAIR(cuMemcpyPeer, cuMemcpyPeer_ptds,
               (CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t n),
               { return Copy(Ptr(dst), Ptr(src), n); })
FAKE_COPY_PAIR(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz,
               (CUdeviceptr dst, CUcontext, CUdeviceptr src, CUcontext, size_t n, CUstream),
               { return Copy(Ptr(dst), Ptr(src), n); })

FAKE_EXPORT CUresult cuMemHostAlloc(void** pp, size_t bytes, unsigned int) {
  return HostAlloc(pp, bytes);
}
FAKE_EXPORT CUresult cuMemAllocHost_v2(void** pp, size_t bytes) { return HostAlloc(pp, bytes); }
FAKE_EXPORT CUresult cuMemFreeHost(void* p) {
  return Forget(g_allocated, p, CUDA_ERROR_INVALID_VALUE, true);
}
FAKE_EXPORT CUresult cuMemHostRegister_v2(void* p, size_t, unsigned int) {
  if (CUresult r = Injected()) return r;
  std::lock_guard<std::mutex> lock(g_lock);
  return g_registered.insert(p).second ? CUDA_SUCCESS : CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
}
FAKE_EXPORT CUresult cuMemHostUnregister(void* p) {
  return Forget(g_registered, p, CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, false);
}

}  // extern "C"

namespace {

struct ProcEntry {
  const char* symbol;
  int min_version;
  void* legacy;
  void* per_thread;  // null: the same function in both modes
};

#define FAKE_FN(f) reinterpret_cast<void*>(&f)
const ProcEntry kProcTable[] = {
    {"cuMemcpy", 4000, FAKE_FN(cuMemcpy), FAKE_FN(cuMemcpy_ptds)},
    {"cuMemcpyAsync", 4000, FAKE_FN(cuMemcpyAsync), FAKE_FN(cuMemcpyAsync_ptsz)},
    {"cuMemcpyHtoD", 3020, FAKE_FN(cuMemcpyHtoD_v2), FAKE_FN(cuMemcpyHtoD_v2_ptds)},
    {"cuMemcpyHtoD", 2000, FAKE_FN(iotap_fake_cuMemcpyHtoD_v1), nullptr},
    {"cuMemcpyDtoH", 3020, FAKE_FN(cuMemcpyDtoH_v2), FAKE_FN(cuMemcpyDtoH_v2_ptds)},
    {"cuMemcpyDtoD", 3020, FAKE_FN(cuMemcpyDtoD_v2), FAKE_FN(cuMemcpyDtoD_v2_ptds)},
    {"cuMemcpyHtoDAsync", 3020, FAKE_FN(cuMemcpyHtoDAsync_v2), FAKE_FN(cuMemcpyHtoDAsync_v2_ptsz)},
    {"cuMemcpyDtoHAsync", 3020, FAKE_FN(cuMemcpyDtoHAsync_v2), FAKE_FN(cuMemcpyDtoHAsync_v2_ptsz)},
    {"cuMemcpyDtoDAsync", 3020, FAKE_FN(cuMemcpyDtoDAsync_v2), FAKE_FN(cuMemcpyDtoDAsync_v2_ptsz)},
    {"cuMemcpy2D", 3020, FAKE_FN(cuMemcpy2D_v2), FAKE_FN(cuMemcpy2D_v2_ptds)},
    {"cuMemcpy2DAsync", 3020, FAKE_FN(cuMemcpy2DAsync_v2), FAKE_FN(cuMemcpy2DAsync_v2_ptsz)},
    {"cuMemcpy3D", 3020, FAKE_FN(cuMemcpy3D_v2), FAKE_FN(cuMemcpy3D_v2_ptds)},
    {"cuMemcpy3DAsync", 3020, FAKE_FN(cuMemcpy3DAsync_v2), FAKE_FN(cuMemcpy3DAsync_v2_ptsz)},
    {"cuMemcpyPeer", 4000, FAKE_FN(cuMemcpyPeer), FAKE_FN(cuMemcpyPeer_ptds)},
    {"cuMemcpyPeerAsync", 4000, FAKE_FN(cuMemcpyPeerAsync), FAKE_FN(cuMemcpyPeerAsync_ptsz)},
    {"cuMemHostAlloc", 2020, FAKE_FN(cuMemHostAlloc), nullptr},
    {"cuMemAllocHost", 3020, FAKE_FN(cuMemAllocHost_v2), nullptr},
    {"cuMemHostRegister", 6050, FAKE_FN(cuMemHostRegister_v2), nullptr},
    {"cuMemHostUnregister", 4000, FAKE_FN(cuMemHostUnregister), nullptr},
    {"cuMemFreeHost", 2000, FAKE_FN(cuMemFreeHost), nullptr},
};

// The function for `symbol` with the highest version not above `version`.
CUresult Lookup(const char* symbol, void** pfn, int version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status);

}  // namespace

extern "C" {

FAKE_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                         cuuint64_t flags, CUdriverProcAddressQueryResult* status) {
  if (CUresult r = Injected()) return r;
  return Lookup(symbol, pfn, version, flags, status);
}

FAKE_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                      cuuint64_t flags) {
  if (CUresult r = Injected()) return r;
  return Lookup(symbol, pfn, version, flags, nullptr);
}

}  // extern "C"

namespace {

CUresult Lookup(const char* symbol, void** pfn, int version, cuuint64_t flags,
                CUdriverProcAddressQueryResult* status) {
  if (symbol == nullptr || pfn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ProcEntry* best = nullptr;
  for (const ProcEntry& e : kProcTable) {
    if (strcmp(e.symbol, symbol) != 0 || e.min_version > version) continue;
    if (best == nullptr || e.min_version > best->min_version) best = &e;
  }
  if (strcmp(symbol, "cuGetProcAddress") == 0 && version >= 11030) {
    *pfn = version >= 12000 ? FAKE_FN(cuGetProcAddress_v2) : FAKE_FN(cuGetProcAddress);
  } else if (best == nullptr) {
    *pfn = nullptr;
    if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return CUDA_ERROR_NOT_FOUND;
  } else {
    bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    *pfn = per_thread && best->per_thread != nullptr ? best->per_thread : best->legacy;
  }
  if (status != nullptr) *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}

}  // namespace
