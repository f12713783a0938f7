// The address of every wrapped CUDA symbol as the linker resolves it for this
// library: what a program that calls the symbol calls. Under the shim that is
// the shim's wrapper (it precedes the CUDA libraries in the global scope).
// The per-thread-default-stream names are declared with the type of their
// legacy twin, which is theirs too.

#include <cudaTypedefs.h>
#include <string.h>

#include "tests/integration/programs/cuda_calls/calls.h"

#undef cuGetProcAddress

extern "C" {
CUresult cuGetProcAddress(const char* symbol, void** pfn, int version, cuuint64_t flags);

#define SAME_TYPE(twin, name) decltype(::twin) name;
SAME_TYPE(cudaMemcpy, cudaMemcpy_ptds)
SAME_TYPE(cudaMemcpyAsync, cudaMemcpyAsync_ptsz)
SAME_TYPE(cudaMemcpy2D, cudaMemcpy2D_ptds)
SAME_TYPE(cudaMemcpy2DAsync, cudaMemcpy2DAsync_ptsz)
SAME_TYPE(cudaMemcpy3D, cudaMemcpy3D_ptds)
SAME_TYPE(cudaMemcpy3DAsync, cudaMemcpy3DAsync_ptsz)
SAME_TYPE(cudaMemcpyToSymbol, cudaMemcpyToSymbol_ptds)
SAME_TYPE(cudaMemcpyFromSymbol, cudaMemcpyFromSymbol_ptds)
SAME_TYPE(cudaMemcpyToSymbolAsync, cudaMemcpyToSymbolAsync_ptsz)
SAME_TYPE(cudaMemcpyFromSymbolAsync, cudaMemcpyFromSymbolAsync_ptsz)
SAME_TYPE(cuMemcpy, cuMemcpy_ptds)
SAME_TYPE(cuMemcpyAsync, cuMemcpyAsync_ptsz)
SAME_TYPE(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds)
SAME_TYPE(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds)
SAME_TYPE(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds)
SAME_TYPE(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz)
SAME_TYPE(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz)
SAME_TYPE(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz)
SAME_TYPE(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds)
SAME_TYPE(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz)
SAME_TYPE(cuMemcpy3D_v2, cuMemcpy3D_v2_ptds)
SAME_TYPE(cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz)
SAME_TYPE(cuMemcpyPeer, cuMemcpyPeer_ptds)
SAME_TYPE(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz)
}

namespace iotap::cuda_calls {
namespace {

struct Address {
  const char* name;
  void* address;
};

#define A(f) \
  { #f, reinterpret_cast < void*>(&::f) }
const Address kAddresses[] = {
    A(cudaMemcpy),
    A(cudaMemcpyAsync),
    A(cudaMemcpy2D),
    A(cudaMemcpy2DAsync),
    A(cudaMemcpy3D),
    A(cudaMemcpy3DAsync),
    A(cudaMemcpyToSymbol),
    A(cudaMemcpyFromSymbol),
    A(cudaMemcpyToSymbolAsync),
    A(cudaMemcpyFromSymbolAsync),
    A(cudaMemcpyPeer),
    A(cudaMemcpyPeerAsync),
    A(cudaMemcpy_ptds),
    A(cudaMemcpyAsync_ptsz),
    A(cudaMemcpy2D_ptds),
    A(cudaMemcpy2DAsync_ptsz),
    A(cudaMemcpy3D_ptds),
    A(cudaMemcpy3DAsync_ptsz),
    A(cudaMemcpyToSymbol_ptds),
    A(cudaMemcpyFromSymbol_ptds),
    A(cudaMemcpyToSymbolAsync_ptsz),
    A(cudaMemcpyFromSymbolAsync_ptsz),
    A(cudaHostAlloc),
    A(cudaMallocHost),
    A(cudaHostRegister),
    A(cudaHostUnregister),
    A(cudaFreeHost),
    A(cuMemcpy),
    A(cuMemcpyAsync),
    A(cuMemcpyHtoD_v2),
    A(cuMemcpyDtoH_v2),
    A(cuMemcpyDtoD_v2),
    A(cuMemcpyHtoDAsync_v2),
    A(cuMemcpyDtoHAsync_v2),
    A(cuMemcpyDtoDAsync_v2),
    A(cuMemcpy2D_v2),
    A(cuMemcpy2DAsync_v2),
    A(cuMemcpy3D_v2),
    A(cuMemcpy3DAsync_v2),
    A(cuMemcpyPeer),
    A(cuMemcpyPeerAsync),
    A(cuMemcpy_ptds),
    A(cuMemcpyAsync_ptsz),
    A(cuMemcpyHtoD_v2_ptds),
    A(cuMemcpyDtoH_v2_ptds),
    A(cuMemcpyDtoD_v2_ptds),
    A(cuMemcpyHtoDAsync_v2_ptsz),
    A(cuMemcpyDtoHAsync_v2_ptsz),
    A(cuMemcpyDtoDAsync_v2_ptsz),
    A(cuMemcpy2D_v2_ptds),
    A(cuMemcpy2DAsync_v2_ptsz),
    A(cuMemcpy3D_v2_ptds),
    A(cuMemcpy3DAsync_v2_ptsz),
    A(cuMemcpyPeer_ptds),
    A(cuMemcpyPeerAsync_ptsz),
    A(cuMemHostAlloc),
    A(cuMemAllocHost_v2),
    A(cuMemHostRegister_v2),
    A(cuMemHostUnregister),
    A(cuMemFreeHost),
    A(cuGetProcAddress),
    A(cuGetProcAddress_v2),
    A(cuFileHandleRegister),
    A(cuFileHandleDeregister),
    A(cuFileRead),
    A(cuFileWrite),
    A(cuFileReadAsync),
    A(cuFileWriteAsync),
    A(cuFileBatchIOSubmit),
};

}  // namespace

void* DirectAddress(const char* symbol) {
  for (const Address& a : kAddresses) {
    if (strcmp(a.name, symbol) == 0) return a.address;
  }
  return nullptr;
}

}  // namespace iotap::cuda_calls
