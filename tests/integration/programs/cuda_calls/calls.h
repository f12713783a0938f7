// The CUDA calls that cuda_test makes under the shim, against the test
// doubles in tests/integration/cuda_fake/.
//
// Every wrapped entry point is one Call: its exported name, the name
// cuGetProcAddress knows it by, and an invoker that calls it through a
// function pointer with arguments derived from the call's number, checks
// what it did and prints one line, e.g.
//
//   cuMemcpyHtoDAsync_v2 kind=HtoD bytes=304 stream=0x1006 host=pinned rc=0 data=ok
//
// A line holds the call's inputs and what it returned, never an address, so
// runs with and without the shim print the same lines; cuda_test checks each
// recorded event against its line. How the pointer is obtained is the mode:
// the address of the linked symbol, dlsym on the library's handle, or
// cuGetProcAddress.

#ifndef IOTAP_TESTS_INTEGRATION_PROGRAMS_CUDA_CALLS_CALLS_H_
#define IOTAP_TESTS_INTEGRATION_PROGRAMS_CUDA_CALLS_CALLS_H_

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <string>

#include "interpose/cuda/cufile_api.h"

namespace iotap::cuda_calls {

enum class Lib { kRuntime, kDriver, kCufile };

// A run makes every allocation first, then every copy and file transfer,
// then every release.
enum class Phase { kAllocate, kTransfer, kRelease };

struct Context {
  int index = 0;           // number of the call being made
  char* pinned = nullptr;  // the run's first pinned allocation, for copies
  char* host = nullptr;    // pageable host memory
  char* host2 = nullptr;   // destination of host-to-host copies
  char* device = nullptr;  // "device" memory (host memory, for the fakes)
  char* device2 = nullptr;
  char* symbol = nullptr;  // a "__device__ variable"
  // Makes the next call into each fake fail with a code.
  void (*fail_runtime)(int) = nullptr;
  void (*fail_driver)(int) = nullptr;
  void (*fail_cufile)(int) = nullptr;
  // Host memory from the allocation calls, by the releasing call's symbol.
  std::map<std::string, void*> to_release;
  std::map<std::string, size_t> released_bytes;
  // The cuFile calls' file (its second half holds the pattern Fill(.., 0)
  // from kFilePatternOffset on), handle, and library for the functions the
  // shim does not wrap.
  int fd = -1;
  CUfileHandle_t handle = nullptr;
  void* cufile_library = nullptr;
};

using Invoker = void (*)(const char* symbol, void* fn, Context& c);

struct Call {
  const char* symbol;  // exported name
  Lib lib;
  Phase phase;
  const char* proc_symbol;  // cuGetProcAddress name (driver only)
  bool per_thread;          // a _ptds/_ptsz entry point
  Invoker invoke;
};

inline constexpr size_t kFileBytes = 1 << 20;
inline constexpr size_t kFilePatternOffset = kFileBytes / 2;

// Bytes of the call's 1D transfers (a different size for every call).
inline size_t BytesOf(int index) { return 256 + 8 * static_cast<size_t>(index); }
// Whether the call is made to fail, and with which code.
inline bool FailsAt(int index) { return index % 7 == 6; }
inline int FailureCode(int index) { return 100 + index; }
// The stream an asynchronous call passes (0 every third call).
inline void* StreamOf(int index) {
  return index % 3 == 0 ? nullptr : reinterpret_cast<void*>(0x1000 + index);
}

// Shared by the invokers (run_calls.cc).
// Makes the call about to be made fail if its number says so.
void MaybeFail(Context& c, Lib lib);
// Fills `n` bytes with a pattern of the call's number; clears `n` bytes.
void Fill(char* p, size_t n, int seed);
void Clear(char* p, size_t n);
// Prints a call's line: the symbol, `fields`, the return code and whether
// the data arrived ("-" when the call failed).
void Report(const char* symbol, const std::string& fields, long rc, bool data_ok);
std::string StreamText(const void* stream);

// Where a copy's data come from and go to: the kind cycles with the call's
// number (HtoD, DtoH, DtoD, HtoH, Default) and the host side alternates
// between pinned (even numbers) and pageable memory.
struct Plan {
  cudaMemcpyKind kind;
  char* src;
  char* dst;
  const char* host;  // "pinned", "pageable" or "-" (no host side)
};
Plan PlanOf(Context& c);
Plan PlanOf(Context& c, cudaMemcpyKind kind);
const char* KindName(cudaMemcpyKind kind);
// "kind=HtoD bytes=304 stream=0x1006 host=pinned" (stream "-" for a
// synchronous call).
std::string CopyFields(const Plan& p, size_t bytes, const void* stream, bool async);

// Pinned allocations: 64 KiB and 4 KiB more per call number. Allocated
// remembers one for the release call `releaser` (a symbol, "#2" for its
// second call) and makes the first the run's pinned buffer.
size_t PinnedBytes(const Context& c);
void Allocated(Context& c, const std::string& releaser, void* p, size_t n);

// The runtime, driver and cuFile invokers' tables (each *_calls.cc).
extern const Call kRuntimeCalls[];
extern const size_t kRuntimeCallCount;
extern const Call kDriverCalls[];
extern const size_t kDriverCallCount;
extern const Call kCufileCalls[];
extern const size_t kCufileCallCount;

// The address of an exported CUDA symbol as the linker resolves it for a
// program that calls it (direct_addresses.cc), or null.
void* DirectAddress(const char* symbol);

}  // namespace iotap::cuda_calls

#endif  // IOTAP_TESTS_INTEGRATION_PROGRAMS_CUDA_CALLS_CALLS_H_
