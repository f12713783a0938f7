// The signal sampler's timers, handler, rings and drain: see py_signal.h.
//
// Memory order between a handler and the sampler thread: a slot is armed
// (ring emptied, its thread's CPU time and window start written, then its
// epoch stored) before its timer exists, so a handler sees it whole; the
// handler marks the slot busy before it reads the epoch, and the sampler
// reuses a slot only when it is free and not busy, so a late signal of an
// earlier timer (whose epoch no longer matches) never writes into the ring
// of the slot's next thread.

#include "interpose/pystacks/py_signal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <new>

#include "interpose/core/clock.h"
#include "interpose/core/config.h"
#include "interpose/core/parked_fds.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/pystacks/py_samples.h"
#include "proto/wire/varint.h"

namespace iotap::interpose {

namespace {

// Threads sampled by signal at once; more are sampled with the GIL.
constexpr int kSlots = 256;
// A ring holds about 80 samples of 20 frames: 0.8 s of a busy thread's
// samples at 100 Hz, against wake-ups every 20 ms (py_stacks.cc).
constexpr uint32_t kRingBytes = 32 * 1024;
constexpr size_t kMaxPyString = 8192;
// Samples must fall at random moments: exactly periodic ones fell on the
// same places of a loop whose turn was close to a multiple of the interval,
// and the shares of the test program's three functions (py_samples_test,
// CpuInCodeThatHoldsTheGilIsChargedToIt) moved by up to 8 points from run
// to run. Each signal costs the kernel an irq_work interrupt and a signal
// frame, which in a VM are exits to the hypervisor, so there should be one
// signal per sample. The handler therefore draws the event's next period
// (PERF_EVENT_IOC_PERIOD on the event's descriptor, parked high) evenly
// from half an interval to one and a half: on the 2-core VM the shares
// stayed within 3.0 points of their timers in 5 runs, and the signals, the
// handler and its walk took 0.9% of an imagefolder epoch's CPU samples in
// perf (2 runs), against 1.7% and 1.8% with the scheme below (README, "What
// it costs").
//
// Where the descriptor cannot be parked (a descriptor limit under 256, 48
// threads already sampled), the event signals every fifth of an interval,
// and the handler takes a sample at one signal in three once half an
// interval passed since the last (the third signal, then one in three: an
// interval on average). A tenth of an interval (one in five kept) put those
// shares within 1.2 points of their timers in 4 runs, and the signals took
// 2.7% of an epoch's CPU samples (one run); a fifth, within 2.9 points in 7
// runs, for 0.9% to 1.6% (5 runs); a half (one in two), 4.1 points, 0.6%
// (one run).
constexpr int64_t kTaskClockSteps = 5;
constexpr uint64_t kTakeOneIn = 3;

struct SampleHeader {
  int64_t cpu_ns;
  int64_t start_ns;
  int64_t end_ns;
  uint32_t depth;
  uint32_t cut;
};

// How a slot's thread is signalled: a perf task-clock event (the kernel's
// hrtimer on the thread's CPU time, exact to microseconds), or a POSIX
// timer on its CPU clock (expiry seen at the scheduler's tick only).
enum Clock : uint32_t { kTaskClock = 1, kCpuTimer = 2, kJitteredClock = 3 };

struct Slot {
  std::atomic<uint32_t> epoch;  // of the arming; 0: free
  std::atomic<uint32_t> busy;   // a handler is in it
  std::atomic<uint32_t> fired;  // handler runs since armed
  std::atomic<pid_t> tid;
  std::atomic<uint32_t> clock;  // set before the event or timer runs
  int timer;                    // kCpuTimer's
  std::atomic<int> fd{-1};      // kJitteredClock's event, parked high
  uint64_t event_id;            // its PERF_EVENT_IOC_ID, to know it is still ours
  // Set by the handler when the period could not be set (the job closed
  // every descriptor): the period then stays as it was.
  std::atomic<uint32_t> fixed;
  void* event_page;  // kTaskClock's mapping, which holds the event
  size_t event_bytes;
  // The thread's next sample: its CPU time and window start. Written by the
  // sampler before the timer exists, then by the handler only.
  int64_t cpu;
  int64_t time;
  uint64_t random;  // xorshift state, the handler's
  SampleRing ring;
};

// The drain's function ids, by CodeTexts slot, for one string generation.
struct Known {
  uint32_t seq;
  uint32_t id;
  uint32_t generation;
};

struct State {
  std::atomic<Slot*> slots;  // read by handlers
  CodeTexts texts;
  PySignalSetup setup;
  int signo;
  int64_t interval_ns;
  uint32_t next_epoch;
  pid_t pid;  // the process the slots are set up for
  uint32_t generation;
  Known known[CodeTexts::kSlots];
};
constinit State g_state = {};

int64_t Monotonic() { return static_cast<int64_t>(MonotonicNs()); }

// The CPU-time clock of thread `tid` (what pthread_getcpuclockid returns):
// CPUCLOCK_SCHED of a thread, the id inverted and shifted.
clockid_t ThreadClock(pid_t tid) { return static_cast<clockid_t>((~tid << 3) | 6); }

// --- The handler -------------------------------------------------------------

uint64_t NextRandom(Slot& s) {
  uint64_t r = s.random;
  r ^= r << 13;
  r ^= r >> 7;
  r ^= r << 17;
  s.random = r;
  return r;
}

// A period drawn evenly from half an interval to one and a half.
uint64_t JitteredPeriod(uint64_t r) {
  uint64_t interval = static_cast<uint64_t>(g_state.interval_ns);
  return interval / 2 + (r >> 11) % (interval + 1);
}

// The event's next period, from now. A descriptor that no longer names the
// event (closed by the job, whatever has its number now) is not tried again.
void DrawPeriod(Slot& s) {
  if (s.fixed.load(std::memory_order_relaxed) != 0) return;
  uint64_t period = JitteredPeriod(NextRandom(s));
  int fd = s.fd.load(std::memory_order_relaxed);
  if (RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_PERIOD, &period) != 0) {
    s.fixed.store(1, std::memory_order_relaxed);
  }
}

void TakeSample(Slot& s);

void Take(Slot& s) {
  s.fired.fetch_add(1, std::memory_order_relaxed);
  // After the busy mark (TakeIn), against DisarmPyThread's wait.
  uint32_t clock = s.clock.load(std::memory_order_seq_cst);
  if (clock == kJitteredClock) DrawPeriod(s);
  if (clock == kTaskClock && NextRandom(s) % kTakeOneIn != 0) return;
  TakeSample(s);
}

void TakeSample(Slot& s) {
  int64_t before = Monotonic();
  int64_t cpu = ClockNs(CLOCK_THREAD_CPUTIME_ID);
  int64_t after = Monotonic();
  // A signal delivered late (the thread was in the kernel, or blocked the
  // signal a while) is followed by one early: as the GIL sampler does, a
  // sample is due at half an interval, the CPU time going to the next one.
  if (cpu < 0 || cpu - s.cpu < g_state.interval_ns / 2) return;
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  const PySignalSetup& setup = g_state.setup;
  int depth = WalkPyFrames(setup.walk, setup.this_thread_state(), &g_state.texts, frames, &cut);
  // No Python frame, a name being copied by another thread, or a stack
  // caught mid-update: the CPU time goes to the next sample.
  if (depth <= 0) return;
  SampleHeader h = {cpu - s.cpu, s.time, after, static_cast<uint32_t>(depth), cut ? 1u : 0u};
  // A full ring (the sampler thread not run for a long time) loses the
  // sample and its CPU time, rather than give it to the next stack.
  s.ring.Push(&h, sizeof(h), frames, static_cast<uint32_t>(depth * sizeof(RawFrame)));
  s.cpu = cpu;
  s.time = before;
}

void TakeIn(Slot& s, uint32_t epoch, pid_t tid) {
  s.busy.store(1, std::memory_order_seq_cst);
  if (s.epoch.load(std::memory_order_seq_cst) == epoch &&
      s.tid.load(std::memory_order_relaxed) == tid) {
    Take(s);
  }
  s.busy.store(0, std::memory_order_release);
}

void OnSignal(int, siginfo_t* info, void*) {
  int saved = errno;
  Slot* slots = g_state.slots.load(std::memory_order_acquire);
  if (info != nullptr && slots != nullptr) {
    if (info->si_code == SI_TIMER) {
      // A POSIX timer's: its value names the slot and the arming.
      uint64_t value = reinterpret_cast<uint64_t>(info->si_value.sival_ptr);
      uint32_t index = static_cast<uint32_t>(value & 0xFFFF);
      uint32_t epoch = static_cast<uint32_t>(value >> 32);
      if (index < kSlots && epoch != 0) TakeIn(slots[index], epoch, slots[index].tid.load());
    } else if (info->si_code == POLL_IN || info->si_code == POLL_HUP) {
      // A perf event's (F_SETSIG): sent to the thread it counts, whose slot
      // is found by its id.
      pid_t tid = static_cast<pid_t>(RawSyscall(SYS_gettid));
      for (int i = 0; i < kSlots; ++i) {
        if (slots[i].tid.load(std::memory_order_relaxed) != tid) continue;
        uint32_t epoch = slots[i].epoch.load(std::memory_order_seq_cst);
        uint32_t clock = slots[i].clock.load(std::memory_order_relaxed);
        if (epoch != 0 && (clock == kTaskClock || clock == kJitteredClock)) {
          TakeIn(slots[i], epoch, tid);
        }
        break;
      }
    }
  }
  errno = saved;
}

// --- The signal ---------------------------------------------------------------

bool HandlerIsOurs(int signo) {
  struct sigaction now;
  if (sigaction(signo, nullptr, &now) != 0) return false;
  return (now.sa_flags & SA_SIGINFO) != 0 && now.sa_sigaction == OnSignal;
}

bool TakeSignal() {
  if (g_state.signo != 0) return HandlerIsOurs(g_state.signo);
  for (int signo = SIGRTMAX - 1; signo > SIGRTMIN; --signo) {
    struct sigaction old;
    if (sigaction(signo, nullptr, &old) != 0) continue;
    if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa = {};
    sa.sa_sigaction = OnSignal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(signo, &sa, nullptr) != 0) return false;
    g_state.signo = signo;
    return true;
  }
  return false;
}

// --- Recording ----------------------------------------------------------------

// "QUALNAME\0FILE\0FIRSTLINE" of `f` into `out`; false if its names were
// taken over by another code object since the sample.
bool FrameText(const RawFrame& f, char* out, size_t room, size_t* size) {
  char qualname[CodeTexts::kTextRoom];
  char filename[CodeTexts::kTextRoom];
  size_t q = 0;
  size_t n = 0;
  if (room < 2 * CodeTexts::kTextRoom + 24) return false;
  if (!g_state.texts.Read(f.text, qualname, &q, filename, &n)) return false;
  memcpy(out, qualname, q);
  out[q] = '\0';
  memcpy(out + q + 1, filename, n);
  out[q + 1 + n] = '\0';
  size_t used = q + n + 2;
  used += static_cast<size_t>(
      snprintf(out + used, 24, "%d", f.firstlineno < 0 ? 0 : static_cast<int>(f.firstlineno)));
  *size = used;
  return true;
}

uint32_t FunctionId(const RawFrame& f) {
  Known& k = g_state.known[f.text.slot];
  if (k.id != 0 && k.seq == f.text.seq && k.generation == g_state.generation) return k.id;
  char text[2 * CodeTexts::kTextRoom + 24];
  size_t n = 0;
  if (!FrameText(f, text, sizeof(text), &n)) return 0;
  uint32_t id = InternForSampler(text, n, kKindPyFunction);
  k = {f.text.seq, id, g_state.generation};
  return id;
}

// Records one raw sample of thread `tid`. The string table may be emptied
// while its names are interned: the stack is then interned again, once.
void Record(pid_t tid, const uint8_t* record, uint32_t size) {
  SampleHeader h;
  if (size < sizeof(h)) return;
  memcpy(&h, record, sizeof(h));
  if (h.depth == 0 || h.depth > kMaxPyDepth || size != sizeof(h) + h.depth * sizeof(RawFrame)) {
    return;
  }
  RawFrame frames[kMaxPyDepth];
  memcpy(frames, record + sizeof(h), h.depth * sizeof(RawFrame));
  for (int attempt = 0; attempt < 2; ++attempt) {
    uint32_t generation = StringGeneration();
    if (generation != g_state.generation) {
      memset(g_state.known, 0, sizeof(g_state.known));
      g_state.generation = generation;
    }
    uint32_t ids[kMaxPyDepth];
    for (uint32_t i = 0; i < h.depth; ++i) {
      ids[i] = FunctionId(frames[i]);
      if (ids[i] == 0) return;  // names lost, or nothing interned
    }
    uint8_t bytes[kMaxPyString];
    size_t n = 0;
    if (h.cut != 0) {
      bytes[n++] = 0;
      bytes[n++] = 0;
    }
    for (uint32_t i = h.depth; i-- > 0 && n + 10 <= sizeof(bytes);) {
      n = static_cast<size_t>(wire::PutVarint(bytes + n, ids[i]) - bytes);
      n = static_cast<size_t>(wire::PutVarint(bytes + n, frames[i].line) - bytes);
    }
    uint32_t stack = InternForSampler(reinterpret_cast<const char*>(bytes), n, kKindPyStack);
    if (stack == 0) return;
    if (StringGeneration() != generation) continue;
    // 1: the table was emptied since the stack was interned.
    if (RecordPySample(tid, stack, h.cpu_ns, h.start_ns, h.end_ns, generation) != 1) return;
  }
}

int DrainSlot(Slot& s) {
  alignas(8) uint8_t record[sizeof(SampleHeader) + kMaxPyDepth * sizeof(RawFrame)];
  int n = 0;
  while (uint32_t size = s.ring.Pop(record, sizeof(record))) {
    Record(s.tid.load(std::memory_order_relaxed), record, size);
    ++n;
  }
  return n;
}

Slot* Slots() { return g_state.slots.load(std::memory_order_relaxed); }

// Closes slot `s`'s parked event descriptor if the number still names its
// event: a job that closed every descriptor may have a file of its own there
// now, which is left alone.
void CloseParked(Slot& s, int fd) {
  uint64_t id = 0;
  if (RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &id) == 0 && id == s.event_id) {
    RawSyscall(SYS_close, fd);
  }
}

}  // namespace

bool StartPySignals(const PySignalSetup& setup, int64_t interval_ns) {
  if (setup.walk.layout == nullptr || setup.this_thread_state == nullptr ||
      setup.walk.unicode_type == nullptr || setup.walk.code_type == nullptr ||
      setup.walk.read == nullptr || interval_ns <= 0) {
    return false;
  }
  pid_t pid = static_cast<pid_t>(RawSyscall(SYS_getpid));
  if (Slots() == nullptr) {
    // One mapping for the process's life (and its fork children's copies):
    // a handler may still run on a slot after its timer is deleted.
    size_t bytes = sizeof(Slot) * kSlots + sizeof(CodeTexts::Entry) * CodeTexts::kSlots +
                   static_cast<size_t>(kRingBytes) * kSlots;
    void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return false;
    uint8_t* p = static_cast<uint8_t*>(m);
    Slot* slots = new (p) Slot[kSlots];
    p += sizeof(Slot) * kSlots;
    g_state.texts.Init(new (p) CodeTexts::Entry[CodeTexts::kSlots]);
    p += sizeof(CodeTexts::Entry) * CodeTexts::kSlots;
    for (int i = 0; i < kSlots; ++i) slots[i].ring.Init(p + static_cast<size_t>(i) * kRingBytes,
                                                       kRingBytes);
    g_state.pid = pid;
    g_state.slots.store(slots, std::memory_order_release);
  } else if (g_state.pid != pid) {
    PySignalsAfterForkChild();
  }
  g_state.setup = setup;
  g_state.interval_ns = interval_ns;
  return true;
}

void PySignalsAfterForkChild() {
  Slot* slots = Slots();
  if (slots == nullptr) return;
  // No timer or event survived the fork, nor any thread but this one; what
  // the parent's slots held is the parent's. The parent's events' mappings
  // are not inherited (VM_DONTCOPY); the copies of their parked
  // descriptors are closed, so that no event outlives the parent's use of it.
  for (int i = 0; i < kSlots; ++i) {
    slots[i].epoch.store(0, std::memory_order_relaxed);
    slots[i].clock.store(0, std::memory_order_relaxed);
    slots[i].busy.store(0, std::memory_order_relaxed);
    int fd = slots[i].fd.exchange(-1, std::memory_order_relaxed);
    if (fd >= 0) CloseParked(slots[i], fd);
    slots[i].ring.Reset();
  }
  // The names' table stays: the child's memory is the parent's, so each
  // entry still describes the code object at its address, and is checked
  // against it at each use as in the parent. Unless a parent's handler was
  // writing an entry as the process forked: that entry would stay claimed
  // (and its code objects' stacks dropped) for ever, so the table is
  // emptied. The functions' ids were the parent's trace's.
  if (g_state.texts.Writing()) g_state.texts.Clear();
  memset(g_state.known, 0, sizeof(g_state.known));
  g_state.pid = static_cast<pid_t>(RawSyscall(SYS_getpid));
}

bool TakePySignal() { return TakeSignal(); }

bool PySignalHandlerKept() { return g_state.signo != 0 && HandlerIsOurs(g_state.signo); }

namespace {

// A task-clock event on `tid` whose overflow, every interval of the
// thread's CPU time, sends the signal to that thread. The descriptor is
// closed at once (interpose/README.md, "Descriptors the shim opens"): the
// mapping of its first page holds the event, and unmapping it ends it.
bool ArmTaskClock(Slot& s, pid_t tid) {
  if (g_config.no_perf) return false;
  struct perf_event_attr a;
  memset(&a, 0, sizeof(a));
  a.size = sizeof(a);
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = static_cast<uint64_t>(g_state.interval_ns / kTaskClockSteps);
  // User time only: an overflow in the kernel would leave the signal
  // pending through the rest of the system call, and a sleep that follows
  // in it would end with EINTR where SA_RESTART does not restart it
  // (epoll_wait, poll, select). An overflow in user mode is delivered on
  // the interrupt's return, and never meets a system call. A period that
  // ends in the kernel goes to the next sample. (Allowed, too, where
  // perf_event_paranoid is 2.)
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.disabled = 1;
  int fd = static_cast<int>(RawSyscall(SYS_perf_event_open, &a, tid, -1, -1,
                                       PERF_FLAG_FD_CLOEXEC));
  if (fd < 0) return false;
  struct f_owner_ex owner = {F_OWNER_TID, tid};
  size_t bytes = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  long page = -1;
  if (RawSyscall(SYS_fcntl, fd, F_SETOWN_EX, &owner) == 0 &&
      RawSyscall(SYS_fcntl, fd, F_SETSIG, g_state.signo) == 0 &&
      RawSyscall(SYS_fcntl, fd, F_SETFL, O_ASYNC) == 0) {
    page = RawSyscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  // Parked, the descriptor lets the handler draw each next period; where it
  // cannot be parked, the event signals every fifth of an interval.
  int parked = page == -1 ? -1 : ParkFd(fd, Parked::kSampleEvent);
  if (parked >= 0) fd = parked;
  uint64_t period = JitteredPeriod(NextRandom(s));
  bool jittered = parked >= 0 && RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_ID, &s.event_id) == 0 &&
                  RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_PERIOD, &period) == 0;
  s.fd.store(jittered ? fd : -1, std::memory_order_relaxed);
  s.fixed.store(0, std::memory_order_relaxed);
  s.clock.store(jittered ? kJitteredClock : kTaskClock, std::memory_order_relaxed);
  if (page != -1 && RawSyscall(SYS_ioctl, fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
    RawSyscall(SYS_munmap, page, bytes);
    page = -1;
  }
  if (page == -1 || !jittered) RawSyscall(SYS_close, fd);
  if (page == -1) {
    s.fd.store(-1, std::memory_order_relaxed);
    s.clock.store(0, std::memory_order_relaxed);
    return false;
  }
  s.event_page = reinterpret_cast<void*>(page);
  s.event_bytes = bytes;
  return true;
}

// A POSIX timer on `tid`'s CPU clock, which signals it every interval.
bool ArmCpuTimer(Slot& s, int index, uint32_t epoch, clockid_t clock, pid_t tid) {
  struct sigevent event = {};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = g_state.signo;
  event._sigev_un._tid = tid;
  event.sigev_value.sival_ptr =
      reinterpret_cast<void*>((static_cast<uint64_t>(epoch) << 32) | static_cast<uint64_t>(index));
  int timer = -1;
  if (RawSyscall(SYS_timer_create, clock, &event, &timer) != 0) return false;
  s.timer = timer;
  s.clock.store(kCpuTimer, std::memory_order_relaxed);
  struct itimerspec every = {};
  every.it_interval.tv_sec = static_cast<time_t>(g_state.interval_ns / 1000000000);
  every.it_interval.tv_nsec = static_cast<long>(g_state.interval_ns % 1000000000);
  every.it_value = every.it_interval;
  if (RawSyscall(SYS_timer_settime, timer, 0, &every, nullptr) != 0) {
    RawSyscall(SYS_timer_delete, timer);
    return false;
  }
  return true;
}

}  // namespace

int ArmPyThread(pid_t tid) {
  Slot* slots = Slots();
  if (slots == nullptr || g_state.signo == 0) return -1;
  int index = -1;
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].epoch.load(std::memory_order_seq_cst) == 0 &&
        slots[i].busy.load(std::memory_order_seq_cst) == 0) {
      index = i;
      break;
    }
  }
  if (index < 0) return -1;
  Slot& s = slots[index];
  clockid_t clock = ThreadClock(tid);
  s.ring.Reset();
  s.fired.store(0, std::memory_order_relaxed);
  s.tid.store(tid, std::memory_order_relaxed);
  s.time = Monotonic();
  s.cpu = ClockNs(clock);
  s.random = (static_cast<uint64_t>(tid) << 32) ^ static_cast<uint64_t>(s.time) ^ 0x9E3779B97F4A7C15ull;
  if (s.cpu < 0) return -1;
  if (++g_state.next_epoch == 0) ++g_state.next_epoch;
  uint32_t epoch = g_state.next_epoch;
  s.clock.store(0, std::memory_order_relaxed);
  s.epoch.store(epoch, std::memory_order_seq_cst);
  if (!ArmTaskClock(s, tid) && !ArmCpuTimer(s, index, epoch, clock, tid)) {
    s.epoch.store(0, std::memory_order_seq_cst);
    return -1;
  }
  return index;
}

uint32_t PySlotFired(int slot) {
  if (slot < 0 || slot >= kSlots || Slots() == nullptr) return 0;
  return Slots()[slot].fired.load(std::memory_order_relaxed);
}

void DisarmPyThread(int slot) {
  if (slot < 0 || slot >= kSlots || Slots() == nullptr) return;
  Slot& s = Slots()[slot];
  if (s.epoch.load(std::memory_order_relaxed) == 0) return;
  // No signal of a deleted timer is delivered after timer_delete returns
  // (the kernel takes a pending one back); one of an event may be, and
  // finds the slot free or another thread's. A handler already running is
  // kept out of the slot's next use by its busy mark.
  uint32_t clock = s.clock.load(std::memory_order_relaxed);
  if (clock == kCpuTimer) RawSyscall(SYS_timer_delete, s.timer);
  if (clock == kTaskClock || clock == kJitteredClock) {
    RawSyscall(SYS_munmap, s.event_page, s.event_bytes);
  }
  s.clock.store(0, std::memory_order_seq_cst);
  if (s.fd.load(std::memory_order_relaxed) >= 0) {
    // A handler still in the slot is let finish with the descriptor, so
    // that it never sets the period of a file opened after.
    for (int i = 0; i < 100000 && s.busy.load(std::memory_order_seq_cst) != 0; ++i) {
      RawSyscall(SYS_sched_yield);
    }
    CloseParked(s, s.fd.exchange(-1, std::memory_order_relaxed));
  }
  DrainSlot(s);
  s.epoch.store(0, std::memory_order_seq_cst);
}

int DrainPySamples() {
  Slot* slots = Slots();
  if (slots == nullptr) return 0;
  int n = 0;
  for (int i = 0; i < kSlots; ++i) {
    if (slots[i].epoch.load(std::memory_order_relaxed) != 0) n += DrainSlot(slots[i]);
  }
  return n;
}

void StopPySignals() {
  if (Slots() == nullptr) return;
  for (int i = 0; i < kSlots; ++i) DisarmPyThread(i);
}

int WalkOwnPyFrames(const PySignalSetup& setup, RawFrame* frames, bool* cut) {
  if (!g_state.texts.ready() || setup.walk.layout == nullptr) return -1;
  return WalkPyFrames(setup.walk, setup.this_thread_state(), &g_state.texts, frames, cut);
}

bool PyFrameText(const RawFrame& frame, char* out, size_t room, size_t* size) {
  return FrameText(frame, out, room, size);
}

}  // namespace iotap::interpose
