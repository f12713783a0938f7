// The CUDA driver API's per-thread-default-stream copies: cuMemcpy_ptds,
// cuMemcpyHtoD_v2_ptds, cuMemcpyHtoDAsync_v2_ptsz and the rest, which
// cuGetProcAddress returns for CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
// (cudart asks for them when the program uses the per-thread default
// stream). They are the wrappers of cuda_driver_copies.inc, compiled with
// cuda.h renaming every copy function to its per-thread form, so the header
// still declares each signature.

#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1

#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {
namespace {

// Stream 0 of these entry points, and their synchronous forms, mean the
// calling thread's default stream: CU_STREAM_PER_THREAD, ((CUstream)0x2).
constexpr uint64_t kDefaultStream = 2;

}  // namespace
}  // namespace iotap::interpose

#include "interpose/cuda/cuda_driver_copies.inc"

namespace iotap::interpose {

constinit const CudaEntryTable kCudaDriverPtdsTable = {
    kDriverCopyEntries, sizeof(kDriverCopyEntries) / sizeof(kDriverCopyEntries[0]),
    CudaLibrary::kDriver, true};

}  // namespace iotap::interpose
