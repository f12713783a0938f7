#include "interpose/mapped/fault_sampler.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "interpose/core/clock.h"
#include "interpose/core/config.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/core/recorder.h"
#include "interpose/file/writer.h"
#include "interpose/mapped/fault_counters.h"
#include "interpose/mapped/fault_event.h"
#include "interpose/mapped/fault_sampler_internal.h"
#include "interpose/mapped/mappings.h"
#include "interpose/mapped/poll_interval.h"

namespace iotap::interpose {

namespace faults {
constinit Sampler g_sampler;
}  // namespace faults

using namespace faults;  // NOLINT: this file is the sampler

namespace {

// The interval until the writer's next drain (poll_interval.h): it starts
// fast as the events open, and follows what the drains find.
constinit std::atomic<uint64_t> g_poll_ns{kFastPollNs};
// Until this time the interval stays short (kStartMaxPollNs) however calm
// the drains: the first comes as the events open, before the thread that
// mapped the data touched it, and a first burst (a fork child's
// copy-on-write faults, a first run of cold reads) may follow at any moment.
constinit std::atomic<uint64_t> g_fast_until_ns{0};
// When the buffers were drained last (under the writer lock).
constinit uint64_t g_last_drain_ns = 0;
// Events stay open this long after the last data mapping went away.
constexpr uint64_t kLingerNs = 1000000000ull;
// How often the writer looks for threads that exited.
constexpr uint64_t kExitCheckNs = 1000000000ull;

constinit uint64_t g_next_exit_check_ns = 0;

// Why an event could not be had: the kernel refuses perf events to this
// process (permission, seccomp, no support), or there is no room for the
// buffer under the locked-memory limit, or this one thread is gone.
enum class OpenResult { kOk, kRefused, kNoMemory, kGone };

int PerfEventOpen(int tid, uint64_t config) {
  if (g_config.no_perf) {
    errno = EACCES;
    return -1;
  }
  struct perf_event_attr a;
  IotapFaultEventAttr(&a, config);
  return static_cast<int>(RawSyscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

// What an errno of perf_event_open or of mapping its buffer means here.
OpenResult ResultOf(int err, bool mapping) {
  if (err == ESRCH) return OpenResult::kGone;
  // Mapping: EPERM is the locked-memory limit. Opening: EPERM and EACCES are
  // perf_event_paranoid or a seccomp profile, ENOENT, ENODEV, ENOSYS and
  // EOPNOTSUPP a kernel without the events.
  if (err == ENOMEM || err == EMFILE || err == ENFILE || (mapping && err == EPERM)) {
    return OpenResult::kNoMemory;
  }
  return OpenResult::kRefused;
}

// Opens one event on `tid` and maps its buffer of `pages` data pages; the
// descriptor is closed again at once: the mapping holds the event, and
// unmapping it ends the event. Not parked like the trace file's: nothing
// needs the number again, and a closed one cannot shift the job's numbers,
// be closed by it, count against its limit or reach a child
// (interpose/README.md, "Descriptors the shim opens").
OpenResult OpenBuffer(int tid, uint64_t config, size_t pages, Buffer* out) {
  int fd = PerfEventOpen(tid, config);
  if (fd < 0) return ResultOf(errno, false);
  size_t bytes = (1 + pages) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  long addr = RawSyscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = addr == -1 ? errno : 0;
  RawSyscall(SYS_close, fd);
  if (err != 0) {
    errno = err;
    return ResultOf(err, true);
  }
  out->page = reinterpret_cast<perf_event_mmap_page*>(addr);
  out->bytes = bytes;
  return OpenResult::kOk;
}

void Unmap(Buffer* b) {
  if (b->page != nullptr) RawSyscall(SYS_munmap, b->page, b->bytes);
  b->page = nullptr;
  b->bytes = 0;
}

void SetNote(const char* what, int err) {
  snprintf(g_sampler.note, sizeof(g_sampler.note), "%s (%s)", what, strerrordesc_np(err));
}

// Opens both events of `tid` into a free slot, with a grown begin buffer
// at once if `grown` and the locked-memory limit allows. Caller holds the
// lock.
OpenResult OpenSlotLocked(int tid, bool grown = false) {
  Slot* free_slot = nullptr;
  const uint32_t used = g_sampler.slots_used.load(std::memory_order_relaxed);
  for (Slot& s : g_sampler.used()) {
    uint32_t state = s.state.load(std::memory_order_relaxed);
    if (state == kSlotLive && s.tid == tid) return OpenResult::kOk;
    if (state == kSlotFree && free_slot == nullptr) free_slot = &s;
  }
  if (free_slot == nullptr) {
    if (used == kMaxThreads) return OpenResult::kNoMemory;
    free_slot = &g_sampler.slots[used];
  }
  Buffer begin, major;
  size_t pages = grown ? kGrownBeginPages : kBeginPages;
  OpenResult r = OpenBuffer(tid, PERF_COUNT_SW_PAGE_FAULTS, pages, &begin);
  if (r == OpenResult::kNoMemory && grown) {
    pages = kBeginPages;
    r = OpenBuffer(tid, PERF_COUNT_SW_PAGE_FAULTS, pages, &begin);
  }
  if (r != OpenResult::kOk) return r;
  r = OpenBuffer(tid, PERF_COUNT_SW_PAGE_FAULTS_MAJ, kMajorPages, &major);
  if (r != OpenResult::kOk) {
    Unmap(&begin);
    return r;
  }
  free_slot->tid = tid;
  free_slot->begin = begin;
  free_slot->begin_pages = pages;
  free_slot->grow_failed = grown && pages != kGrownBeginPages;
  free_slot->retired = Buffer();
  free_slot->major = major;
  free_slot->held_count = 0;
  free_slot->undrained = true;
  const auto index = static_cast<uint32_t>(free_slot - g_sampler.slots);
  if (index >= used) g_sampler.slots_used.store(index + 1, std::memory_order_release);
  free_slot->state.store(kSlotLive, std::memory_order_release);
  g_sampler.threads_sampled.fetch_add(1, std::memory_order_relaxed);
  return OpenResult::kOk;
}

// The first refusal decides the process's mode; later ones only fail their
// thread.
void Refused(OpenResult r, int err) {
  if (r == OpenResult::kRefused) {
    SetNote("perf_event_open refused page-fault samples", err);
    WarnOnce(
        "page faults cannot be sampled (perf_event_open refused); mapped reads are "
        "counted per thread instead",
        err);
  } else {
    SetNote("no locked memory for the page-fault sample buffers", err);
    WarnOnce(
        "the locked-memory limit leaves no room for page-fault samples; mapped reads are "
        "counted per thread instead",
        err);
  }
  g_sampler.mode.store(kCounters, std::memory_order_release);
  g_sampler.status_due.store(true, std::memory_order_release);
}

// Opens events for every thread of the process but the writer. Caller holds
// the lock; the calling thread's events are already open.
void OpenOtherThreadsLocked(int self) {
  int dir = static_cast<int>(
      RawSyscall(SYS_openat, AT_FDCWD, "/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) return;
  int writer = WriterThreadId();
  char buf[4096];
  for (;;) {
    long n = RawSyscall(SYS_getdents64, dir, buf, sizeof(buf));
    if (n <= 0) break;
    for (long at = 0; at < n;) {
      auto* d = reinterpret_cast<struct dirent64*>(buf + at);
      at += d->d_reclen;
      int tid = atoi(d->d_name);
      if (tid <= 0 || tid == self || tid == writer) continue;
      OpenResult r = OpenSlotLocked(tid);
      if (r == OpenResult::kNoMemory) {
        WarnOnce(
            "the locked-memory limit leaves no room for page-fault samples of every "
            "thread; some threads' mapped reads are not seen",
            ENOMEM);
      }
    }
  }
  RawSyscall(SYS_close, dir);
}

// The process has had no data mapping for a while: close every event,
// unless a mapping appeared meanwhile. WatchFaults adds its mapping before
// it looks at the mode, and this side sets kClosing before it counts the
// mappings (both sequentially consistent), so either it sees the mapping or
// WatchFaults sees kClosing and waits on the lock to open the events anew.
void CloseAllIfUnmapped(uint64_t now) {
  pthread_mutex_lock(&g_sampler.lock);
  g_sampler.mode.store(kClosing);
  if (LiveDataMappings() > 0) {
    g_sampler.mode.store(kSampling);
  } else {
    for (Slot& s : g_sampler.used()) {
      if (s.state.load(std::memory_order_relaxed) != kSlotLive) continue;
      DrainSlot(&s, now, /*final=*/true);
      CloseSlotLocked(&s);
    }
    g_sampler.mode.store(kIdle);
    g_sampler.status_due.store(true, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_sampler.lock);
}

// Writes every thread's counters now, on the calling thread (which is busy:
// the mmap wrapper's), so that faults right after the mapping count.
void CountFaultsNow() {
  int saved = errno;
  RunUnderWriterLock([] {
    WriteStatus();
    WriteFaultCounters(MonotonicNs(), WriterThreadId());
  });
  errno = saved;
}

// Whether a drain that found `drained` in the begin buffer of `pages` says
// that its thread faults fast: a quarter full, or samples dropped. The
// buffer of such a thread grows (ShouldGrow).
bool BeginFillsFast(const Drained& drained, size_t pages) {
  return drained.lost || drained.fresh >= SampleCapacity(pages) / 4;
}

// Adds one thread's drain to what the drain of every thread found, which
// sets the next poll (poll_interval.h).
void AddToLoad(const Drained& drained, size_t pages, DrainLoad* load) {
  auto fuller = [&](size_t samples, size_t capacity) {
    double share = static_cast<double>(samples) / static_cast<double>(capacity);
    if (share > load->fullest) load->fullest = share;
  };
  fuller(drained.fresh, SampleCapacity(pages));
  fuller(drained.majors, kMajorCapacity);
  load->lost |= drained.lost || drained.majors_lost;
  if (drained.looks > load->looks) load->looks = drained.looks;
  if (drained.queries > load->queries) load->queries = drained.queries;
}

bool ShouldGrow(const Slot& slot, const Drained& drained) {
  return slot.begin_pages < kGrownBeginPages && !slot.grow_failed &&
         BeginFillsFast(drained, slot.begin_pages);
}

// Gives `slot` a begin buffer of kGrownBeginPages and retires the one it
// had (DrainSlot takes its last samples): the writer's, after a drain of
// the slot. A refusal (the locked-memory limit) keeps the small buffer.
void GrowBegin(Slot* slot) {
  uint64_t at = MonotonicNs();
  Buffer grown;
  if (OpenBuffer(slot->tid, PERF_COUNT_SW_PAGE_FAULTS, kGrownBeginPages, &grown) !=
      OpenResult::kOk) {
    slot->grow_failed = true;
    return;
  }
  slot->retired = slot->begin;
  slot->retired_at = at;
  slot->begin = grown;
  slot->begin_pages = kGrownBeginPages;
}

}  // namespace

namespace faults {

void CloseSlotLocked(Slot* slot) {
  Unmap(&slot->begin);
  Unmap(&slot->retired);
  Unmap(&slot->major);
  slot->held_count = 0;
  slot->tid = 0;
  slot->state.store(kSlotFree, std::memory_order_release);
}

}  // namespace faults

void WatchFaults() {
  if ((g_active_layers.load(std::memory_order_relaxed) & kLayerMapped) == 0) return;
  uint64_t now = MonotonicNs();
  g_sampler.last_mapped_ns.store(now, std::memory_order_relaxed);
  uint32_t mode = g_sampler.mode.load();
  if (mode == kSampling) return;
  if (mode == kCounters) {
    // The process's first data mapping (again): the counters as they stand,
    // the base their growth is measured from.
    if (LiveDataMappings() == 1) CountFaultsNow();
    return;
  }
  pthread_mutex_lock(&g_sampler.lock);
  if (g_sampler.mode.load(std::memory_order_relaxed) == kIdle) {
    int self = static_cast<int>(RawSyscall(SYS_gettid));
    errno = 0;
    // The thread that maps the data, or a forked child's one thread: the
    // likeliest to fault at once, and in a child the copy-on-write faults
    // of its first milliseconds come before the writer's first drain.
    OpenResult r = OpenSlotLocked(self, /*grown=*/true);
    int err = errno;
    if (r == OpenResult::kOk) {
      OpenOtherThreadsLocked(self);
      g_sampler.note[0] = '\0';
      g_poll_ns.store(kFastPollNs, std::memory_order_relaxed);
      g_fast_until_ns.store(MonotonicNs() + kFastStartNs, std::memory_order_relaxed);
      g_sampler.mode.store(kSampling, std::memory_order_release);
      g_sampler.status_due.store(true, std::memory_order_release);
    } else {
      Refused(r, err);
    }
  }
  pthread_mutex_unlock(&g_sampler.lock);
  // Only the writer empties the buffers and samples the counters. It starts
  // with a thread's first event, which a process that only touches its
  // mappings may never record (a forked worker reading the parent's
  // mapping): every fault after the buffer's first 1,024 would be lost.
  // One already running sleeps until its next resource sample (up to
  // 100 ms), unaware that it polls now: woken, it drains at once.
  StartWriterThread();
  WakeWriterNow();
  if (g_sampler.mode.load(std::memory_order_acquire) == kCounters) CountFaultsNow();
}

void FaultsThreadStarted() {
  if (g_sampler.mode.load(std::memory_order_acquire) != kSampling) return;
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  int saved = errno;
  bool opened = false;
  pthread_mutex_lock(&g_sampler.lock);
  if (g_sampler.mode.load(std::memory_order_relaxed) == kSampling) {
    OpenResult r = OpenSlotLocked(static_cast<int>(RawSyscall(SYS_gettid)));
    if (r == OpenResult::kNoMemory) {
      WarnOnce(
          "the locked-memory limit leaves no room for page-fault samples of every "
          "thread; some threads' mapped reads are not seen",
          ENOMEM);
    }
    opened = r == OpenResult::kOk;
  }
  pthread_mutex_unlock(&g_sampler.lock);
  // The new thread's buffer is the small one, and its first burst may come
  // at once: its first drain, now rather than at the end of the interval the
  // calm before set (up to 25 ms), starts the writer's back-off again from
  // the fast poll.
  if (opened) WakeWriterNow();
  errno = saved;
  tls_thread.busy = was_busy;
}

void DrainFaults(bool final) {
  uint64_t now = MonotonicNs();
  if (g_sampler.mode.load(std::memory_order_acquire) == kSampling) {
    if (LiveDataMappings() > 0) g_sampler.last_mapped_ns.store(now, std::memory_order_relaxed);
    bool check_exits = now >= g_next_exit_check_ns;
    if (check_exits) g_next_exit_check_ns = now + kExitCheckNs;
    pid_t pid = static_cast<pid_t>(RawSyscall(SYS_getpid));
    // Other threads only ever fill free slots (under the lock); only this
    // side empties live ones, so reading them needs no lock.
    DrainLoad load{.elapsed_ns = now - g_last_drain_ns,
                   .looks_cap = kMaxPagemapReads,
                   .queries_cap = kMaxMapsQueries};
    g_last_drain_ns = now;
    for (Slot& s : g_sampler.used()) {
      if (s.state.load(std::memory_order_acquire) != kSlotLive) continue;
      bool gone = check_exits && RawSyscall(SYS_tgkill, pid, s.tid, 0) != 0 && errno == ESRCH;
      // Close only after a last drain: a gone thread's samples are all in.
      Drained drained = DrainSlot(&s, now, final || gone);
      if (gone) {
        pthread_mutex_lock(&g_sampler.lock);
        CloseSlotLocked(&s);
        pthread_mutex_unlock(&g_sampler.lock);
        continue;
      }
      if (!final && ShouldGrow(s, drained)) {
        GrowBegin(&s);
        // At once: the two buffers sample the same faults until then.
        if (s.retired.page != nullptr) DrainSlot(&s, now, /*final=*/false);
      }
      AddToLoad(drained, s.begin_pages, &load);
      load.new_thread |= s.undrained;
      s.undrained = false;
    }
    bool starting = now < g_fast_until_ns.load(std::memory_order_relaxed);
    g_poll_ns.store(NextPollNs(g_poll_ns.load(std::memory_order_relaxed), load, starting),
                    std::memory_order_relaxed);
    // A mapping made since `now` was taken sets a later time: no wrap.
    if (now >= g_sampler.last_mapped_ns.load(std::memory_order_relaxed) + kLingerNs) {
      CloseAllIfUnmapped(now);
    }
  }
  // The counters a last time as the trace ends, so that a process that
  // faulted after the last CPU sample has those faults counted too.
  if (final && g_sampler.mode.load(std::memory_order_acquire) == kCounters &&
      g_sampler.last_mapped_ns.load(std::memory_order_relaxed) != 0) {
    WriteFaultCounters(now, WriterThreadId());
  }
  if (g_sampler.status_due.exchange(false, std::memory_order_acq_rel) || final) WriteStatus();
}

void SampleFaults() {
  if (g_sampler.mode.load(std::memory_order_acquire) != kCounters) return;
  uint64_t now = MonotonicNs();
  // While data mappings exist, and once more after the last one went.
  if (LiveDataMappings() > 0) {
    g_sampler.last_mapped_ns.store(now, std::memory_order_relaxed);
  } else if (now > g_sampler.last_mapped_ns.load(std::memory_order_relaxed) +
                       2ull * g_config.sample_interval_ms * 1000000ull) {
    return;
  }
  WriteFaultCounters(now, WriterThreadId());
}

uint64_t FaultPollIntervalNs() {
  if (g_sampler.mode.load(std::memory_order_relaxed) != kSampling) return 0;
  return g_poll_ns.load(std::memory_order_relaxed);
}

void LockFaultsForFork() { pthread_mutex_lock(&g_sampler.lock); }

void UnlockFaultsAfterFork(bool child) {
  if (!child) {
    pthread_mutex_unlock(&g_sampler.lock);
    return;
  }
  pthread_mutex_init(&g_sampler.lock, nullptr);
  // The kernel copies neither the events nor their buffers into a child:
  // forget them without unmapping (the addresses are the child's to reuse).
  // Slots past slots_used were never taken: writing them would fault in
  // pages of the table the child never uses.
  for (Slot& s : g_sampler.used()) {
    s.state.store(kSlotFree, std::memory_order_relaxed);
    s.tid = 0;
    s.begin = Buffer();
    s.retired = Buffer();
    s.major = Buffer();
    s.held_count = 0;
  }
  g_sampler.slots_used.store(0, std::memory_order_relaxed);
  g_sampler.threads_sampled.store(0, std::memory_order_relaxed);
  g_sampler.lost.store(0, std::memory_order_relaxed);
  if (g_sampler.mode.load(std::memory_order_relaxed) == kSampling) {
    g_sampler.mode.store(kIdle, std::memory_order_relaxed);
  }
  ResetDrainInChild();
}

void FaultsAfterForkChild() {
  if (g_sampler.mode.load(std::memory_order_relaxed) == kCounters) {
    g_sampler.status_due.store(true, std::memory_order_release);
    if (LiveDataMappings() > 0) StartWriterThread();  // it samples the counters
    return;
  }
  if (LiveDataMappings() > 0) WatchFaults();
}

}  // namespace iotap::interpose
