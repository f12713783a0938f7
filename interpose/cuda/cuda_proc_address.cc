// cuGetProcAddress: how cudart (static or shared), PyTorch and
// cudaGetDriverEntryPoint reach the driver. The real one is called as the
// program asked; if it found a function that the shim wraps, the program
// gets the wrapper's cuGetProcAddress instance instead, with the function
// the driver returned behind it (cuda_resolve.h).
//
// The driver is asked for a base name ("cuMemcpyHtoD"), a CUDA version and a
// stream mode, and picks the ABI from the version (cuMemcpyHtoD before 3.2
// took 32-bit device pointers) and the per-thread-default-stream form from
// the flags. The shim substitutes only for versions whose ABI its wrapper
// has, and picks its per-thread or legacy instance from the same flags;
// CU_GET_PROC_ADDRESS_DEFAULT is the legacy form (cuda.h's inline wrapper
// adds the per-thread flag for programs compiled for per-thread streams).
//
// cuGetProcAddress can return itself, so both of its versions are wrapped
// the same way. Substitution never depends on the calling thread's state:
// the pointer handed out lives as long as the program keeps it.

#include <cudaTypedefs.h>
#include <string.h>

#include <type_traits>

#include "interpose/cuda/cuda_layer.h"

// cuda.h maps cuGetProcAddress to cuGetProcAddress_v2 (CUDA 12.0) and no
// longer declares the original, which libcuda still exports.
#undef cuGetProcAddress

namespace iotap::interpose {
namespace {

using GetProcAddressV1Fn = PFN_cuGetProcAddress_v11030;
using GetProcAddressV2Fn = PFN_cuGetProcAddress_v12000;
static_assert(std::is_same_v<GetProcAddressV2Fn, decltype(&::cuGetProcAddress_v2)>);

constinit CudaReal<GetProcAddressV1Fn> real_cuGetProcAddress{"cuGetProcAddress",
                                                             CudaLibrary::kDriver};
IOTAP_CUDA_REAL(CudaLibrary::kDriver, cuGetProcAddress_v2);

bool VersionMatches(const CudaEntry& entry, int version) {
  return version >= entry.min_version && (entry.max_version == 0 || version < entry.max_version);
}

// What the program gets for `symbol` when the driver found `real`.
void* Substitute(const char* symbol, int version, cuuint64_t flags, void* real) {
  if (real == nullptr || symbol == nullptr ||
      (g_active_layers.load(std::memory_order_relaxed) & kLayerCuda) == 0) {
    return real;
  }
  bool per_thread = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  // A function without a per-thread form (cuMemHostAlloc) is the same for
  // both stream modes.
  const CudaEntry* fallback = nullptr;
  for (uint32_t t = 0; t < kCudaEntryTableCount; ++t) {
    const CudaEntryTable& table = *kCudaEntryTables[t];
    if (table.lib != CudaLibrary::kDriver) continue;
    for (uint32_t i = 0; i < table.count; ++i) {
      const CudaEntry& entry = table.entries[i];
      if (entry.symbol == nullptr || strcmp(entry.symbol, symbol) != 0 ||
          !VersionMatches(entry, version)) {
        continue;
      }
      if (table.per_thread == per_thread) {
        return BindReal(entry.proc_real, real) ? entry.proc_wrapper() : real;
      }
      if (!table.per_thread) fallback = &entry;
    }
  }
  if (fallback == nullptr) return real;
  return BindReal(fallback->proc_real, real) ? fallback->proc_wrapper() : real;
}

template <CudaVia kVia>
CUresult GetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags) {
  CUresult r = real_cuGetProcAddress.Get(kVia)(symbol, pfn, version, flags);
  if (r == CUDA_SUCCESS && pfn != nullptr) *pfn = Substitute(symbol, version, flags, *pfn);
  return r;
}

template <CudaVia kVia>
CUresult GetProcAddressV2(const char* symbol, void** pfn, int version, cuuint64_t flags,
                          CUdriverProcAddressQueryResult* status) {
  CUresult r = real_cuGetProcAddress_v2.Get(kVia)(symbol, pfn, version, flags, status);
  if (r == CUDA_SUCCESS && pfn != nullptr) *pfn = Substitute(symbol, version, flags, *pfn);
  return r;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT CUresult cuGetProcAddress(const char* symbol, void** pfn, int version,
                                       cuuint64_t flags) {
  return GetProcAddress<kViaExport>(symbol, pfn, version, flags);
}
static_assert(std::is_same_v<GetProcAddressV1Fn, decltype(&::cuGetProcAddress)>);

IOTAP_EXPORT CUresult cuGetProcAddress_v2(const char* symbol, void** pfn, int version,
                                          cuuint64_t flags,
                                          CUdriverProcAddressQueryResult* status) {
  return GetProcAddressV2<kViaExport>(symbol, pfn, version, flags, status);
}

namespace iotap::interpose {
namespace {

constinit const CudaEntry kEntries[] = {
    IOTAP_CUDA_DRIVER_ENTRY(cuGetProcAddress, GetProcAddress, "cuGetProcAddress", 11030, 12000),
    IOTAP_CUDA_DRIVER_ENTRY(cuGetProcAddress_v2, GetProcAddressV2, "cuGetProcAddress", 12000, 0),
};

}  // namespace

constinit const CudaEntryTable kCudaProcAddressTable = {
    kEntries, sizeof(kEntries) / sizeof(kEntries[0]), CudaLibrary::kDriver, false};

}  // namespace iotap::interpose
