// Where the CUDA wrappers find the functions they wrap, and how wrappers are
// handed out in place of functions a program looks up at run time.
//
// A program reaches a CUDA entry point in one of three ways, and the shim
// follows each:
//
// 1. By linking: the call binds to the shim's exported wrapper, which finds
//    the real function with dlsym(RTLD_NEXT) or, when the library was loaded
//    privately (dlopen without RTLD_GLOBAL, as Python extensions are), among
//    the loaded objects by file name (libcudart*, libcuda.so*, libcufile*).
// 2. By dlsym(handle, "cuMemcpyHtoD_v2") on a handle of a CUDA library: the
//    shim's dlsym (cuda_dlsym.cc) returns the wrapper, keeping what the real
//    dlsym returned as the function behind it.
// 3. By cuGetProcAddress, which is how cudart (static or shared) and PyTorch
//    reach the driver: the shim's cuGetProcAddress (cuda_proc_address.cc)
//    returns a second instance of the wrapper, whose real function is what
//    the real cuGetProcAddress returned.
//
// Each wrapped function therefore has two real-function slots: one behind
// the exported wrapper (ways 1 and 2) and one behind the cuGetProcAddress
// instance (way 3). A slot is set once; if a later lookup yields a different
// function for the same slot (a second copy of the library), the program gets
// that function unwrapped rather than the wrong one wrapped.
//
// Nothing here links a CUDA library: a process without one never resolves
// anything, and a missing function makes its wrapper return an error code
// (see CudaMissingResult in cuda_layer.h), never ends the process.

#ifndef IOTAP_INTERPOSE_CUDA_CUDA_RESOLVE_H_
#define IOTAP_INTERPOSE_CUDA_CUDA_RESOLVE_H_

#include <dlfcn.h>
#include <stdint.h>

#include <atomic>

namespace iotap::interpose {

enum class CudaLibrary : uint8_t {
  kRuntime,  // libcudart.so.N, or a wheel's libcudart-HASH.so.N
  kDriver,   // libcuda.so.1
  kCufile,   // libcufile.so.0
};

// The C library's dlsym, found with dlvsym so that the shim's own dlsym is
// never in the way.
using DlsymFunction = decltype(&::dlsym);
DlsymFunction RealDlsym();

// Finds `name` in a library of kind `lib` (dlsym(RTLD_NEXT), then the loaded
// objects) and stores it in `slot` unless the slot is already set. Returns
// the slot's function, or null if there is none yet.
void* ResolveCuda(CudaLibrary lib, const char* name, std::atomic<void*>* slot);

// Whether the code at `fn` belongs to a library of kind `lib`.
bool InCudaLibrary(const void* fn, CudaLibrary lib);

// Makes `real` the function behind a wrapper: true if `slot` was empty or
// already held `real`, false if it holds another function.
bool BindReal(std::atomic<void*>* slot, void* real);

// The two instances of a wrapper (see the top of this file).
enum CudaVia : int {
  kViaExport = 0,       // the exported symbol; also what dlsym hands out
  kViaProcAddress = 1,  // what cuGetProcAddress hands out
};

// One wrapped entry point, for dlsym and cuGetProcAddress to substitute.
// Tables of these are constant-initialised, so they hold functions that
// return the wrappers' addresses rather than casts.
struct CudaEntry {
  const char* name;          // exported name, "cuMemcpyHtoD_v2_ptds"
  std::atomic<void*>* real;  // slot behind the exported wrapper
  void* (*wrapper)();        // the exported wrapper
  // For cuGetProcAddress (driver entries only; symbol is null otherwise):
  const char* symbol;  // the name asked for, "cuMemcpyHtoD"
  int min_version;     // the CUDA versions (1000 * major + 10 * minor)
  int max_version;     // [min, max) that get this ABI; max 0 = no end
  std::atomic<void*>* proc_real;
  void* (*proc_wrapper)();
};

struct CudaEntryTable {
  const CudaEntry* entries;
  uint32_t count;
  CudaLibrary lib;
  // The table's entries are the per-thread default stream forms (_ptds,
  // _ptsz), which cuGetProcAddress gives for
  // CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM.
  bool per_thread;
};

// The wrappers of each CUDA source file (its table is at its end).
extern const CudaEntryTable kCudaRuntimeTable;      // cuda_runtime.cc
extern const CudaEntryTable kCudaRuntimePtdsTable;  // cuda_runtime_ptds.cc
extern const CudaEntryTable kCudaDriverTable;       // cuda_driver.cc
extern const CudaEntryTable kCudaDriverPtdsTable;   // cuda_driver_ptds.cc
extern const CudaEntryTable kCudaHostRuntimeTable;  // cuda_host_memory.cc
extern const CudaEntryTable kCudaHostDriverTable;   // cuda_host_memory.cc
extern const CudaEntryTable kCudaProcAddressTable;  // cuda_proc_address.cc
extern const CudaEntryTable kCufileTable;           // cufile.cc

// Every table, for the lookups of cuda_dlsym.cc and cuda_proc_address.cc.
extern const CudaEntryTable* const kCudaEntryTables[];
extern const uint32_t kCudaEntryTableCount;

template <auto kFunction>
void* FunctionAddress() {
  return reinterpret_cast<void*>(kFunction);
}

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CUDA_CUDA_RESOLVE_H_
