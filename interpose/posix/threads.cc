// Threads: pthread_create and pthread_cancel tell the POSIX wrappers that
// glibc's cancellation points are needed (core/direct_io.h). pthread_create
// starts each new thread through a trampoline, so
// that a thread that never makes an I/O call still has its page faults
// sampled (mapped/fault_sampler.h) from its first instruction on, while the
// process has data mappings. Nothing is recorded for the call itself.
//
// The trampoline's record comes from a fixed pool: the shim never allocates
// on the application's heap. When the pool is empty (more than kTrampolines
// threads created and not yet started), the thread starts as it would
// untraced; the sampler then reaches it only when it next opens events for
// every thread.

#include <errno.h>
#include <pthread.h>

#include <atomic>

#include "interpose/core/config.h"
#include "interpose/core/direct_io.h"
#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/mapped/fault_sampler.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(pthread_create);
IOTAP_REAL(pthread_cancel);

constexpr int kTrampolines = 256;

struct Trampoline {
  std::atomic<bool> used{false};
  void* (*start)(void*) = nullptr;
  void* arg = nullptr;
};
constinit Trampoline g_trampolines[kTrampolines];
constinit std::atomic<uint32_t> g_next_trampoline{0};

Trampoline* TakeTrampoline() {
  uint32_t first = g_next_trampoline.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < kTrampolines; ++i) {
    Trampoline& t = g_trampolines[(first + i) % kTrampolines];
    bool expected = false;
    if (t.used.compare_exchange_strong(expected, true, std::memory_order_acquire)) return &t;
  }
  return nullptr;
}

void* ThreadStart(void* p) {
  auto* t = static_cast<Trampoline*>(p);
  void* (*start)(void*) = t->start;
  void* arg = t->arg;
  t->used.store(false, std::memory_order_release);
  FaultsThreadStarted();
  return start(arg);
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                void* (*start)(void*), void* arg) noexcept {
  // The program's thread may cancel another, or be cancelled: glibc's
  // cancellation points from now on (core/direct_io.h).
  if (!tls_thread.busy) BlockDirectIo(kDirectThreads);
  // The shim's own threads (the writer) start as they are.
  Trampoline* t = nullptr;
  if ((g_active_layers.load(std::memory_order_relaxed) & kLayerMapped) != 0 && !tls_thread.busy) {
    t = TakeTrampoline();
  }
  if (t == nullptr) return real_pthread_create()(thread, attr, start, arg);
  t->start = start;
  t->arg = arg;
  int r = real_pthread_create()(thread, attr, ThreadStart, t);
  if (r != 0) t->used.store(false, std::memory_order_release);
  return r;
}

IOTAP_EXPORT int pthread_cancel(pthread_t thread) {
  BlockDirectIo(kDirectCancel);
  return real_pthread_cancel()(thread);
}
