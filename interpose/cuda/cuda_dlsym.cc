// dlsym, for programs that look CUDA entry points up in a library handle.
//
// cudart, static or shared, loads the driver with dlopen("libcuda.so.1") and
// takes cuGetProcAddress from it with dlsym; Python bindings and lazy loaders
// (ctypes, PyTorch's NVRTC stub) do the same for other names. When the
// handle belongs to a CUDA library and the name is one the shim wraps, this
// returns the wrapper, with what the real dlsym found behind it (see
// cuda_resolve.h). Every other call goes to glibc's dlsym untouched.
//
// dlsym is called by everything, so the test for "is this ours" is cheap and
// comes first: a pseudo-handle (RTLD_DEFAULT, RTLD_NEXT) or a name that does
// not start with "cu" goes straight through.
//
// "Straight through" must be a tail call: glibc resolves RTLD_NEXT and
// RTLD_DEFAULT relative to the object that called dlsym, which it finds from
// the return address. A jump to glibc's dlsym leaves the caller's return
// address in place; a call would make every RTLD_NEXT lookup in the process
// relative to libiotap.so. This file is always compiled with optimisation
// and without a stack protector (interpose/CMakeLists.txt) so that the
// compiler emits the jump, and cuda_dlsym_test checks the lookups it affects.

#include <dlfcn.h>
#include <string.h>

#include "interpose/core/config.h"
#include "interpose/core/io_event.h"
#include "interpose/core/recorder.h"
#include "interpose/cuda/cuda_resolve.h"

namespace iotap::interpose {
namespace {

// Whether `name` looked up in `handle` is the shim's business; if it is,
// `*result` is what dlsym returns: the wrapper, or glibc's answer when it is
// not a function of a CUDA library or another function is already behind the
// wrapper.
bool CudaLookup(void* handle, const char* name, void** result) {
  if (handle == RTLD_DEFAULT || handle == RTLD_NEXT || name == nullptr) return false;
  if (name[0] != 'c' || name[1] != 'u') return false;
  if ((g_active_layers.load(std::memory_order_relaxed) & kLayerCuda) == 0) return false;
  for (uint32_t t = 0; t < kCudaEntryTableCount; ++t) {
    const CudaEntryTable& table = *kCudaEntryTables[t];
    for (uint32_t i = 0; i < table.count; ++i) {
      const CudaEntry& entry = table.entries[i];
      if (strcmp(entry.name, name) != 0) continue;
      // A specific handle: glibc's answer does not depend on the caller.
      void* real = RealDlsym()(handle, name);
      *result = real;
      if (real != nullptr && InCudaLibrary(real, table.lib) && BindReal(entry.real, real)) {
        *result = entry.wrapper();
      }
      return true;
    }
  }
  return false;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT void* dlsym(void* __restrict handle, const char* __restrict name) noexcept {
  void* result;
  if (CudaLookup(handle, name, &result)) return result;
  return RealDlsym()(handle, name);  // a tail call: see the top of the file
}
