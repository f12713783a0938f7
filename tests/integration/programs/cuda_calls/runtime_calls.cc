// The runtime API's calls: every copy entry point and its per-thread twin,
// and the pinned-memory calls.

#include <stdlib.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "tests/integration/programs/cuda_calls/calls.h"

namespace iotap::cuda_calls {
namespace {

template <typename Fn>
Fn As(void* fn) {
  return reinterpret_cast<Fn>(fn);
}

// One 1D copy through `copy(dst, src, n)`.
template <typename CopyFn>
void Copy1D(const char* symbol, Context& c, const Plan& p, const void* stream, bool async,
            CopyFn copy) {
  size_t n = BytesOf(c.index);
  Fill(p.src, n, c.index);
  Clear(p.dst, n);
  MaybeFail(c, Lib::kRuntime);
  cudaError_t r = copy(p.dst, p.src, n);
  Report(symbol, CopyFields(p, n, stream, async), r, memcmp(p.dst, p.src, n) == 0);
}

// A 2D copy of (64 + index) bytes by 4 rows, pitch 256.
template <typename CopyFn>
void Copy2D(const char* symbol, Context& c, const void* stream, bool async, CopyFn copy) {
  Plan p = PlanOf(c);
  size_t width = 64 + c.index, height = 4, pitch = 256;
  Fill(p.src, pitch * height, c.index);
  Clear(p.dst, pitch * height);
  MaybeFail(c, Lib::kRuntime);
  cudaError_t r = copy(p, width, height, pitch);
  bool ok = true;
  for (size_t y = 0; y < height; ++y)
    ok = ok && memcmp(p.dst + y * pitch, p.src + y * pitch, width) == 0;
  Report(symbol, CopyFields(p, width * height, stream, async), r, ok);
}

// A 3D copy of (32 + index) bytes by 2 rows by 2 slices, pitch 256.
cudaMemcpy3DParms Params3D(const Plan& p, size_t width) {
  cudaMemcpy3DParms params = {};
  params.srcPtr = cudaPitchedPtr{p.src, 256, 256, 2};
  params.dstPtr = cudaPitchedPtr{p.dst, 256, 256, 2};
  params.extent = cudaExtent{width, 2, 2};
  params.kind = p.kind;
  return params;
}

template <typename CopyFn>
void Copy3D(const char* symbol, Context& c, const void* stream, bool async, CopyFn copy) {
  Plan p = PlanOf(c);
  size_t width = 32 + c.index;
  Fill(p.src, 256 * 4, c.index);
  Clear(p.dst, 256 * 4);
  cudaMemcpy3DParms params = Params3D(p, width);
  MaybeFail(c, Lib::kRuntime);
  cudaError_t r = copy(&params);
  bool ok = true;
  for (size_t row = 0; row < 4; ++row)
    ok = ok && memcmp(p.dst + row * 256, p.src + row * 256, width) == 0;
  Report(symbol, CopyFields(p, width * 4, stream, async), r, ok);
}

void Memcpy(const char* s, void* fn, Context& c) {
  Copy1D(s, c, PlanOf(c), nullptr, false, [&](void* d, const void* src, size_t n) {
    return As<decltype(&::cudaMemcpy)>(fn)(d, src, n, PlanOf(c).kind);
  });
}
void MemcpyAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy1D(s, c, PlanOf(c), st, true, [&](void* d, const void* src, size_t n) {
    return As<decltype(&::cudaMemcpyAsync)>(fn)(d, src, n, PlanOf(c).kind,
                                                static_cast<cudaStream_t>(st));
  });
}
void Memcpy2D(const char* s, void* fn, Context& c) {
  Copy2D(s, c, nullptr, false, [&](const Plan& p, size_t w, size_t h, size_t pitch) {
    return As<decltype(&::cudaMemcpy2D)>(fn)(p.dst, pitch, p.src, pitch, w, h, p.kind);
  });
}
void Memcpy2DAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy2D(s, c, st, true, [&](const Plan& p, size_t w, size_t h, size_t pitch) {
    return As<decltype(&::cudaMemcpy2DAsync)>(fn)(p.dst, pitch, p.src, pitch, w, h, p.kind,
                                                  static_cast<cudaStream_t>(st));
  });
}
void Memcpy3D(const char* s, void* fn, Context& c) {
  Copy3D(s, c, nullptr, false,
         [&](const cudaMemcpy3DParms* p) { return As<decltype(&::cudaMemcpy3D)>(fn)(p); });
}
void Memcpy3DAsync(const char* s, void* fn, Context& c) {
  void* st = StreamOf(c.index);
  Copy3D(s, c, st, true, [&](const cudaMemcpy3DParms* p) {
    return As<decltype(&::cudaMemcpy3DAsync)>(fn)(p, static_cast<cudaStream_t>(st));
  });
}

// Symbols: the device side is the symbol (at offset 16).
cudaMemcpyKind SymbolKind(Context& c, cudaMemcpyKind host_kind) {
  constexpr cudaMemcpyKind kOthers[] = {cudaMemcpyDeviceToDevice, cudaMemcpyDefault};
  return c.index % 3 == 0 ? host_kind : kOthers[c.index % 3 - 1];
}
Plan ToSymbolPlan(Context& c) {
  Plan p = PlanOf(c, SymbolKind(c, cudaMemcpyHostToDevice));
  if (p.kind == cudaMemcpyDeviceToDevice) p.src = c.device;
  p.dst = c.symbol + 16;
  return p;
}
Plan FromSymbolPlan(Context& c) {
  Plan p = PlanOf(c, SymbolKind(c, cudaMemcpyDeviceToHost));
  if (p.kind == cudaMemcpyDefault) p.dst = p.src;  // the host buffer
  if (p.kind == cudaMemcpyDeviceToDevice) p.dst = c.device2;
  p.src = c.symbol + 16;
  return p;
}

void ToSymbol(const char* s, void* fn, Context& c) {
  Plan p = ToSymbolPlan(c);
  Copy1D(s, c, p, nullptr, false, [&](void*, const void* src, size_t n) {
    return As<decltype(&::cudaMemcpyToSymbol)>(fn)(c.symbol, src, n, 16, p.kind);
  });
}
void FromSymbol(const char* s, void* fn, Context& c) {
  Plan p = FromSymbolPlan(c);
  Copy1D(s, c, p, nullptr, false, [&](void* dst, const void*, size_t n) {
    return As<decltype(&::cudaMemcpyFromSymbol)>(fn)(dst, c.symbol, n, 16, p.kind);
  });
}
void ToSymbolAsync(const char* s, void* fn, Context& c) {
  Plan p = ToSymbolPlan(c);
  void* st = StreamOf(c.index);
  Copy1D(s, c, p, st, true, [&](void*, const void* src, size_t n) {
    return As<decltype(&::cudaMemcpyToSymbolAsync)>(fn)(c.symbol, src, n, 16, p.kind,
                                                        static_cast<cudaStream_t>(st));
  });
}
void FromSymbolAsync(const char* s, void* fn, Context& c) {
  Plan p = FromSymbolPlan(c);
  void* st = StreamOf(c.index);
  Copy1D(s, c, p, st, true, [&](void* dst, const void*, size_t n) {
    return As<decltype(&::cudaMemcpyFromSymbolAsync)>(fn)(dst, c.symbol, n, 16, p.kind,
                                                          static_cast<cudaStream_t>(st));
  });
}

Plan PeerPlan(Context& c) { return {cudaMemcpyDeviceToDevice, c.device, c.device2, "-"}; }
std::string PeerFields(size_t n, const void* stream, bool async) {
  return absl::StrCat("kind=Peer bytes=", n, " stream=", async ? StreamText(stream) : "-",
                      " host=-");
}
void Peer(const char* s, void* fn, Context& c) {
  Plan p = PeerPlan(c);
  size_t n = BytesOf(c.index);
  Fill(p.src, n, c.index);
  Clear(p.dst, n);
  MaybeFail(c, Lib::kRuntime);
  cudaError_t r = As<decltype(&::cudaMemcpyPeer)>(fn)(p.dst, 1, p.src, 0, n);
  Report(s, PeerFields(n, nullptr, false), r, memcmp(p.dst, p.src, n) == 0);
}
void PeerAsync(const char* s, void* fn, Context& c) {
  Plan p = PeerPlan(c);
  size_t n = BytesOf(c.index);
  void* st = StreamOf(c.index);
  Fill(p.src, n, c.index);
  Clear(p.dst, n);
  MaybeFail(c, Lib::kRuntime);
  cudaError_t r = As<decltype(&::cudaMemcpyPeerAsync)>(fn)(p.dst, 1, p.src, 0, n,
                                                           static_cast<cudaStream_t>(st));
  Report(s, PeerFields(n, st, true), r, memcmp(p.dst, p.src, n) == 0);
}

void HostAlloc(const char* s, void* fn, Context& c) {
  void* p = nullptr;
  size_t n = PinnedBytes(c);
  cudaError_t r = As<decltype(&::cudaHostAlloc)>(fn)(&p, n, cudaHostAllocPortable);
  if (r == cudaSuccess) Allocated(c, "cudaFreeHost", p, n);
  Report(s, absl::StrCat("bytes=", n, " flags=", cudaHostAllocPortable), r, r == cudaSuccess);
}
void MallocHost(const char* s, void* fn, Context& c) {
  void* p = nullptr;
  size_t n = PinnedBytes(c);
  cudaError_t r = As<decltype(&::cudaMallocHost)>(fn)(&p, n);
  // Released by the second cudaFreeHost call: see the table below.
  if (r == cudaSuccess) Allocated(c, "cudaFreeHost#2", p, n);
  Report(s, absl::StrCat("bytes=", n, " flags=0"), r, r == cudaSuccess);
}
void HostRegister(const char* s, void* fn, Context& c) {
  size_t n = PinnedBytes(c);
  void* p = aligned_alloc(4096, n);
  cudaError_t r = As<decltype(&::cudaHostRegister)>(fn)(p, n, cudaHostRegisterPortable);
  if (r == cudaSuccess) Allocated(c, "cudaHostUnregister", p, n);
  Report(s, absl::StrCat("bytes=", n, " flags=", cudaHostRegisterPortable), r, r == cudaSuccess);
}

// Releases the memory the matching allocation call got.
template <typename Fn>
void Release(const char* s, const char* key, void* fn, Context& c) {
  void* p = c.to_release[key];
  cudaError_t r = As<Fn>(fn)(p);
  Report(s, absl::StrCat("bytes=", c.released_bytes[key]), r, r == cudaSuccess);
}
void FreeHost(const char* s, void* fn, Context& c) {
  Release<decltype(&::cudaFreeHost)>(s, "cudaFreeHost", fn, c);
}
void FreeHost2(const char* s, void* fn, Context& c) {
  Release<decltype(&::cudaFreeHost)>(s, "cudaFreeHost#2", fn, c);
}
void HostUnregister(const char* s, void* fn, Context& c) {
  Release<decltype(&::cudaHostUnregister)>(s, "cudaHostUnregister", fn, c);
}

}  // namespace

// clang-format off
#define RUNTIME_COPY(legacy, per_thread, invoker)                     \
  {legacy, Lib::kRuntime, Phase::kTransfer, nullptr, false, invoker}, \
  {per_thread, Lib::kRuntime, Phase::kTransfer, nullptr, true, invoker}
// clang-format on

const Call kRuntimeCalls[] = {
    {"cudaHostAlloc", Lib::kRuntime, Phase::kAllocate, nullptr, false, HostAlloc},
    {"cudaMallocHost", Lib::kRuntime, Phase::kAllocate, nullptr, false, MallocHost},
    {"cudaHostRegister", Lib::kRuntime, Phase::kAllocate, nullptr, false, HostRegister},
    RUNTIME_COPY("cudaMemcpy", "cudaMemcpy_ptds", Memcpy),
    RUNTIME_COPY("cudaMemcpyAsync", "cudaMemcpyAsync_ptsz", MemcpyAsync),
    RUNTIME_COPY("cudaMemcpy2D", "cudaMemcpy2D_ptds", Memcpy2D),
    RUNTIME_COPY("cudaMemcpy2DAsync", "cudaMemcpy2DAsync_ptsz", Memcpy2DAsync),
    RUNTIME_COPY("cudaMemcpy3D", "cudaMemcpy3D_ptds", Memcpy3D),
    RUNTIME_COPY("cudaMemcpy3DAsync", "cudaMemcpy3DAsync_ptsz", Memcpy3DAsync),
    RUNTIME_COPY("cudaMemcpyToSymbol", "cudaMemcpyToSymbol_ptds", ToSymbol),
    RUNTIME_COPY("cudaMemcpyFromSymbol", "cudaMemcpyFromSymbol_ptds", FromSymbol),
    RUNTIME_COPY("cudaMemcpyToSymbolAsync", "cudaMemcpyToSymbolAsync_ptsz", ToSymbolAsync),
    RUNTIME_COPY("cudaMemcpyFromSymbolAsync", "cudaMemcpyFromSymbolAsync_ptsz", FromSymbolAsync),
    {"cudaMemcpyPeer", Lib::kRuntime, Phase::kTransfer, nullptr, false, Peer},
    {"cudaMemcpyPeerAsync", Lib::kRuntime, Phase::kTransfer, nullptr, false, PeerAsync},
    {"cudaFreeHost", Lib::kRuntime, Phase::kRelease, nullptr, false, FreeHost},
    {"cudaFreeHost", Lib::kRuntime, Phase::kRelease, nullptr, false, FreeHost2},
    {"cudaHostUnregister", Lib::kRuntime, Phase::kRelease, nullptr, false, HostUnregister},
};
const size_t kRuntimeCallCount = sizeof(kRuntimeCalls) / sizeof(kRuntimeCalls[0]);

}  // namespace iotap::cuda_calls
