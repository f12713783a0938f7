// The CUDA copy loop the overhead harness runs, traced and untraced, against
// the test doubles of tests/integration/cuda_fake/ (an 8-byte memcpy each),
// so what it measures is the wrapper's cost, not a GPU's.
//
//   cuda_copy_worker MODE IGNORED CALLS [THREADS]
//
//   runtime-pinned    cudaMemcpyAsync HtoD from pinned memory (the fake
//                     cudart calls the driver inside: one traced call and one
//                     nested pass-through, as with a shared libcudart)
//   runtime-pageable  the same from pageable memory
//   driver-proc       cuMemcpyHtoDAsync from pinned memory through a pointer
//                     from cuGetProcAddress, as a static cudart or PyTorch calls it
//
// 1000 pinned ranges are registered first, so each pinned lookup searches a
// table of realistic size. Prints what io_worker prints: ns_per_call,
// cpu_ns_per_call, calls, rss_growth_kib. The second argument stands for
// io_worker's file and is not used.

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cstdio>
#include <string>
#include <vector>

namespace {

double Seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

long RssKib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (strncmp(line, "VmRSS:", 6) == 0) kib = std::atol(line + 6);
  }
  std::fclose(f);
  return kib;
}

struct Job {
  std::string mode;
  long calls;
  char* pinned;
  PFN_cuMemcpyHtoDAsync_v3020 htod_async;
  double wall = 0;
  double cpu = 0;
};

void* Run(void* arg) {
  Job* job = static_cast<Job*>(arg);
  char* pageable = static_cast<char*>(malloc(4096));
  char device[64];
  cudaStream_t stream = reinterpret_cast<cudaStream_t>(0x10);
  double w0 = Seconds(CLOCK_MONOTONIC);
  double c0 = Seconds(CLOCK_THREAD_CPUTIME_ID);
  if (job->mode == "driver-proc") {
    CUdeviceptr dst = reinterpret_cast<CUdeviceptr>(device);
    for (long i = 0; i < job->calls; ++i) {
      if (job->htod_async(dst, job->pinned, 8, reinterpret_cast<CUstream>(stream)) != 0) exit(3);
    }
  } else {
    const char* src = job->mode == "runtime-pinned" ? job->pinned : pageable;
    for (long i = 0; i < job->calls; ++i) {
      if (cudaMemcpyAsync(device, src, 8, cudaMemcpyHostToDevice, stream) != 0) exit(3);
    }
  }
  job->cpu = Seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
  job->wall = Seconds(CLOCK_MONOTONIC) - w0;
  free(pageable);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr,
                 "usage: cuda_copy_worker runtime-pinned|runtime-pageable|driver-proc - CALLS "
                 "[THREADS]\n");
    return 1;
  }
  int threads = argc > 4 ? std::atoi(argv[4]) : 1;
  std::vector<void*> ranges;
  for (int i = 0; i < 1000; ++i) {
    void* p = nullptr;
    if (cudaHostAlloc(&p, 4096, 0) != cudaSuccess) return 2;
    ranges.push_back(p);
  }
  char* pinned = static_cast<char*>(ranges[500]);
  PFN_cuMemcpyHtoDAsync_v3020 htod_async = nullptr;
  CUdriverProcAddressQueryResult status;
  if (cuGetProcAddress("cuMemcpyHtoDAsync", reinterpret_cast<void**>(&htod_async), 13000, 0,
                       &status) != CUDA_SUCCESS) {
    return 2;
  }
  std::vector<Job> jobs(threads, Job{argv[1], std::atol(argv[3]), pinned, htod_async});
  long rss0 = RssKib();
  std::vector<pthread_t> ids(threads);
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], nullptr, Run, &jobs[t]);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], nullptr);
  long rss1 = RssKib();
  double wall = 0, cpu = 0;
  for (const Job& j : jobs) {
    wall += j.wall / j.calls;
    cpu += j.cpu / j.calls;
  }
  std::printf("ns_per_call=%.2f cpu_ns_per_call=%.2f calls=%ld rss_growth_kib=%ld\n",
              wall / threads * 1e9, cpu / threads * 1e9, jobs[0].calls * threads, rss1 - rss0);
  for (void* p : ranges) cudaFreeHost(p);
  return 0;
}
