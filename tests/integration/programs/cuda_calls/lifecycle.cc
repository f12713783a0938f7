// The life of pinned ranges, as cuda_test's PinnedLifecycle expects it step
// by step: a pointer inside a registered range is pinned, and pageable again
// once the range is unregistered; a failed allocation or release changes
// nothing; a second registration of the same memory fails and keeps it
// pinned. Also the edges of a copy's description: a 3D copy with a CUDA
// array counts elements, and an invalid kind passes through. Every runtime
// call here reaches the driver inside the fake cudart, and must still be one
// event.

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/integration/programs/cuda_calls/calls.h"

namespace iotap::cuda_calls {
namespace {

void Step(const char* name, long rc) {
  printf("lifecycle %s rc=%ld\n", name, rc);
  fflush(stdout);
}

}  // namespace

int RunLifecycle() {
  auto fail_runtime = reinterpret_cast<void (*)(int)>(
      dlsym(dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD), "iotap_fake_cudart_fail_next"));
  if (fail_runtime == nullptr) {
    fprintf(stderr, "the CUDA runtime loaded is not the test double\n");
    return 1;
  }
  char* device = static_cast<char*>(calloc(1, 1 << 16));
  char* buf = static_cast<char*>(aligned_alloc(4096, 8192));
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x77);

  Step("register", cudaHostRegister(buf, 8192, 0));
  Step("copy-registered", cudaMemcpyAsync(device, buf + 100, 300, cudaMemcpyHostToDevice, stream));
  Step("unregister", cudaHostUnregister(buf));
  Step("copy-unregistered",
       cudaMemcpyAsync(device, buf + 100, 301, cudaMemcpyHostToDevice, stream));

  void* p = nullptr;
  Step("alloc", cudaHostAlloc(&p, 4096, 0));
  Step("copy-last-byte",
       cudaMemcpy(device, static_cast<char*>(p) + 4095, 1, cudaMemcpyHostToDevice));
  Step("free", cudaFreeHost(p));
  Step("free-again", cudaFreeHost(p));

  void* q = nullptr;
  fail_runtime(2);  // cudaErrorMemoryAllocation
  Step("alloc-failing", cudaHostAlloc(&q, 8192, 0));

  Step("driver-register", cuMemHostRegister(buf, 8192, 0));
  Step("driver-register-again", cuMemHostRegister(buf, 8192, 0));
  Step("driver-copy-registered", cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(device), buf, 302));
  Step("driver-unregister", cuMemHostUnregister(buf));

  cudaMemcpy3DParms array_copy = {};
  array_copy.srcArray = reinterpret_cast<cudaArray_t>(0x10);
  array_copy.dstPtr = cudaPitchedPtr{device, 256, 256, 2};
  array_copy.extent = cudaExtent{16, 2, 3};
  array_copy.kind = cudaMemcpyDeviceToHost;
  Step("copy-3d-array", cudaMemcpy3D(&array_copy));
  Step("copy-bad-kind", cudaMemcpy(device, buf, 303, static_cast<cudaMemcpyKind>(7)));
  return 0;
}

}  // namespace iotap::cuda_calls
