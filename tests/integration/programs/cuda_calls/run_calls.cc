// Runs every call of the tables in one of the ways a program reaches CUDA,
// and the helpers the invokers share.
//
//   iotap_cuda_calls("direct", file)       each symbol as the linker binds it
//   iotap_cuda_calls("dlsym", file)        dlsym on each library's handle
//   iotap_cuda_calls("procaddress", file)  the driver's through cuGetProcAddress
//                                          (as a static cudart does), both
//                                          stream modes, cuGetProcAddress_v2
//                                          and the original
//
// `file` is a scratch file for the cuFile calls.

#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tests/integration/programs/cuda_calls/calls.h"

#undef cuGetProcAddress

namespace iotap::cuda_calls {

void MaybeFail(Context& c, Lib lib) {
  if (!FailsAt(c.index)) return;
  void (*fail)(int) = lib == Lib::kRuntime  ? c.fail_runtime
                      : lib == Lib::kDriver ? c.fail_driver
                                            : c.fail_cufile;
  fail(FailureCode(c.index));
}

void Fill(char* p, size_t n, int seed) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<char>(seed * 31 + i * 7 + 1);
}

void Clear(char* p, size_t n) { memset(p, 0, n); }

void Report(const char* symbol, const std::string& fields, long rc, bool data_ok) {
  printf("%s %s rc=%ld data=%s\n", symbol, fields.c_str(), rc,
         rc != 0   ? "-"
         : data_ok ? "ok"
                   : "bad");
  fflush(stdout);
}

std::string StreamText(const void* stream) {
  return absl::StrFormat("0x%x", reinterpret_cast<uintptr_t>(stream));
}

const char* KindName(cudaMemcpyKind kind) {
  switch (kind) {
    case cudaMemcpyHostToHost:
      return "HtoH";
    case cudaMemcpyHostToDevice:
      return "HtoD";
    case cudaMemcpyDeviceToHost:
      return "DtoH";
    case cudaMemcpyDeviceToDevice:
      return "DtoD";
    case cudaMemcpyDefault:
      return "Default";
  }
  return "?";
}

Plan PlanOf(Context& c, cudaMemcpyKind kind) {
  bool pinned = c.index % 2 == 0 && c.pinned != nullptr;
  char* host = pinned ? c.pinned : c.host;
  const char* label = pinned ? "pinned" : "pageable";
  switch (kind) {
    case cudaMemcpyHostToDevice:
      return {kind, host, c.device, label};
    case cudaMemcpyDeviceToHost:
      return {kind, c.device, host, label};
    case cudaMemcpyDeviceToDevice:
      return {kind, c.device, c.device2, "-"};
    case cudaMemcpyHostToHost:
      return {kind, host, c.host2, label};
    case cudaMemcpyDefault:
      return {kind, host, c.device, label};
  }
  return {kind, host, c.device, label};
}

Plan PlanOf(Context& c) {
  constexpr cudaMemcpyKind kKinds[] = {cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost,
                                       cudaMemcpyDeviceToDevice, cudaMemcpyHostToHost,
                                       cudaMemcpyDefault};
  return PlanOf(c, kKinds[c.index % 5]);
}

std::string CopyFields(const Plan& p, size_t bytes, const void* stream, bool async) {
  return absl::StrCat("kind=", KindName(p.kind), " bytes=", bytes,
                      " stream=", async ? StreamText(stream) : "-", " host=", p.host);
}

size_t PinnedBytes(const Context& c) { return 65536 + 4096 * static_cast<size_t>(c.index); }

void Allocated(Context& c, const std::string& releaser, void* p, size_t n) {
  if (c.pinned == nullptr) c.pinned = static_cast<char*>(p);
  c.to_release[releaser] = p;
  c.released_bytes[releaser] = n;
}

namespace {

template <typename Fn>
Fn Find(void* library, const char* name) {
  return reinterpret_cast<Fn>(dlsym(library, name));
}

struct Libraries {
  void* runtime = dlopen("libcudart.so.13", RTLD_NOW | RTLD_LOCAL);
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  void* cufile = dlopen("libcufile.so.0", RTLD_NOW | RTLD_LOCAL);
  void* Of(Lib lib) const {
    return lib == Lib::kRuntime ? runtime : lib == Lib::kDriver ? driver : cufile;
  }
};

// The pointer to call `call` through in `mode`, or null if the mode does not
// reach it (cuGetProcAddress knows only the driver).
void* Resolve(const std::string& mode, const Libraries& libs, const Call& call,
              PFN_cuGetProcAddress_v12000 get_v2, PFN_cuGetProcAddress_v11030 get_v1) {
  if (mode == "direct") return DirectAddress(call.symbol);
  if (mode == "dlsym") return dlsym(libs.Of(call.lib), call.symbol);
  if (call.proc_symbol == nullptr) return nullptr;
  void* fn = nullptr;
  cuuint64_t flags = call.per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
                                     : CU_GET_PROC_ADDRESS_LEGACY_STREAM;
  CUdriverProcAddressQueryResult status;
  // Alternate between the two cuGetProcAddress versions.
  CUresult r = call.per_thread ? get_v1(call.proc_symbol, &fn, 13000, flags)
                               : get_v2(call.proc_symbol, &fn, 13000, flags, &status);
  return r == CUDA_SUCCESS ? fn : nullptr;
}

// What cuGetProcAddress says of what the shim must not wrap: a version too
// old for the wrapper's ABI, and a name the driver does not have.
void CheckProcAddressEdges(const Libraries& libs, PFN_cuGetProcAddress_v12000 get_v2) {
  void* old_abi = nullptr;
  CUdriverProcAddressQueryResult status;
  CUresult r = get_v2("cuMemcpyHtoD", &old_abi, 3010, 0, &status);
  printf("procaddress cuMemcpyHtoD@3010 rc=%d same=%d\n", r,
         old_abi == dlsym(libs.driver, "iotap_fake_cuMemcpyHtoD_v1"));
  void* missing = reinterpret_cast<void*>(1);
  r = get_v2("cuNoSuchFunction", &missing, 13000, 0, &status);
  printf("procaddress cuNoSuchFunction rc=%d null=%d status=%d\n", r, missing == nullptr, status);
}

}  // namespace

int RunLifecycle();

int RunCalls(const std::string& mode, const std::string& file) {
  if (mode == "lifecycle") return RunLifecycle();
  Libraries libs;
  if (libs.runtime == nullptr || libs.driver == nullptr || libs.cufile == nullptr) {
    fprintf(stderr, "cannot load the CUDA test doubles: %s\n", dlerror());
    return 1;
  }
  Context c;
  c.fail_runtime = Find<void (*)(int)>(libs.runtime, "iotap_fake_cudart_fail_next");
  c.fail_driver = Find<void (*)(int)>(libs.driver, "iotap_fake_cuda_fail_next");
  c.fail_cufile = Find<void (*)(int)>(libs.cufile, "iotap_fake_cufile_fail_next");
  constexpr size_t kBuffer = 1 << 16;
  for (char** b : {&c.host, &c.host2, &c.device, &c.device2, &c.symbol}) {
    *b = static_cast<char*>(calloc(1, kBuffer));
  }
  if (c.fail_runtime == nullptr || c.fail_driver == nullptr || c.fail_cufile == nullptr) {
    fprintf(stderr, "the CUDA libraries loaded are not the test doubles\n");
    return 1;
  }
  c.fd = open(file.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
  std::string pattern(kFileBytes, '\0');
  Fill(pattern.data(), kFileBytes, 0);
  if (c.fd < 0 || pwrite(c.fd, pattern.data(), kFileBytes, 0) != static_cast<ssize_t>(kFileBytes)) {
    perror(file.c_str());
    return 1;
  }
  c.cufile_library = libs.cufile;
  // cuGetProcAddress itself, found as a static cudart finds it, and the
  // original asked for through the new one.
  auto get_v2 = Find<PFN_cuGetProcAddress_v12000>(libs.driver, "cuGetProcAddress_v2");
  PFN_cuGetProcAddress_v11030 get_v1 = nullptr;
  CUdriverProcAddressQueryResult status;
  get_v2("cuGetProcAddress", reinterpret_cast<void**>(&get_v1), 11030, 0, &status);
  if (mode == "procaddress") CheckProcAddressEdges(libs, get_v2);

  const struct {
    const Call* calls;
    size_t count;
  } tables[] = {{kRuntimeCalls, kRuntimeCallCount},
                {kDriverCalls, kDriverCallCount},
                {kCufileCalls, kCufileCallCount}};
  for (Phase phase : {Phase::kAllocate, Phase::kTransfer, Phase::kRelease}) {
    for (const auto& table : tables) {
      for (size_t i = 0; i < table.count; ++i) {
        const Call& call = table.calls[i];
        if (call.phase != phase) continue;
        void* fn = Resolve(mode, libs, call, get_v2, get_v1);
        if (fn == nullptr) continue;
        call.invoke(call.symbol, fn, c);
        ++c.index;
      }
    }
  }
  close(c.fd);
  return 0;
}

}  // namespace iotap::cuda_calls

extern "C" __attribute__((visibility("default"))) int iotap_cuda_calls(const char* mode,
                                                                       const char* file) {
  return iotap::cuda_calls::RunCalls(mode, file);
}
