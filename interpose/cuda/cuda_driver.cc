// The CUDA driver API's copies (cuMemcpy*), which a statically linked cudart
// (nvcc's default) and PyTorch reach through cuGetProcAddress, and other
// programs by linking libcuda or with dlsym. The wrappers are in
// cuda_driver_copies.inc.

#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {
namespace {

// Stream 0 of these entry points is the legacy default stream.
constexpr uint64_t kDefaultStream = 0;

}  // namespace
}  // namespace iotap::interpose

#include "interpose/cuda/cuda_driver_copies.inc"

namespace iotap::interpose {

constinit const CudaEntryTable kCudaDriverTable = {
    kDriverCopyEntries, sizeof(kDriverCopyEntries) / sizeof(kDriverCopyEntries[0]),
    CudaLibrary::kDriver, false};

}  // namespace iotap::interpose
