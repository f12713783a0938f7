// iotap_py_run_sampler and iotap_py_stacks: the Python stacks of a
// process's threads, read and interned in C with the GIL held throughout.
//
// iotap_py_run_sampler is the sampler thread's whole loop: it sleeps without
// the GIL and, at each wake-up (at one in kSignalLookEvery where the threads
// are sampled by signal), takes it for one look at the threads (which are
// due, their stacks, the samples). Written in Python, the loop and the
// look cost about 150 us of CPU per wake-up (bytecodes, ctypes calls, a
// timed lock), 2% of the sampled thread's CPU at 100 samples a second.
//
// From CPython 3.11 on, a frame object of another thread (what
// sys._current_frames() returns) is a view of that thread's live frame. A
// sampler written in Python walks it bytecode by bytecode, and between two
// bytecodes the interpreter may hand the GIL to the thread whose frames are
// being walked (the switch interval, a sampler descheduled on a busy
// machine). That thread then pops frames the sampler still reads: CPython
// 3.11 crashes there (cpython gh-99110 and the reports of every in-process
// Python profiler since). Here the frames are taken, walked and let go in C,
// between two bytecodes of the sampler, with the collector paused so that no
// finaliser runs (and gives the GIL away) in between: no other thread runs
// Python while a frame is held.
//
// From CPython 3.11.1 on the samples themselves are taken by a signal handler
// in each sampled thread (py_signal.h), which reads the interpreter's frame
// structures; the look here then only follows the threads (a new one gets
// its event, a gone one loses it) and checks at start that the handler's
// reading of this thread's own stack is the C API's. Everything else is the
// GIL sampler below, for older interpreters and wherever the signal sampler
// cannot run.
//
// Here only functions of CPython's C API are used (found in the running
// interpreter by name, never linked), no structure of the interpreter is
// read: _PyThread_CurrentFrames (sys._current_frames), PyFrame_GetBack,
// PyFrame_GetCode, PyFrame_GetLineNumber, the code object's co_qualname,
// co_filename and co_firstlineno attributes, PyDict_Next,
// PyLong_AsUnsignedLong, PyGC_Disable/Enable and PyEval_SaveThread/
// RestoreThread; and, for the signal sampler, PyGILState_GetThisThreadState,
// PyEval_GetFrame, PyUnicode_Type and Py_Version.

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "interpose/core/clock.h"
#include "interpose/core/config.h"
#include "interpose/core/io_event.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/pystacks/py_samples.h"
#include "interpose/pystacks/py_signal.h"
#include "proto/wire/varint.h"

using namespace iotap::interpose;

namespace {

// Frames kept per stack, innermost first; a deeper stack is cut and marked
// with function id 0 (line 0) at its outer end, as the Python sampler does.
constexpr int kMaxDepth = 128;
constexpr size_t kMaxPyString = 8192;
// Code objects whose function ids are kept (with a reference, so that an
// address is never another code object's) before the table is emptied.
constexpr size_t kCacheSlots = 16384;
constexpr size_t kCacheMax = kCacheSlots * 3 / 4;

using Object = void;

struct PythonApi {
  Object* (*current_frames)();
  Object* (*dict_get_item)(Object*, Object*);
  int (*dict_next)(Object*, ssize_t*, Object**, Object**);
  Object* (*long_from_unsigned_long)(unsigned long);
  unsigned long (*long_as_unsigned_long)(Object*);
  Object* (*frame_get_back)(Object*);
  Object* (*frame_get_code)(Object*);
  int (*frame_get_line_number)(Object*);
  Object* (*get_attr_string)(Object*, const char*);
  const char* (*unicode_as_utf8_and_size)(Object*, ssize_t*);
  long (*long_as_long)(Object*);
  void (*incref)(Object*);
  void (*decref)(Object*);
  void (*err_clear)();
  int (*gc_disable)();
  int (*gc_enable)();
  void* (*save_thread)();
  void (*restore_thread)(void*);
  // For the signal sampler only (py_signal.h); may be missing.
  void* (*this_thread_state)();
  Object* (*eval_get_frame)();
  const void* unicode_type;
  const void* code_type;
  const unsigned long* version;
};

constinit PythonApi g_api = {};
constinit int g_api_state = 0;  // 0: not looked up, 1: found, -1: missing

template <typename Fn>
bool Find(Fn* out, const char* name) {
  *out = reinterpret_cast<Fn>(ResolveGlobal(name));
  return *out != nullptr;
}

bool Api() {
  if (g_api_state == 0) {
    PythonApi& a = g_api;
    bool ok = Find(&a.current_frames, "_PyThread_CurrentFrames") &&
              Find(&a.dict_get_item, "PyDict_GetItem") && Find(&a.dict_next, "PyDict_Next") &&
              Find(&a.long_from_unsigned_long, "PyLong_FromUnsignedLong") &&
              Find(&a.long_as_unsigned_long, "PyLong_AsUnsignedLong") &&
              Find(&a.frame_get_back, "PyFrame_GetBack") &&
              Find(&a.frame_get_code, "PyFrame_GetCode") &&
              Find(&a.frame_get_line_number, "PyFrame_GetLineNumber") &&
              Find(&a.get_attr_string, "PyObject_GetAttrString") &&
              Find(&a.unicode_as_utf8_and_size, "PyUnicode_AsUTF8AndSize") &&
              Find(&a.long_as_long, "PyLong_AsLong") && Find(&a.incref, "Py_IncRef") &&
              Find(&a.decref, "Py_DecRef") && Find(&a.err_clear, "PyErr_Clear") &&
              Find(&a.gc_disable, "PyGC_Disable") && Find(&a.gc_enable, "PyGC_Enable") &&
              Find(&a.save_thread, "PyEval_SaveThread") &&
              Find(&a.restore_thread, "PyEval_RestoreThread");
    if (ok) {
      Find(&a.this_thread_state, "PyGILState_GetThisThreadState");
      Find(&a.eval_get_frame, "PyEval_GetFrame");
      a.unicode_type = ResolveGlobal("PyUnicode_Type");
      a.code_type = ResolveGlobal("PyCode_Type");
      a.version = static_cast<const unsigned long*>(ResolveGlobal("Py_Version"));
    }
    g_api_state = ok ? 1 : -1;
  }
  return g_api_state == 1;
}

// Code object -> function id, for one generation of the string table in one
// process. Touched only with the GIL held.
struct CodeCache {
  Object* code[kCacheSlots];
  uint32_t id[kCacheSlots];
  size_t used;
  uint32_t generation;
  pid_t pid;
};
constinit CodeCache g_cache = {};

void ClearCache() {
  CodeCache& c = g_cache;
  for (size_t i = 0; i < kCacheSlots; ++i) {
    if (c.code[i] != nullptr) g_api.decref(c.code[i]);
    c.code[i] = nullptr;
  }
  c.used = 0;
}

size_t Slot(Object* code) {
  uintptr_t h = reinterpret_cast<uintptr_t>(code) >> 4;
  h ^= h >> 17;
  h *= 0x9E3779B97F4A7C15ull;
  size_t i = static_cast<size_t>(h >> 40) & (kCacheSlots - 1);
  while (g_cache.code[i] != nullptr && g_cache.code[i] != code) i = (i + 1) & (kCacheSlots - 1);
  return i;
}

// Appends the UTF-8 text of attribute `name` of `code` (a string) to `out`
// at `*n`, at most `room` bytes; "?" when it has none.
void AppendText(Object* code, const char* name, char* out, size_t* n, size_t room) {
  const char* text = "?";
  ssize_t size = 1;
  Object* value = g_api.get_attr_string(code, name);
  if (value != nullptr) {
    const char* utf8 = g_api.unicode_as_utf8_and_size(value, &size);
    if (utf8 != nullptr) {
      text = utf8;
    } else {
      size = 1;
    }
  }
  size_t take = static_cast<size_t>(size) < room - *n ? static_cast<size_t>(size) : room - *n;
  memcpy(out + *n, text, take);
  *n += take;
  if (value != nullptr) g_api.decref(value);
  g_api.err_clear();
}

// "QUALNAME\0FILE\0FIRSTLINE" of `code` into `text` (kMaxPyString bytes).
size_t CodeText(Object* code, char* text) {
  size_t n = 0;
  constexpr size_t kLineRoom = 24;
  AppendText(code, "co_qualname", text, &n, (kMaxPyString - kLineRoom) / 2);
  text[n++] = '\0';
  AppendText(code, "co_filename", text, &n, kMaxPyString - kLineRoom);
  text[n++] = '\0';
  long first = 0;
  if (Object* line = g_api.get_attr_string(code, "co_firstlineno")) {
    first = g_api.long_as_long(line);
    g_api.decref(line);
  }
  g_api.err_clear();
  n += static_cast<size_t>(snprintf(text + n, kLineRoom, "%ld", first < 0 ? 0 : first));
  return n;
}

// The function id of `code`: its CodeText, interned once per generation. 0
// if it cannot be interned.
uint32_t FunctionId(Object* code) {
  size_t slot = Slot(code);
  if (g_cache.code[slot] == code) return g_cache.id[slot];
  char text[kMaxPyString];
  size_t n = CodeText(code, text);
  uint32_t id = InternForSampler(text, n, kKindPyFunction);
  if (id == 0) return 0;
  if (g_cache.used < kCacheMax) {
    g_api.incref(code);
    g_cache.code[slot] = code;
    g_cache.id[slot] = id;
    ++g_cache.used;
  }
  return id;
}

// The stack id of the thread whose current frame is `frame` (a borrowed
// reference), 0 if it cannot be interned.
uint32_t StackId(Object* frame) {
  uint32_t ids[kMaxDepth];
  uint32_t lines[kMaxDepth];
  int depth = 0;
  bool cut = false;
  g_api.incref(frame);
  while (frame != nullptr) {
    if (depth == kMaxDepth) {
      cut = true;
      g_api.decref(frame);
      break;
    }
    Object* code = g_api.frame_get_code(frame);
    int line = g_api.frame_get_line_number(frame);
    ids[depth] = code != nullptr ? FunctionId(code) : 0;
    lines[depth] = line > 0 ? static_cast<uint32_t>(line) : 0;
    if (code != nullptr) g_api.decref(code);
    if (ids[depth] == 0) {
      g_api.decref(frame);
      return 0;
    }
    ++depth;
    Object* back = g_api.frame_get_back(frame);
    g_api.decref(frame);
    frame = back;
  }
  uint8_t bytes[kMaxPyString];
  size_t n = 0;
  if (cut) {
    bytes[n++] = 0;
    bytes[n++] = 0;
  }
  for (int i = depth; i-- > 0 && n + 10 <= sizeof(bytes);) {
    n = static_cast<size_t>(iotap::wire::PutVarint(bytes + n, ids[i]) - bytes);
    n = static_cast<size_t>(iotap::wire::PutVarint(bytes + n, lines[i]) - bytes);
  }
  return n == 0 ? 0 : InternForSampler(reinterpret_cast<const char*>(bytes), n, kKindPyStack);
}

}  // namespace

namespace {

// A look at the interpreter's threads: the collector paused (no finaliser
// runs, and gives the GIL away, while frames are held) and the cache made
// this process's and this generation's.
class Look {
 public:
  Look() : collecting_(g_api.gc_disable()) {
    pid_t pid = static_cast<pid_t>(RawSyscall(SYS_getpid));
    generation_ = StringGeneration();
    if (g_cache.generation != generation_ || g_cache.pid != pid) {
      ClearCache();
      g_cache.generation = generation_;
      g_cache.pid = pid;
    }
  }
  ~Look() {
    g_api.err_clear();
    if (collecting_) g_api.gc_enable();
  }
  Look(const Look&) = delete;
  Look& operator=(const Look&) = delete;

  // The stack of `frame` (borrowed), as iotap_py_intern returns it, or 0.
  // Interning may empty the string table: ids of the earlier generation are
  // not returned, and the cache starts over.
  long long Stack(Object* frame) {
    uint32_t id = StackId(frame);
    uint32_t now = StringGeneration();
    if (now != generation_) {
      ClearCache();
      g_cache.generation = now;
      generation_ = now;
      id = StackId(frame);
      if (StringGeneration() != generation_) id = 0;
    }
    if (id == 0) return 0;
    return static_cast<long long>((static_cast<uint64_t>(generation_) << 32) | id);
  }

 private:
  int collecting_;
  uint32_t generation_;
};

int ReadStacks(const unsigned long* idents, int n, long long* stacks) {
  if (n < 0 || (n > 0 && (idents == nullptr || stacks == nullptr))) return -1;
  if (!Api()) return -1;
  for (int i = 0; i < n; ++i) stacks[i] = 0;
  if (n == 0 || !Recording()) return 0;
  Look look;
  Object* frames = g_api.current_frames();
  int found = 0;
  for (int i = 0; frames != nullptr && i < n; ++i) {
    Object* key = g_api.long_from_unsigned_long(idents[i]);
    Object* frame = key != nullptr ? g_api.dict_get_item(frames, key) : nullptr;
    if (key != nullptr) g_api.decref(key);
    if (frame == nullptr) continue;
    stacks[i] = look.Stack(frame);
    if (stacks[i] != 0) ++found;
  }
  if (frames != nullptr) g_api.decref(frames);
  return found;
}

// --- iotap_py_run_sampler: the sampler's loop and look ---------------------

// Threads followed at once; more are not sampled.
constexpr size_t kThreadSlots = 1024;
constexpr size_t kThreadsMax = kThreadSlots * 3 / 4;
// A thread whose timer fired not once in this much of its CPU time (in
// intervals) blocks the sampler's signal: it is sampled with the GIL.
constexpr int64_t kSilentIntervals = 5;

// A thread followed since its first look. Sampled by its CPU timer's signal
// (`slot` >= 0, its ring in py_signal.cc; `cpu` its CPU time when armed), or
// else with the GIL at the looks: `cpu` and `time` (CLOCK_MONOTONIC) where
// its next sample's CPU time and window start, `seen` its CPU time at the
// last look. A pthread's ident is reused by a later thread (glibc keeps
// ended threads' stacks), so an entry is that thread's only while the kernel
// id behind the ident is the same.
struct Followed {
  unsigned long ident;  // 0: a free slot
  pid_t tid;
  clockid_t clock;
  int slot;
  int64_t cpu;
  int64_t time;
  int64_t seen;
};

// Two tables: the last look's threads, and this look's, built from them (a
// thread gone since is then forgotten; its timer deleted). Touched only by
// the sampler thread, with the GIL held.
struct Threads {
  Followed table[2][kThreadSlots];
  int current;  // the last look's table
  int64_t last_cpu;  // the process's CPU time at the last look
  bool signals;  // threads are sampled by signal
  int with_gil;  // threads the last look sampled with the GIL
  int skipped;   // wake-ups without a look since the last one
};

// With the signal sampler, and every followed thread sampled by signal, a
// look (which takes the GIL from the job) only finds new and gone threads:
// one in kSignalLookEvery wake-ups does, the others only empty the rings.
// The sampler then wakes every kSignalWakeIntervals intervals (the rings
// hold 0.8 s of a busy thread's samples at 100 Hz). A thread's first tenth
// of a second (at 100 Hz) may so go unsampled; the signal's handler is
// checked at every wake-up all the same.
constexpr int kSignalWakeIntervals = 2;
constexpr int kSignalLookEvery = 5;
constinit Threads g_threads = {};

size_t ThreadSlot(const Followed* table, unsigned long ident) {
  uint64_t h = static_cast<uint64_t>(ident) * 0x9E3779B97F4A7C15ull;
  size_t i = static_cast<size_t>(h >> 40) & (kThreadSlots - 1);
  while (table[i].ident != 0 && table[i].ident != ident) i = (i + 1) & (kThreadSlots - 1);
  return i;
}

// CLOCK_MONOTONIC (Python's time.monotonic_ns), as a signed count.
int64_t Monotonic() { return static_cast<int64_t>(MonotonicNs()); }

// Starts sampling `next`'s thread with the GIL, its CPU time counted from
// now. The window starts before the CPU time is read and ends after, so
// that a sample's CPU time always lies within its window.
bool FollowWithGil(Followed* next) {
  next->slot = -1;
  next->time = Monotonic();
  next->cpu = ClockNs(next->clock);
  next->seen = next->cpu;
  return next->cpu >= 0;
}

// Looks at one thread (`frame`, borrowed, its current frame) and records its
// sample when due; `last` is the thread's entry of the last look, if any.
// Returns whether the thread stays followed, in `*next`.
bool LookAt(Look* look, const Followed* last, unsigned long ident, Object* frame,
            int64_t interval_ns, Followed* next) {
  // The kernel's id of the thread, from its pthread (right for threads
  // started by C extensions, and for the main thread of a fork child): the
  // thread holds a Python frame while this thread holds the GIL, so it is
  // alive.
  clockid_t clock;
  if (pthread_getcpuclockid(static_cast<pthread_t>(ident), &clock) != 0) return false;
  pid_t tid = static_cast<pid_t>(~(clock >> 3));
  if (last != nullptr && last->tid != tid) {
    DisarmPyThread(last->slot);  // the ident's earlier thread ended
    last = nullptr;
  }
  if (last == nullptr) {
    *next = {};
    next->ident = ident;
    next->tid = tid;
    next->clock = clock;
    if (g_threads.signals) {
      next->cpu = ClockNs(clock);
      next->slot = next->cpu >= 0 ? ArmPyThread(tid) : -1;
      if (next->slot >= 0) return true;
    }
    return FollowWithGil(next);
  }
  *next = *last;
  if (next->slot >= 0) {
    // Sampled by signal, unless the thread blocks it (or the signal
    // sampler was turned off): then with the GIL from now on.
    if (g_threads.signals && PySlotFired(next->slot) != 0) return true;
    int64_t used = ClockNs(clock);
    if (used < 0) return false;
    if (g_threads.signals && used - next->cpu < kSilentIntervals * interval_ns) return true;
    DisarmPyThread(next->slot);
    return FollowWithGil(next);
  }
  int64_t before = Monotonic();
  int64_t used = ClockNs(clock);
  if (used < 0) return false;  // ended; its ident may come back for another
  int64_t after = Monotonic();
  bool ran = used != next->seen;
  next->seen = used;
  // A thread is sampled once it used half an interval of CPU: a busy thread
  // then is sampled at every wake-up, even when wake-ups come a little early.
  if (!ran || used - next->cpu < interval_ns / 2) return true;
  long long stack = look->Stack(frame);
  // 0: no Python frame any more, or nothing interned; the CPU time goes to
  // the next sample. The windows overlap by one reading of the clocks.
  if (stack != 0 && RecordPySample(tid, static_cast<uint32_t>(stack), used - next->cpu,
                                   next->time, after, static_cast<uint32_t>(stack >> 32)) == 0) {
    next->cpu = used;
    next->time = before;
  }
  return true;
}

// Records how this process's samples are taken from now on.
void RecordMethod(bool signals, int64_t interval_ns, const char* why) {
  if (!Recording()) return;
  RecordPySamplerState(signals ? kPySamplerBySignal : kPySamplerWithGil,
                       interval_ns > 0 ? 1000000000 / interval_ns : 0, signals ? nullptr : why);
}

// One look at the threads, with the GIL held: new threads get their timers
// (or are sampled here), gone ones lose them. Returns 1 if it looked, 0 if
// the process was idle.
int LookAtThreads(int64_t interval_ns) {
  Threads& t = g_threads;
  // Below a tenth of an interval of process CPU since the last look, nothing
  // ran but the sampler itself.
  int64_t cpu = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
  if (cpu - t.last_cpu < interval_ns / 10) return 0;
  t.last_cpu = cpu;
  if (t.signals && !PySignalHandlerKept()) {
    // The job took the signal for itself: every thread is sampled with the
    // GIL from now on.
    t.signals = false;
    StopPySignals();
    RecordMethod(false, interval_ns, "the job installed its own handler for the sampler's signal");
  }
  const Followed* last = t.table[t.current];
  Followed* next = t.table[1 - t.current];
  memset(next, 0, sizeof(t.table[0]));
  size_t used = 0;
  unsigned long me = static_cast<unsigned long>(pthread_self());
  Look look;
  Object* frames = g_api.current_frames();
  ssize_t pos = 0;
  Object* key = nullptr;
  Object* frame = nullptr;
  while (frames != nullptr && used < kThreadsMax &&
         g_api.dict_next(frames, &pos, &key, &frame) != 0) {
    unsigned long ident = g_api.long_as_unsigned_long(key);
    if (ident == me || ident == 0 || ident == static_cast<unsigned long>(-1)) continue;
    size_t from = ThreadSlot(last, ident);
    Followed entry;
    if (LookAt(&look, last[from].ident == ident ? &last[from] : nullptr, ident, frame,
               interval_ns, &entry)) {
      next[ThreadSlot(next, ident)] = entry;
      ++used;
    }
  }
  if (frames != nullptr) g_api.decref(frames);
  t.with_gil = 0;
  for (size_t i = 0; i < kThreadSlots; ++i) {
    if (next[i].ident != 0 && next[i].slot < 0) ++t.with_gil;
  }
  // The timers of threads gone since the last look.
  for (size_t i = 0; i < kThreadSlots; ++i) {
    const Followed& gone = last[i];
    if (gone.ident == 0 || gone.slot < 0) continue;
    const Followed& now = next[ThreadSlot(next, gone.ident)];
    if (now.ident != gone.ident || now.slot != gone.slot) DisarmPyThread(gone.slot);
  }
  t.current = 1 - t.current;
  return 1;
}

// Whether the signal sampler reads the stack of this thread (the sampler
// thread, whose Python frames are those of the helper's loop) as the C API
// does: the same functions and lines, frame by frame. Run with the GIL held.
bool WalkMatchesApi(const PySignalSetup& setup) {
  RawFrame raw[kMaxPyDepth];
  bool cut = false;
  int depth = WalkOwnPyFrames(setup, raw, &cut);
  if (depth <= 0 || cut) return false;
  Object* frame = g_api.eval_get_frame();  // borrowed
  if (frame == nullptr) return false;
  g_api.incref(frame);
  int i = 0;
  bool same = true;
  while (frame != nullptr && same) {
    Object* code = g_api.frame_get_code(frame);
    int line = g_api.frame_get_line_number(frame);
    char api[kMaxPyString];
    char walked[kMaxPyString];
    size_t api_size = code != nullptr ? CodeText(code, api) : 0;
    size_t walked_size = 0;
    same = code != nullptr && i < depth &&
           PyFrameText(raw[i], walked, sizeof(walked), &walked_size) &&
           walked_size == api_size && memcmp(api, walked, api_size) == 0 &&
           raw[i].line == static_cast<uint32_t>(line > 0 ? line : 0);
    if (code != nullptr) g_api.decref(code);
    Object* back = g_api.frame_get_back(frame);
    g_api.decref(frame);
    frame = back;
    ++i;
  }
  if (frame != nullptr) g_api.decref(frame);
  g_api.err_clear();
  return same && i == depth;
}

// Whether threads can be sampled by signal in this interpreter (the GIL
// held): a CPython whose structures the shim knows, read here as the C API
// reads them, and a free signal. IOTAP_TEST_PY_GIL_SAMPLER=1 keeps to the
// GIL. Where not, `*why` says why (static text or `buffer`).
bool StartSignals(int64_t interval_ns, const char** why, char* buffer, size_t room) {
  if (g_config.py_gil_sampler) {
    *why = "IOTAP_TEST_PY_GIL_SAMPLER=1";
    return false;
  }
  if (g_api.this_thread_state == nullptr || g_api.eval_get_frame == nullptr ||
      g_api.unicode_type == nullptr || g_api.code_type == nullptr || g_api.version == nullptr) {
    *why = "the interpreter lacks a C API symbol the signal sampler needs";
    return false;
  }
  const PyLayout* layout = PyLayoutFor(*g_api.version);
  if (layout == nullptr) {
    unsigned long v = *g_api.version;
    snprintf(buffer, room,
             "CPython %lu.%lu.%lu: the signal sampler reads the frames of 3.11.1 to 3.11.x only",
             (v >> 24) & 0xFF, (v >> 16) & 0xFF, (v >> 8) & 0xFF);
    *why = buffer;
    return false;
  }
  PySignalSetup setup = {g_api.this_thread_state,
                         {layout, g_api.unicode_type, g_api.code_type, ReadOwnMemory}};
  // The walk reads through process_vm_readv: where a seccomp profile
  // refuses it, the check below would only say that the walk failed.
  uint64_t probe = 1;
  uint64_t copy = 0;
  ReadPiece piece = {reinterpret_cast<uintptr_t>(&probe), &copy, sizeof(copy)};
  if (!ReadOwnMemory(static_cast<pid_t>(RawSyscall(SYS_getpid)), &piece, 1) || copy != 1) {
    snprintf(buffer, room, "process_vm_readv of the process's own memory refused (%s)",
             strerror(errno));
    *why = buffer;
    return false;
  }
  if (!StartPySignals(setup, interval_ns)) {
    *why = "no memory for the signal sampler's rings";
    return false;
  }
  if (!WalkMatchesApi(setup)) {
    *why = "the signal handler's reading of this interpreter's frames differs from its C API's";
    return false;
  }
  if (!TakePySignal()) {
    *why = "no real-time signal left with its default handler";
    return false;
  }
  return true;
}

// The sampler's loop, its wake-up word and its owner (a fork child has no
// sampler thread until the helper starts one). Its rules (idle below a tenth
// of an interval of process CPU, a sample due at half an interval of a
// thread's CPU, at most 8 idle intervals between looks) are those of the
// helper's own loop for interpreters before 3.11 (_sampler.py), which keep
// them in step.
constexpr int kMaxIdleIntervals = 8;
struct Loop {
  std::atomic<uint32_t> stop;
  pid_t running;  // the process whose sampler thread is in the loop, or 0
};
constinit Loop g_loop = {};

int RunSampler(int64_t interval_ns) {
  if (!Api()) return -1;
  if (interval_ns == 0) return 0;
  pid_t pid = static_cast<pid_t>(RawSyscall(SYS_getpid));
  if (interval_ns < 0 || g_loop.running == pid) return -1;
  g_loop.running = pid;
  Threads& t = g_threads;
  memset(t.table, 0, sizeof(t.table));
  t.with_gil = 0;
  t.skipped = kSignalLookEvery;  // the first wake-up looks
  t.last_cpu = ClockNs(CLOCK_PROCESS_CPUTIME_ID);
  const char* why = "";
  char buffer[160];
  t.signals = StartSignals(interval_ns, &why, buffer, sizeof(buffer));
  RecordMethod(t.signals, interval_ns, why);
  int64_t deadline = Monotonic() + interval_ns;
  int idle = 0;  // looks in a row that found the process idle
  int result = 0;
  void* state = g_api.save_thread();
  while (g_loop.stop.load(std::memory_order_acquire) == 0) {
    // Wake-ups keep to a fixed schedule, so a late one (the GIL was held) is
    // followed by an early one.
    int64_t now = Monotonic();
    if (deadline - now < interval_ns / 10) deadline = now + interval_ns / 10;
    struct timespec at = {static_cast<time_t>(deadline / 1000000000),
                          static_cast<long>(deadline % 1000000000)};
    RawSyscall(SYS_futex, &g_loop.stop, FUTEX_WAIT_BITSET_PRIVATE, 0, &at, nullptr,
               FUTEX_BITSET_MATCH_ANY);
    if (g_loop.stop.load(std::memory_order_acquire) != 0) break;
    if (Monotonic() < deadline) continue;  // a signal, or spurious
    // The samples the threads' handlers took, without the GIL.
    if (t.signals) DrainPySamples();
    bool by_signal = t.signals && t.with_gil == 0;
    if (by_signal && ++t.skipped < kSignalLookEvery && PySignalHandlerKept()) {
      deadline += interval_ns * kSignalWakeIntervals;
      now = Monotonic();
      if (deadline < now) deadline = now;
      continue;
    }
    t.skipped = 0;
    g_api.restore_thread(state);
    bool looked = false;
    if (Recording()) {
      looked = LookAtThreads(interval_ns) != 0;
    } else {
      result = -1;  // tracing is off: nothing more to record
    }
    state = g_api.save_thread();
    if (result != 0) break;
    // An idle process is looked at less and less often, down to one look in
    // kMaxIdleIntervals: the CPU it uses meanwhile is still counted, in the
    // next sample's weight.
    idle = looked ? 0 : idle + 1;
    int64_t step = interval_ns * (1 + idle < kMaxIdleIntervals ? 1 + idle : kMaxIdleIntervals);
    if (t.signals && t.with_gil == 0 && step < interval_ns * kSignalWakeIntervals) {
      step = interval_ns * kSignalWakeIntervals;
    }
    deadline += step;
    now = Monotonic();
    if (deadline < now) deadline = now;
  }
  // Every timer deleted, what the rings hold recorded.
  StopPySignals();
  t.signals = false;
  g_api.restore_thread(state);
  g_loop.running = 0;
  return result;
}

void StopSampler() {
  g_loop.stop.store(1, std::memory_order_release);
  RawSyscall(SYS_futex, &g_loop.stop, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

}  // namespace

IOTAP_EXPORT int iotap_py_run_sampler(long long interval_ns) {
  int saved = errno;
  int result = RunSampler(interval_ns);
  errno = saved;
  return result;
}

IOTAP_EXPORT void iotap_py_stop_sampler(void) {
  int saved = errno;
  StopSampler();
  errno = saved;
}

IOTAP_EXPORT int iotap_py_stacks(const unsigned long* idents, int n, long long* stacks) {
  int saved = errno;  // looking the interpreter's functions up may set it
  int found = ReadStacks(idents, n, stacks);
  errno = saved;
  return found;
}
