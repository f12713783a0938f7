"""Python stack samples: where each thread of the process spends its CPU time.

`iotap run --py-samples` (and `--torch-steps`, in the processes that import
torch) starts one sampler per Python process through the helper's
sitecustomize; a program may start it itself with iotap.sample_stacks(). The
sampler is a thread of its own that wakes `hz` times a second of wall time
and, when the process used CPU since its last look, reads the CPU clock of
every thread that has a Python frame. A thread that used at least half an
interval of CPU since its previous sample, and ran since the last look, is
sampled: its current stack (sys._current_frames) becomes one OP_PY_SAMPLE
event whose weight is that CPU time and whose window is the time since its
previous sample. So samples come at about `hz` per second of each thread's CPU
time, never for a thread that did not run; an idle process costs one clock
read per wake-up, and is woken less and less often, down to `hz` / 8 times
a second.

From CPython 3.11 on the thread's whole loop is one call into the shim
(iotap_py_run_sampler, interpose/pystacks/py_stacks.cc), which sleeps without
the GIL and does each look in C by the same rules (the thresholds below and
MAX_IDLE_INTERVALS: change them in both); it costs less than half of the
loop written here.

From CPython 3.11.1 on, the shim takes the samples by signal: at each look
it gives every new thread with a Python frame a perf task-clock event (a
POSIX timer on the thread's CPU clock where perf events are refused) whose
signal interrupts that thread as its CPU time passes, and the handler, in
the thread itself, copies the thread's own stack from the interpreter's
frames into a ring that the loop empties without the GIL
(interpose/pystacks/py_signal.cc). Why a signal: this thread needs the GIL to
read a stack, so its sample lands where the sampled thread next lets the
GIL go, and CPU spent in C code that holds the GIL (PIL's filters,
bytes.translate) is charged to the code that runs after it. Why in the
shim and not here: a Python signal handler runs only in the main thread and
only between bytecodes, so it cannot tell which thread used the CPU and
waits for long C calls to return; SIGPROF and ITIMER_PROF are the job's
own. The shim reads the frames of CPython 3.11 only (their layout changes
with every version), checks its reading against the C API at start, and
falls back to the look described above (sys._current_frames and its C
equivalent, which work on every CPython from 3.8 on) wherever it cannot
sample by signal: other versions, no free real-time signal, a thread that
blocks the signal. Either way a thread running C code (PIL's decoder, a
torch operator) shows the Python frame that called it, which is what the
user can change, and threads started by C extensions are sampled once they
have a Python frame.

From CPython 3.11 on, a frame of another thread must not be walked by Python
code: between two of the sampler's bytecodes the GIL may go to that thread,
which pops the frames being read, and the interpreter crashes. There the
loop above runs in the shim: each look holds the GIL from start to end and
uses only CPython's C API. Before 3.11 frames are objects of their own and
the sampler walks them here.

Functions and stacks are interned once through the shim (iotap_py_intern)
and each sample is one ctypes call (iotap_py_sample). The
calls keep the GIL (ctypes.PyDLL) and do not block. Only the standard library
is used.
"""

import _thread
import atexit
import ctypes
import os
import sys
import threading
import time

__all__ = ["start"]

# Kinds of iotap_py_intern and states of iotap_py_sampler (interpose/iotap.h).
PY_FUNCTION = 12
PY_STACK = 13
STARTED = 1
UNAVAILABLE = 2
WITH_GIL = 4

DEFAULT_HZ = 100
# Frames kept per sample, innermost first; a deeper stack is cut and marked
# with function id 0 at its outer end.
MAX_DEPTH = 128
# The longest pause between two looks at an idle process, in intervals.
MAX_IDLE_INTERVALS = 8
# Entries kept in the interning caches before they are emptied (the shim's
# string table gives the same ids again for the same bytes).
MAX_CACHED = 1 << 16


def _shim():
    """The shim's sampler entry points, called with the GIL held, or None."""
    try:
        process = ctypes.PyDLL(None)
        intern, sample, state = (process.iotap_py_intern, process.iotap_py_sample,
                                 process.iotap_py_sampler)
    except (OSError, AttributeError):
        return None
    intern.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
    intern.restype = ctypes.c_longlong
    runner = None
    run = getattr(process, "iotap_py_run_sampler", None)
    if run is not None:
        run.argtypes = [ctypes.c_longlong]
        run.restype = ctypes.c_int
        stop = process.iotap_py_stop_sampler
        stop.argtypes = []
        stop.restype = None
        # From 3.11 on only, and only where the shim finds CPython's API.
        if sys.version_info >= (3, 11) and run(0) == 0:
            runner = (run, stop)
    sample.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_longlong, ctypes.c_longlong,
                       ctypes.c_longlong, ctypes.c_uint]
    sample.restype = ctypes.c_int
    state.argtypes = [ctypes.c_int, ctypes.c_longlong, ctypes.c_char_p]
    state.restype = ctypes.c_int
    return intern, sample, state, runner


def _varint(n):
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _cpu_clock(tid):
    """The CPU-time clock of thread `tid` of this process: Linux encodes the
    thread id in the clock id (what glibc's pthread_getcpuclockid returns).
    Reading a clock whose thread has ended fails with OSError; nothing is
    dereferenced."""
    return (~tid << 3) | 6


def _defining_class(code, frame):
    """Before Python 3.11 (no co_qualname): the class that defines a method,
    found once per code object from the `self` of a frame running it."""
    if code.co_argcount == 0 or code.co_varnames[0] not in ("self", "cls"):
        return None
    try:
        owner = frame.f_locals[code.co_varnames[0]]
    except (KeyError, AttributeError):
        return None
    for cls in (owner if isinstance(owner, type) else type(owner)).__mro__:
        function = cls.__dict__.get(code.co_name)
        if getattr(getattr(function, "__func__", function), "__code__", None) is code:
            return cls.__qualname__
    return None


class _Stale(Exception):
    """The shim's string table was emptied: ids must be interned again."""


class _Off(Exception):
    """The shim records nothing (tracing is off): the sampler stops."""


class _Thread:
    __slots__ = ("thread", "tid", "clock", "cpu", "time", "seen_cpu")


class _Sampler:
    def __init__(self, shim, hz):
        self.intern_fn, self.sample_fn, self.state_fn, self.runner = shim
        self.hz = hz
        self.interval_ns = 10**9 // hz
        # A thread is sampled once it used half an interval of CPU: a busy
        # thread then is sampled at every wake-up, even when wake-ups come a
        # little early.
        self.threshold_ns = self.interval_ns // 2
        # Below this much process CPU since the last look, nothing ran but
        # the sampler itself: skip the threads.
        self.idle_ns = self.interval_ns // 10
        self.stopping = False
        self._reset()

    def _reset(self):
        """Fresh state: at start, and in a fork child (new threads, new file)."""
        self.generation = None  # of the shim's string table, for the ids below
        self.functions = {}  # id(code) -> (function id bytes, code)
        self.sites = {}      # (id(code), lasti) -> (frame bytes, code)
        self.stacks = {}     # tuple of frame bytes, innermost first -> stack id
        self.threads = {}    # thread ident -> _Thread
        self.wake = _thread.allocate_lock()
        # Held while a look at the threads holds their frames, and taken by a
        # fork (_before_fork): a child must not inherit frame objects of this
        # thread or of others, whose interpreter frames the child no longer
        # has (CPython frees every other thread's frame stack in a fork
        # child), or its garbage collector reads freed memory.
        self.looking = _thread.allocate_lock()
        self.wake.acquire()
        self.done = _thread.allocate_lock()
        self.last_cpu = time.process_time_ns()

    # --- Interning -----------------------------------------------------------------

    def _forget(self):
        """Empties the interning caches (ids are interned again as needed)."""
        self.generation = None
        self.functions.clear()
        self.sites.clear()
        self.stacks.clear()

    def _intern(self, kind, data):
        value = self.intern_fn(kind, data, len(data))
        if value == 0:
            raise _Off()
        generation = value >> 32
        if generation != self.generation:
            stale = self.generation is not None
            self._forget()
            self.generation = generation
            if stale:
                raise _Stale()
        return value & 0xFFFFFFFF

    def _function(self, code, frame):
        entry = self.functions.get(id(code))
        if entry is None:
            name = getattr(code, "co_qualname", None)
            if name is None:
                owner = _defining_class(code, frame)
                name = f"{owner}.{code.co_name}" if owner else code.co_name
            text = f"{name}\0{code.co_filename}\0{code.co_firstlineno}"
            fid = self._intern(PY_FUNCTION, text.encode("utf-8", "surrogateescape"))
            entry = (_varint(fid), code)
            self.functions[id(code)] = entry
        return entry[0]

    def _stack(self, frame):
        """The interned id of the stack from `frame` outwards."""
        sites = self.sites
        key = []
        depth = 0
        while frame is not None:
            if depth == MAX_DEPTH:
                key.append(b"\x00\x00")
                break
            code = frame.f_code
            site = sites.get((id(code), frame.f_lasti))
            if site is None:
                line = frame.f_lineno or 0
                site = (self._function(code, frame) + _varint(line), code)
                sites[(id(code), frame.f_lasti)] = site
            key.append(site[0])
            frame = frame.f_back
            depth += 1
        key = tuple(key)
        stack = self.stacks.get(key)
        if stack is None:
            stack = self._intern(PY_STACK, b"".join(reversed(key)))
            self.stacks[key] = stack
        return stack

    # --- Threads -------------------------------------------------------------------

    def _thread_entry(self, ident, thread):
        """A thread seen for the first time (or again after its entry was
        dropped): its tid, and its CPU time from now on."""
        # The kernel's id of the thread, from its pthread: right for threads
        # started by C extensions (unknown to `threading`) and for the main
        # thread of a fork child, whose native_id in `threading` is still
        # the parent's (Python 3.11). The sampler holds the GIL and the thread
        # has a Python frame, so it is alive.
        try:
            tid = ~(time.pthread_getcpuclockid(ident) >> 3)
        except OSError:
            return None
        t = _Thread()
        t.thread = thread
        t.tid = tid
        t.clock = _cpu_clock(tid)
        # The window starts before the CPU time is read and (tick) ends after,
        # so that a sample's CPU time always lies within its window.
        t.time = time.monotonic_ns()
        try:
            t.cpu = time.clock_gettime_ns(t.clock)
        except OSError:
            return None
        t.seen_cpu = t.cpu
        return t

    def tick(self, me):
        """One look at the threads; records the samples due. Returns whether
        the process used CPU since the last look."""
        cpu = time.process_time_ns()
        if cpu - self.last_cpu < self.idle_ns:
            return False
        self.last_cpu = cpu
        with self.looking:
            return self._look(me)

    def _look(self, me):
        """tick's look at the threads, under self.looking: every frame it
        takes is let go when it returns."""
        frames = sys._current_frames()
        known = getattr(threading, "_active", {})
        threads = self.threads
        due = []
        for ident in [i for i in threads if i not in frames]:
            del threads[ident]
        for ident, frame in frames.items():
            if ident == me:
                continue
            thread = known.get(ident)
            t = threads.get(ident)
            if t is None or t.thread is not thread:
                t = self._thread_entry(ident, thread)
                if t is not None:
                    threads[ident] = t
                continue
            before = time.monotonic_ns()
            try:
                used = time.clock_gettime_ns(t.clock)
            except OSError:  # ended; the ident may come back for a new thread
                del threads[ident]
                continue
            after = time.monotonic_ns()
            ran = used != t.seen_cpu
            t.seen_cpu = used
            if not ran or used - t.cpu < self.threshold_ns:
                continue
            due.append((ident, t, frame, used, before, after))
        for ident, t, frame, used, before, after in due:
            self._record(t, frame, used, before, after)
        return True

    def _record(self, t, frame, cpu, before, after):
        # The sample's window: from before the last reading of the thread's
        # CPU time to after this one (so windows overlap by a reading's
        # duration). The next one starts before this reading.
        for _ in range(2):
            try:
                stack = self._stack(frame)
            except _Stale:
                continue
            # 1: the table was emptied since the stack was interned.
            if self.sample_fn(t.tid, stack, cpu - t.cpu, t.time, after, self.generation) != 1:
                break
            self._forget()
        t.cpu = cpu
        t.time = before
        if len(self.sites) > MAX_CACHED or len(self.stacks) > MAX_CACHED:
            self._forget()

    # --- The thread ----------------------------------------------------------------

    def run(self):
        try:
            if self.runner is not None:
                # Returns at stop(), or when tracing is off. It records how
                # it samples (by signal, or with the GIL and why).
                self.runner[0](self.interval_ns)
            else:
                v = sys.version_info
                why = (f"CPython {v[0]}.{v[1]}.{v[2]}: the signal sampler reads the frames of "
                       "3.11.1 to 3.11.x only" if v < (3, 11) else
                       "the shim did not find the C API the signal sampler needs")
                self.state_fn(WITH_GIL, self.hz, why.encode("utf-8", "replace"))
                self._loop()
        finally:
            self.done.release()

    def _loop(self):
        me = _thread.get_ident()
        interval = self.interval_ns
        deadline = time.monotonic_ns() + interval
        idle = 0  # looks in a row that found the process idle
        try:
            while not self.stopping:
                # Wake-ups keep to a fixed schedule, so a late one (the GIL
                # was held) is followed by an early one.
                pause = max(deadline - time.monotonic_ns(), interval // 10)
                if self.wake.acquire(timeout=pause / 1e9):
                    break
                idle = 0 if self.tick(me) else idle + 1
                # An idle process is looked at less and less often, down to
                # one look in MAX_IDLE_INTERVALS: the CPU it uses meanwhile
                # is still counted, in the next sample's weight.
                step = interval * min(1 + idle, MAX_IDLE_INTERVALS)
                deadline = max(deadline + step, time.monotonic_ns())
        except _Off:
            pass

    def launch(self, note):
        if self.state_fn(STARTED, self.hz, note.encode("utf-8", "replace")) != 0:
            return False
        self.done.acquire()
        _thread.start_new_thread(self.run, ())
        return True

    def stop(self):
        """Ends the thread (at exit), waiting up to a second for it."""
        self.stopping = True
        if self.runner is not None:
            self.runner[1]()
        self.wake.release()
        if self.done.acquire(timeout=1.0):
            self.done.release()


_sampler = None


def _before_fork():
    if _sampler is not None:
        _sampler.looking.acquire()


def _after_fork_in_parent():
    if _sampler is not None:
        _sampler.looking.release()


def _after_fork_in_child():
    if _sampler is not None:
        _sampler.looking.release()
        if not _sampler.stopping:
            _sampler._reset()
            _sampler.launch(_interpreter())


def _interpreter():
    version = ".".join(str(n) for n in sys.version_info[:3])
    return f"{sys.implementation.name} {version}"


def _unavailable(shim):
    """Why this interpreter cannot be sampled, or None if it can."""
    if sys.implementation.name != "cpython":
        return (f"{_interpreter()}: Python stack samples need CPython "
                "(sys._current_frames of every thread)")
    if not hasattr(sys, "_current_frames") or not hasattr(time, "pthread_getcpuclockid"):
        return f"{_interpreter()}: no per-thread CPU clocks on this platform"
    return None


def start(hz=DEFAULT_HZ):
    """Starts sampling this process's Python stacks, `hz` times per second of
    each thread's CPU time (forked children sample too). Returns True if the
    sampler runs, False if the shim is not loaded or this interpreter cannot
    be sampled (the trace then says why). Calling it again does nothing."""
    global _sampler
    if _sampler is not None:
        return True
    shim = _shim()
    if shim is None or hz <= 0:
        return False
    why = _unavailable(shim)
    if why is not None:
        shim[2](UNAVAILABLE, int(hz), why.encode("utf-8", "replace"))
        return False
    sampler = _Sampler(shim, int(hz))
    if not sampler.launch(_interpreter()):
        return False
    _sampler = sampler
    atexit.register(sampler.stop)
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
    return True
