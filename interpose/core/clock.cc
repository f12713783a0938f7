#include "interpose/core/clock.h"
#include "interpose/core/raw_syscall.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace iotap::interpose {

constinit bool g_use_tsc = false;
constinit std::atomic<uint64_t> g_wait_threshold_raw{0};

namespace {

// The shortest span over which the tick rate is measured before events are
// converted with it; the rate's error is about 50 ns divided by this span.
constexpr uint64_t kMinCalibrationNs = 1000000;

bool KernelTrustsTsc() {
  // Raw syscalls: the shim must not trace its own reads.
  int fd = static_cast<int>(syscall(
      SYS_openat, AT_FDCWD,
      "/sys/devices/system/clocksource/clocksource0/current_clocksource",
      O_RDONLY | O_CLOEXEC));
  if (fd < 0) return true;  // no sysfs: rely on the CPU's invariant-TSC bit
  char buf[64] = {};
  long n = RawSyscall(SYS_read, fd, buf, sizeof(buf) - 1);
  RawSyscall(SYS_close, fd);
  if (n <= 0) return true;
  return strncmp(buf, "tsc", 3) == 0 || strncmp(buf, "kvm-clock", 9) == 0 ||
         strncmp(buf, "hyperv_clocksource_tsc_page", 27) == 0;
}

bool CpuHasInvariantTsc() {
#if defined(__x86_64__)
  unsigned eax, ebx, ecx, edx;
  if (!__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) || eax < 0x80000007u) {
    return false;
  }
  __get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx);
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

// Reads the raw clock and CLOCK_MONOTONIC as close together as possible.
void ReadPair(uint64_t* raw, uint64_t* ns) {
  uint64_t best_gap = ~0ull;
  for (int i = 0; i < 3; ++i) {
    uint64_t a = Now();
    uint64_t m = MonotonicNs();
    uint64_t b = Now();
    if (b - a < best_gap) {
      best_gap = b - a;
      *raw = a + (b - a) / 2;
      *ns = m;
    }
  }
}

}  // namespace

void ClockConverter::Init(bool allow_tsc) {
  g_use_tsc = allow_tsc && CpuHasInvariantTsc() && KernelTrustsTsc();
  ReadPair(&first_raw_, &first_ns_);
  anchor_raw_ = first_raw_;
  anchor_ns_ = first_ns_;
}

void ClockConverter::Reanchor() {
  if (!g_use_tsc) return;
  uint64_t raw, ns;
  ReadPair(&raw, &ns);
  // The first conversion may come within a millisecond of start-up; wait
  // until the span is long enough for an accurate rate (once per process).
  while (ns - first_ns_ < kMinCalibrationNs) {
    ReadPair(&raw, &ns);
  }
  ns_per_tick_ = static_cast<double>(ns - first_ns_) /
                 static_cast<double>(raw - first_raw_);
  anchor_raw_ = raw;
  anchor_ns_ = ns;
  SetWaitThreshold(wait_threshold_ns_);
}

void ClockConverter::SetWaitThreshold(uint64_t ns) {
  wait_threshold_ns_ = ns;
  uint64_t raw = g_use_tsc ? static_cast<uint64_t>(static_cast<double>(ns) / ns_per_tick_) : ns;
  g_wait_threshold_raw.store(raw, std::memory_order_relaxed);
}

}  // namespace iotap::interpose
