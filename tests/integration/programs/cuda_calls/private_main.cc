// cuda_calls_private LIBRARY MODE FILE: the calls of calls.h from a library
// loaded with dlopen(RTLD_LOCAL), as Python loads PyTorch's extensions: the
// CUDA libraries it depends on are then outside the global scope, where
// dlsym(RTLD_NEXT) does not look.
//
// cuda_calls_private none: loads nothing CUDA; looks cudaMemcpy up in the
// global scope and calls what it finds.

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "none") == 0) {
    auto memcpy_fn = reinterpret_cast<decltype(&cudaMemcpy)>(dlsym(RTLD_DEFAULT, "cudaMemcpy"));
    if (memcpy_fn == nullptr) {
      printf("probe cudaMemcpy absent\n");
    } else {
      char a[16] = {}, b[16] = {};
      printf("probe cudaMemcpy rc=%d\n", memcpy_fn(a, b, sizeof(a), cudaMemcpyHostToHost));
    }
    return 0;
  }
  if (argc != 4) {
    fprintf(stderr, "usage: cuda_calls_private LIBRARY MODE FILE | none\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  auto run = reinterpret_cast<int (*)(const char*, const char*)>(dlsym(lib, "iotap_cuda_calls"));
  return run(argv[2], argv[3]);
}
