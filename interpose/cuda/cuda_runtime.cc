// The CUDA runtime API's copies (cudaMemcpy and its 2D, 3D, symbol and peer
// forms, synchronous and asynchronous), for programs that call a shared
// libcudart. A statically linked cudart is seen through the driver API
// instead (cuda_driver.cc). The wrappers are in cuda_runtime_copies.inc.

#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {
namespace {

// Stream 0 of these entry points is the legacy default stream.
constexpr uint64_t kDefaultStream = 0;

}  // namespace
}  // namespace iotap::interpose

#include "interpose/cuda/cuda_runtime_copies.inc"

namespace iotap::interpose {

constinit const CudaEntryTable kCudaRuntimeTable = {
    kRuntimeCopyEntries, sizeof(kRuntimeCopyEntries) / sizeof(kRuntimeCopyEntries[0]),
    CudaLibrary::kRuntime, false};

}  // namespace iotap::interpose
