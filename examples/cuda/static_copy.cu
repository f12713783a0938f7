// A CUDA program as nvcc builds it by default, with the CUDA runtime linked
// statically: its cudaMemcpy calls never pass through a shared libcudart,
// so iotap sees them at the driver (through the cuGetProcAddress that the
// static runtime takes from libcuda.so.1).
//
//   nvcc -O2 -o static_copy static_copy.cu      (-cudart static is the default)
//   static_copy MANIFEST
//
// Copies host-to-device from pinned memory (cudaMallocHost) and pageable
// memory (malloc), synchronously and asynchronously, with sizes no other copy
// has, and writes the manifest check_trace.py compares with the trace.

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr size_t kPinnedBytes = 3000017;  // odd sizes, to be found in the trace
constexpr size_t kPageableBytes = 2000029;
constexpr int kSyncCopies = 5;
constexpr int kAsyncCopies = 3;

int Check(cudaError_t r, const char* what) {
  if (r != cudaSuccess) {
    std::fprintf(stderr, "static_copy: %s: %s\n", what, cudaGetErrorString(r));
    std::exit(3);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: static_copy MANIFEST\n");
    return 2;
  }
  void* device = nullptr;
  void* pinned = nullptr;
  void* pageable = std::malloc(kPageableBytes);
  Check(cudaMalloc(&device, kPinnedBytes), "cudaMalloc");
  Check(cudaMallocHost(&pinned, kPinnedBytes), "cudaMallocHost");
  for (int i = 0; i < kSyncCopies; ++i) {
    Check(cudaMemcpy(device, pinned, kPinnedBytes, cudaMemcpyHostToDevice), "cudaMemcpy pinned");
    Check(cudaMemcpy(device, pageable, kPageableBytes, cudaMemcpyHostToDevice),
          "cudaMemcpy pageable");
  }
  for (int i = 0; i < kAsyncCopies; ++i) {
    Check(cudaMemcpyAsync(device, pinned, kPinnedBytes, cudaMemcpyHostToDevice, 0),
          "cudaMemcpyAsync pinned");
  }
  Check(cudaStreamSynchronize(0), "cudaStreamSynchronize");
  Check(cudaFreeHost(pinned), "cudaFreeHost");
  Check(cudaFree(device), "cudaFree");
  std::free(pageable);

  std::FILE* f = std::fopen(argv[1], "w");
  if (f == nullptr) return 2;
  std::fprintf(f,
               "{\"method\": \"static cudart\", \"driver\": true, \"moved\": ["
               "{\"bytes\": %zu, \"pinned\": true, \"count\": %d}, "
               "{\"bytes\": %zu, \"pinned\": false, \"count\": %d}]}\n",
               kPinnedBytes, kSyncCopies + kAsyncCopies, kPageableBytes, kSyncCopies);
  std::fclose(f);
  std::printf("static_copy: %d pinned and %d pageable host-to-device copies\n",
              kSyncCopies + kAsyncCopies, kSyncCopies);
  return 0;
}
