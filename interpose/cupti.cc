// Device-side timing through CUPTI (IOTAP_CUPTI=1): the hook every CUDA
// wrapper runs on its first call. Collection itself follows.

#include "interpose/cuda_layer.h"

namespace iotap::interpose {

constinit std::atomic<bool> g_cupti_unchecked{true};

void CuptiFirstCall() { g_cupti_unchecked.store(false, std::memory_order_relaxed); }

}  // namespace iotap::interpose
