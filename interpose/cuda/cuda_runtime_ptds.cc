// The CUDA runtime API's per-thread-default-stream copies: cudaMemcpy_ptds,
// cudaMemcpyAsync_ptsz and the rest, which programs built with
// `nvcc --default-stream per-thread` (or CUDA_API_PER_THREAD_DEFAULT_STREAM)
// call. They are the wrappers of cuda_runtime_copies.inc, compiled with the
// runtime header renaming every copy function to its per-thread form, so the
// header still declares each signature.

#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1

#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {
namespace {

// Stream 0 of these entry points, and their synchronous forms, mean the
// calling thread's default stream: cudaStreamPerThread, ((cudaStream_t)0x2).
constexpr uint64_t kDefaultStream = 2;

}  // namespace
}  // namespace iotap::interpose

#include "interpose/cuda/cuda_runtime_copies.inc"

namespace iotap::interpose {

constinit const CudaEntryTable kCudaRuntimePtdsTable = {
    kRuntimeCopyEntries, sizeof(kRuntimeCopyEntries) / sizeof(kRuntimeCopyEntries[0]),
    CudaLibrary::kRuntime, true};

}  // namespace iotap::interpose
