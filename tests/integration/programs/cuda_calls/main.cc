// cuda_calls MODE FILE: the calls of calls.h, from a program linked against
// the CUDA libraries (here the test doubles, through libiotap_cuda_calls.so).

#include <stdio.h>

extern "C" int iotap_cuda_calls(const char* mode, const char* file);

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cuda_calls direct|dlsym|procaddress|lifecycle FILE\n");
    return 2;
  }
  return iotap_cuda_calls(argv[1], argv[2]);
}
