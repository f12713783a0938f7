#include "interpose/core/raw_syscall.h"
#include "interpose/file/packets.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "interpose/core/config.h"
#include "interpose/core/ops.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/file/kept_fd.h"

namespace iotap::interpose {

namespace {

constexpr uint32_t kFormatVersion = 1;
constexpr char kShimVersion[] = IOTAP_VERSION;  // the project's (CMakeLists.txt)
// The header keeps at most this much of the command line.
constexpr size_t kMaxArgvBytes = 64 * 1024;

constinit int g_argc = 0;
constinit char** g_argv = nullptr;

// Variables worth keeping for grouping processes into ranks and jobs.
constexpr const char* kEnvNames[] = {
    "RANK",          "LOCAL_RANK",          "WORLD_SIZE",         "LOCAL_WORLD_SIZE",
    "GROUP_RANK",    "NODE_RANK",           "TORCHELASTIC_RUN_ID", "OMPI_COMM_WORLD_RANK",
    "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
    "PMIX_RANK",     "MPI_LOCALRANKID",     "SLURM_PROCID",       "SLURM_LOCALID",
    "SLURM_NTASKS",  "SLURM_JOB_ID",        "SLURM_STEP_ID",      "SLURM_NODEID",
    "PBS_JOBID",     "LSB_JOBID",           "CUDA_VISIBLE_DEVICES",
};
constexpr const char* kRankNames[] = {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
                                      "PMIX_RANK", "SLURM_PROCID"};
constexpr const char* kLocalRankNames[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "MPI_LOCALRANKID", "SLURM_LOCALID"};
constexpr const char* kWorldSizeNames[] = {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
                                           "PMI_SIZE", "SLURM_NTASKS"};
constexpr const char* kJobIdNames[] = {"SLURM_JOB_ID", "PBS_JOBID", "LSB_JOBID",
                                       "TORCHELASTIC_RUN_ID"};

template <size_t N>
long FirstNumber(const char* const (&names)[N], long fallback) {
  for (const char* name : names) {
    const char* v = getenv(name);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    long n = strtol(v, &end, 10);
    if (*end == '\0') return n;
  }
  return fallback;
}

// Reads a small file with raw syscalls (the shim does not trace itself).
long ReadSmallFile(const char* path, char* buf, size_t cap) {
  int fd = static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return -1;
  long n = RawSyscall(SYS_read, fd, buf, cap);
  RawSyscall(SYS_close, fd);
  return n;
}

// /proc/self/schedstat, read every sample interval through one descriptor
// (kept_fd.h explains why). Guarded by the writer lock, as every encoder is.
constinit KeptFd g_schedstat;

long ReadSchedstat(char* buf, size_t cap) {
  int fd = g_schedstat.Get();
  if (fd < 0) {
    fd = static_cast<int>(
        RawSyscall(SYS_openat, AT_FDCWD, "/proc/self/schedstat", O_RDONLY | O_CLOEXEC));
    if (fd < 0) return -1;
    if (!g_schedstat.Adopt(fd)) {
      long n = RawSyscall(SYS_read, fd, buf, cap);
      RawSyscall(SYS_close, fd);
      return n;
    }
    fd = g_schedstat.Get();
    if (fd < 0) return -1;
  }
  return RawSyscall(SYS_pread64, fd, buf, cap, 0);
}

}  // namespace

void ResetProcFilesInChild() { g_schedstat.Close(); }

void SetArgv(int argc, char** argv) {
  g_argc = argc;
  g_argv = argv;
}

void EncodeProcessHeader(WireWriter* w, const ProcessInfo& info,
                         const ClockConverter& clock) {
  size_t packet = w->BeginNested(1);
  size_t h = w->BeginNested(1);
  w->Varint(1, kFormatVersion);
  w->String(2, kShimVersion);
  w->Varint(3, static_cast<uint64_t>(info.pid));
  w->Varint(4, static_cast<uint64_t>(info.ppid));
  struct utsname uts;
  const char* host = TraceHostname(&uts);
  if (host[0] != '\0') w->String(5, host);
  char buf[PATH_MAX];
  long n = RawSyscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", buf, sizeof(buf) - 1);
  if (n > 0) w->Bytes(6, buf, static_cast<size_t>(n));
  size_t argv_bytes = 0;
  for (int i = 0; i < g_argc && g_argv != nullptr && g_argv[i] != nullptr; ++i) {
    size_t len = strlen(g_argv[i]);
    if (argv_bytes + len > kMaxArgvBytes) break;
    argv_bytes += len;
    w->Bytes(7, g_argv[i], len);
  }
  if (RawSyscall(SYS_getcwd, buf, sizeof(buf)) > 0) w->String(8, buf);
  w->Varint(9, getuid());
  n = ReadSmallFile("/proc/sys/kernel/random/boot_id", buf, 64);
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ')) --n;
  if (n > 0) w->Bytes(10, buf, static_cast<size_t>(n));
  w->Varint(11, info.start_monotonic_ns);
  w->Varint(12, info.start_realtime_ns);
  if (g_config.session[0] != '\0') w->String(13, g_config.session);
  for (const char* name : kEnvNames) {
    const char* v = getenv(name);
    if (v == nullptr) continue;
    size_t var = w->BeginNested(14);
    w->String(1, name);
    w->String(2, v);
    w->EndNested(var);
  }
  w->Varint(15, static_cast<uint64_t>(static_cast<int64_t>(FirstNumber(kRankNames, -1))));
  w->Varint(16,
            static_cast<uint64_t>(static_cast<int64_t>(FirstNumber(kLocalRankNames, -1))));
  w->Varint(17, static_cast<uint64_t>(FirstNumber(kWorldSizeNames, 0)));
  for (const char* name : kJobIdNames) {
    const char* v = getenv(name);
    if (v != nullptr && *v != '\0') {
      w->String(18, v);
      break;
    }
  }
  w->Varint(19, info.forked ? 2 : 1);
  w->Varint(20, clock.uses_tsc() ? 1 : 2);
  w->Varint(21, g_config.flush_interval_ms);
  w->Varint(22, g_config.buffer_events);
  for (uint32_t bit = 1; bit < kLayerAll; bit <<= 1) {
    if (g_config.layers & bit) w->String(23, LayerName(bit));
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus > 0) w->Varint(24, static_cast<uint64_t>(cpus));
  w->VarintIfNonZero(33, g_config.py_sample_hz);
  if (g_config.layers & kLayerWaits) w->Varint(35, g_config.wait_threshold_ns);
  w->EndNested(h);
  w->EndNested(packet);
}

uint64_t TraceRealtimeNs() {
  return RealtimeNs() + static_cast<uint64_t>(g_config.test_clock_offset_ns);
}

const char* TraceHostname(struct utsname* uts) {
  if (g_config.test_hostname[0] != '\0') return g_config.test_hostname;
  return uname(uts) == 0 ? uts->nodename : "";
}

void EncodeClockSnapshot(WireWriter* w, uint64_t recorded, uint64_t dropped) {
  uint64_t m0 = MonotonicNs();
  uint64_t r = TraceRealtimeNs();
  uint64_t m1 = MonotonicNs();
  size_t packet = w->BeginNested(1);
  size_t c = w->BeginNested(2);
  w->Varint(1, m0 + (m1 - m0) / 2);
  w->Varint(2, r);
  w->Varint(3, (m1 - m0) / 2);
  w->VarintIfNonZero(4, recorded);
  w->VarintIfNonZero(5, dropped);
  w->EndNested(c);
  w->EndNested(packet);
}

void EncodeResourceSample(WireWriter* w) {
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) != 0) return;
  auto ns = [](const struct timeval& tv) {
    return static_cast<uint64_t>(tv.tv_sec) * 1000000000ull +
           static_cast<uint64_t>(tv.tv_usec) * 1000ull;
  };
  size_t packet = w->BeginNested(1);
  size_t s = w->BeginNested(6);
  w->Varint(1, MonotonicNs());
  w->Varint(2, ns(ru.ru_utime));
  w->Varint(3, ns(ru.ru_stime));
  w->Varint(4, static_cast<uint64_t>(ru.ru_maxrss));
  w->VarintIfNonZero(5, static_cast<uint64_t>(ru.ru_nvcsw));
  w->VarintIfNonZero(6, static_cast<uint64_t>(ru.ru_nivcsw));
  w->VarintIfNonZero(7, static_cast<uint64_t>(ru.ru_minflt));
  w->VarintIfNonZero(8, static_cast<uint64_t>(ru.ru_majflt));
  // "<on-cpu ns> <run-queue ns> <timeslices>" for the process's main thread.
  char sched[96];
  long n = ReadSchedstat(sched, sizeof(sched) - 1);
  if (n > 0) {
    sched[n] = '\0';
    char* after_first = nullptr;
    strtoull(sched, &after_first, 10);
    if (after_first != sched) w->VarintIfNonZero(9, strtoull(after_first, nullptr, 10));
  }
  w->EndNested(s);
  w->EndNested(packet);
}

void EncodeEnd(WireWriter* w, int reason, int code, bool code_known,
               uint64_t recorded, uint64_t dropped) {
  size_t packet = w->BeginNested(1);
  size_t e = w->BeginNested(5);
  w->Varint(1, static_cast<uint64_t>(reason));
  w->Varint(2, static_cast<uint64_t>(static_cast<int64_t>(code)));
  w->Bool(3, code_known);
  w->Varint(4, MonotonicNs());
  w->Varint(5, TraceRealtimeNs());
  w->Varint(6, recorded);
  w->Varint(7, dropped);
  w->EndNested(e);
  w->EndNested(packet);
}

void EncodeExecNotice(WireWriter* w, const char* path, bool spawn) {
  size_t packet = w->BeginNested(1);
  size_t e = w->BeginNested(10);
  w->Varint(1, MonotonicNs());
  if (path != nullptr) w->Bytes(2, path, strnlen(path, PATH_MAX));
  if (spawn) w->Bool(3, true);
  w->EndNested(e);
  w->EndNested(packet);
}

bool EncodeChunk(WireWriter* w, const Ring& ring, uint64_t first, uint32_t count,
                 uint64_t first_seq, uint64_t dropped_before,
                 const ClockConverter& clock, ChunkScratch* scratch) {
  if (static_cast<size_t>(count) * 10 > scratch->capacity || scratch->times == nullptr) {
    return false;
  }
  const uint64_t mask = ring.capacity - 1;
  auto at = [&](uint32_t i) -> const RawEvent& {
    return ring.events[(first + i) & mask];
  };
  const uint64_t time_unit = g_config.time_unit_ns;
  // Each event's start and end in time units, converted once: the
  // conversion and the division are most of the cost of a chunk. Raw time
  // stamps become CLOCK_MONOTONIC ns here, off the hot path; times a caller
  // gave (iotap_span) and the kernel's sample times already are, and pass
  // unchanged.
  auto monotonic = [&](const RawEvent& e, uint64_t raw) {
    return ring.monotonic_times || (e.flags & kFlagExplicitTimes) ? raw
                                                                  : clock.ToMonotonicNs(raw);
  };
  int64_t* starts = scratch->times;
  int64_t* ends = scratch->times + count;
  auto convert = [&](auto in_units) {
    for (uint32_t i = 0; i < count; ++i) {
      const RawEvent& ev = at(i);
      starts[i] = static_cast<int64_t>(in_units(monotonic(ev, ev.t0)));
      int64_t e = static_cast<int64_t>(in_units(monotonic(ev, ev.t1)));
      ends[i] = e > starts[i] ? e : starts[i];
    }
  };
  // The units nearly every trace has (10 ns, the default, and 1 ns) divide
  // by a constant, which the compiler turns into a multiplication: the two
  // 64-bit divisions per event were a third of this function's time (perf,
  // 1-byte preads on the main thread).
  if (time_unit == 10) {
    convert([](uint64_t ns) { return ns / 10; });
  } else if (time_unit == 1) {
    convert([](uint64_t ns) { return ns; });
  } else {
    convert([time_unit](uint64_t ns) { return ns / time_unit; });
  }
  size_t packet = w->BeginNested(1);
  size_t chunk = w->BeginNested(4);
  w->VarintIfNonZero(1, ring.tid);
  int64_t base = count > 0 ? starts[0] : 0;
  w->Varint(2, static_cast<uint64_t>(base) * time_unit);
  w->Varint(3, time_unit);
  w->VarintIfNonZero(4, first_seq);
  w->VarintIfNonZero(5, dropped_before);

  uint8_t* column = scratch->column;
  w->PackedVarints(10, count, column, [&](uint32_t i) { return at(i).op; });
  int64_t previous_end = base;
  w->PackedVarints(11, count, column, [&](uint32_t i) {
    int64_t gap = starts[i] - previous_end;
    previous_end = ends[i];
    return wire::ZigZag(gap);
  });
  w->PackedVarints(12, count, column,
                   [&](uint32_t i) { return static_cast<uint64_t>(ends[i] - starts[i]); });
  w->PackedVarints(13, count, column, [&](uint32_t i) { return at(i).file; });
  int64_t previous_offset = 0;
  w->PackedVarints(14, count, column, [&](uint32_t i) {
    const RawEvent& e = at(i);
    if (!(e.flags & kFlagHasOffset)) return uint64_t{0};
    int64_t d = e.offset - previous_offset;
    previous_offset = e.offset;
    return wire::ZigZag(d);
  });
  w->PackedVarints(15, count, column, [&](uint32_t i) { return at(i).requested; });
  w->PackedVarints(16, count, column, [&](uint32_t i) { return wire::ZigZag(at(i).result); });
  w->PackedVarints(17, count, column, [&](uint32_t i) { return at(i).error; });
  w->PackedVarints(18, count, column, [&](uint32_t i) { return at(i).flags; });
  w->PackedVarints(19, count, column, [&](uint32_t i) { return at(i).parent; });
  w->PackedVarints(20, count, column, [&](uint32_t i) { return at(i).aux; });
  w->EndNested(chunk);
  w->EndNested(packet);
  return !w->overflow();
}

bool EncodePendingStrings(WireWriter* w) {
  // One packet a call, begun with its first string.
  struct Packet {
    WireWriter* w;
    size_t packet = 0;
    size_t table = 0;
    size_t written = 0;
    bool begun = false;
  } p{w};
  bool done = TakePendingStrings(
      [](const StringRecord& s, void* context) {
        Packet& p = *static_cast<Packet*>(context);
        // Keep each packet modest; a later call continues.
        if (p.written > 0 && p.written + s.size + 32 > 64 * 1024) return false;
        // A string that does not fit is left pending for the next packet,
        // without marking the writer overflowed: an overflowed packet is
        // discarded whole, and the strings already in it were taken.
        size_t table_header = p.begun ? 0 : 2 * (10 + kNestedLengthBytes);
        if (p.w->remaining() < table_header + s.size + 64) return false;
        if (!p.begun) {
          p.packet = p.w->BeginNested(1);
          p.table = p.w->BeginNested(3);
          p.begun = true;
        }
        size_t entry = p.w->BeginNested(1);
        p.w->Varint(1, s.id);
        p.w->Bytes(2, s.bytes, s.size);
        p.w->VarintIfNonZero(3, s.kind);
        p.w->EndNested(entry);
        p.written += s.size + 16;
        return true;
      },
      &p);
  if (p.begun) {
    w->EndNested(p.table);
    w->EndNested(p.packet);
  }
  return done;
}

}  // namespace iotap::interpose
