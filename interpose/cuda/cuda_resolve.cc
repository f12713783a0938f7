#include "interpose/cuda/cuda_resolve.h"

#include <link.h>
#include <string.h>

#include "interpose/core/recorder.h"
#include "interpose/cuda/cuda_layer.h"

namespace iotap::interpose {

constinit __thread bool tls_in_cuda __attribute__((tls_model("initial-exec"))) = false;

constinit const CudaEntryTable* const kCudaEntryTables[] = {
    &kCudaRuntimeTable,     &kCudaRuntimePtdsTable, &kCudaDriverTable,      &kCudaDriverPtdsTable,
    &kCudaHostRuntimeTable, &kCudaHostDriverTable,  &kCudaProcAddressTable, &kCufileTable,
};
constinit const uint32_t kCudaEntryTableCount =
    sizeof(kCudaEntryTables) / sizeof(kCudaEntryTables[0]);

namespace {

constinit std::atomic<DlsymFunction> g_real_dlsym{nullptr};

void* NoDlsym(void*, const char*) noexcept { return nullptr; }

const char* BaseName(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

bool StartsWith(const char* s, const char* prefix) {
  return strncmp(s, prefix, strlen(prefix)) == 0;
}

// Whether a file name is that of a library of kind `lib`. PyTorch wheels of
// old carried "libcudart-1a2b3c4d.so.12", hence the loose runtime match.
bool NamesLibrary(const char* path, CudaLibrary lib) {
  const char* base = BaseName(path);
  switch (lib) {
    case CudaLibrary::kRuntime:
      return StartsWith(base, "libcudart") && strstr(base, ".so") != nullptr;
    case CudaLibrary::kDriver:
      return StartsWith(base, "libcuda.so");
    case CudaLibrary::kCufile:
      return StartsWith(base, "libcufile.so");
  }
  return false;
}

struct Search {
  CudaLibrary lib;
  char path[4096];
  bool found;
};

int VisitObject(struct dl_phdr_info* info, size_t, void* data) {
  Search* s = static_cast<Search*>(data);
  if (info->dlpi_name == nullptr || !NamesLibrary(info->dlpi_name, s->lib)) return 0;
  size_t n = strlen(info->dlpi_name);
  if (n >= sizeof(s->path)) return 0;
  memcpy(s->path, info->dlpi_name, n + 1);
  s->found = true;
  return 1;
}

// `name` in the first loaded library of kind `lib`, for libraries loaded
// without RTLD_GLOBAL, which dlsym(RTLD_NEXT) does not search.
void* FindInLoaded(CudaLibrary lib, const char* name) {
  Search s{lib, {}, false};
  dl_iterate_phdr(VisitObject, &s);  // no dl* call inside: it holds a loader lock
  if (!s.found) return nullptr;
  // RTLD_NOLOAD: only a library already there. The reference is kept on
  // purpose, so the library outlives the pointers taken from it.
  void* handle = dlopen(s.path, RTLD_LAZY | RTLD_NOLOAD);
  return handle != nullptr ? RealDlsym()(handle, name) : nullptr;
}

}  // namespace

DlsymFunction RealDlsym() {
  DlsymFunction f = g_real_dlsym.load(std::memory_order_acquire);
  if (__builtin_expect(f != nullptr, 1)) return f;
  // glibc 2.34 moved dlsym into libc (GLIBC_2.34); before, libdl had it as
  // GLIBC_2.2.5 (x86-64) or GLIBC_2.17 (AArch64).
  for (const char* version : {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"}) {
    f = reinterpret_cast<DlsymFunction>(dlvsym(RTLD_NEXT, "dlsym", version));
    if (f != nullptr) break;
  }
  if (f == nullptr) f = NoDlsym;
  g_real_dlsym.store(f, std::memory_order_release);
  return f;
}

void* ResolveCuda(CudaLibrary lib, const char* name, std::atomic<void*>* slot) {
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  void* f = RealDlsym()(RTLD_NEXT, name);
  if (f == nullptr) f = FindInLoaded(lib, name);
  tls_thread.busy = was_busy;
  if (f != nullptr) BindReal(slot, f);
  return slot->load(std::memory_order_acquire);
}

bool InCudaLibrary(const void* fn, CudaLibrary lib) {
  Dl_info info;
  return dladdr(fn, &info) != 0 && info.dli_fname != nullptr && NamesLibrary(info.dli_fname, lib);
}

bool BindReal(std::atomic<void*>* slot, void* real) {
  void* expected = nullptr;
  if (slot->compare_exchange_strong(expected, real, std::memory_order_acq_rel)) return true;
  return expected == real;
}

}  // namespace iotap::interpose
