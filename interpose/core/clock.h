// Time stamps for the shim's hot path.
//
// Reading CLOCK_MONOTONIC through the vDSO costs about 25 ns; an event needs
// two reads, which alone would exceed the shim's budget per call. Where the
// CPU has an invariant TSC (and the kernel's clock source trusts it), events
// take raw TSC ticks (about 10 ns) and the writer converts them to
// CLOCK_MONOTONIC nanoseconds off the hot path, against (tsc, monotonic)
// anchors it takes at every flush. Elsewhere events read CLOCK_MONOTONIC.
//
//   uint64_t t0 = clock::Now();
//   ...
//   uint64_t ns = g_clock.ToMonotonicNs(t0);   // writer side

#ifndef IOTAP_INTERPOSE_CORE_CLOCK_H_
#define IOTAP_INTERPOSE_CORE_CLOCK_H_

#include <stdint.h>
#include <time.h>

#include <atomic>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

namespace iotap::interpose {

// Whether Now() returns TSC ticks. Set once by ClockInit before any event.
extern bool g_use_tsc;

// The configured wait threshold in raw units (waits/ records no wait that
// took less). Until the first Reanchor measures the tick rate, a tick counts
// as a nanosecond, which on any TSC of 1 GHz or more records a little more,
// never less, than asked.
extern std::atomic<uint64_t> g_wait_threshold_raw;

inline uint64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

inline uint64_t RealtimeNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + ts.tv_nsec;
}

// Clock `clock` in ns, signed; -1 if it cannot be read (the CPU clock of a
// thread that ended).
inline int64_t ClockNs(clockid_t clock) {
  struct timespec ts;
  if (clock_gettime(clock, &ts) != 0) return -1;
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The raw time stamp of an event: TSC ticks or monotonic ns.
inline uint64_t Now() {
#if defined(__x86_64__)
  if (__builtin_expect(g_use_tsc, 1)) return __rdtsc();
#endif
  return MonotonicNs();
}

// Converts raw time stamps to CLOCK_MONOTONIC ns. Owned by the writer; not
// thread-safe (callers hold the writer lock).
class ClockConverter {
 public:
  // Chooses the time source (the TSC only if `allow_tsc` and the CPU and
  // kernel both vouch for it); call once at start-up.
  void Init(bool allow_tsc);
  // Sets the wait threshold (g_wait_threshold_raw) to `ns`, converted with
  // the tick rate as it is known, and again at every Reanchor.
  void SetWaitThreshold(uint64_t ns);
  // Takes a fresh (raw, monotonic) anchor and refines the tick rate from the
  // distance to the first anchor.
  void Reanchor();
  uint64_t ToMonotonicNs(uint64_t raw) const {
    if (!g_use_tsc) return raw;
    int64_t ticks = static_cast<int64_t>(raw - anchor_raw_);
    return anchor_ns_ + static_cast<int64_t>(static_cast<double>(ticks) * ns_per_tick_);
  }
  bool uses_tsc() const { return g_use_tsc; }

 private:
  uint64_t first_raw_ = 0;
  uint64_t first_ns_ = 0;
  uint64_t anchor_raw_ = 0;
  uint64_t anchor_ns_ = 0;
  double ns_per_tick_ = 1.0;
  uint64_t wait_threshold_ns_ = 0;
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_CLOCK_H_
