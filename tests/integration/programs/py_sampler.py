"""Threads that use known amounts of CPU time in known Python functions, for
tests/integration/py_samples_test.cc, run under `iotap run --py-samples`.

  py_sampler.py threads   the main thread in spin_long and spin_short, a
                          threading.Thread in thread_work, a thread started
                          through C (pthread_create via ctypes, unknown to
                          `threading`) in c_thread_work, C code that releases
                          the GIL (hashlib) under hash_work, and a thread that
                          only waits, in idle_wait
  py_sampler.py fork      the parent in parent_work, then a forked child in
                          child_work; the parent waits for it
  py_sampler.py gil       the main thread in turns in C code that holds the
                          GIL (bytes.translate, about 12 ms: hold_gil), right
                          away in C code that lets it go (hashlib, about
                          11 ms: release_gil) and in Python code (5 ms:
                          python_work)
  py_sampler.py closefds  a thread in before_close; the job then closes
                          every descriptor above 2 (the sampler's parked
                          events with them) and puts /dev/null on each
                          number from 3 to 1023 (or below the descriptor
                          limit); the thread goes on in after_close and ends;
                          the job prints `kept N of M`: how many of those M
                          descriptors are still open, and /dev/null, at its
                          end
  py_sampler.py loader M  a DataLoader with 2 workers started by M (fork,
                          spawn, forkserver) over a dataset whose
                          __getitem__ spends its CPU time in Slow.decode

Each line printed is `NAME TID CPU_NS`: the thread that ran NAME and the CPU
time it used there (time.thread_time_ns around the call), so the test can
compare the samples' weights with it.
"""

import ctypes
import hashlib
import os
import resource
import sys
import threading
import time

CPU_S = float(os.environ.get("PY_SAMPLER_CPU_S", "0.3"))


def report(name, cpu_ns):
    print(f"{name} {threading.get_native_id()} {cpu_ns}", flush=True)


def burn(seconds):
    """Pure Python work for `seconds` of this thread's CPU time."""
    end = time.thread_time() + seconds
    x = 0
    while time.thread_time() < end:
        for i in range(2000):
            x += i * i
    return x


def timed(function, *args):
    start = time.thread_time_ns()
    function(*args)
    return time.thread_time_ns() - start


def spin_long():
    burn(2 * CPU_S)


def spin_short():
    burn(CPU_S)


def thread_work():
    report("thread_work", timed(burn, CPU_S))


def c_thread_work(_arg):
    report("c_thread_work", timed(burn, CPU_S))
    return 0


def hash_work():
    data = b"x" * (1 << 20)
    end = time.thread_time() + CPU_S
    while time.thread_time() < end:
        hashlib.sha256(data).digest()  # releases the GIL: C code under this frame


def idle_wait(event):
    print(f"idle_wait {threading.get_native_id()} 0", flush=True)
    event.wait()


def start_c_thread():
    """A thread made by pthread_create, as a C extension makes one: Python
    first sees it when the callback takes the GIL."""
    libc = ctypes.CDLL(None)
    start_routine = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(c_thread_work)
    handle = ctypes.c_ulong()
    libc.pthread_create.argtypes = [ctypes.POINTER(ctypes.c_ulong), ctypes.c_void_p,
                                    ctypes.c_void_p, ctypes.c_void_p]
    if libc.pthread_create(ctypes.byref(handle), None, start_routine, None) != 0:
        sys.exit("pthread_create failed")
    return libc, handle, start_routine


def threads():
    idle_done = threading.Event()
    idle = threading.Thread(target=idle_wait, args=(idle_done,))
    idle.start()
    report("spin_long", timed(spin_long))
    report("spin_short", timed(spin_short))
    worker = threading.Thread(target=thread_work)
    worker.start()
    worker.join()
    libc, handle, keep = start_c_thread()
    libc.pthread_join.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
    libc.pthread_join(handle, None)
    report("hash_work", timed(hash_work))
    idle_done.set()
    idle.join()


def parent_work():
    burn(CPU_S)


def child_work():
    burn(CPU_S)


def fork():
    report("parent_work", timed(parent_work))
    pid = os.fork()
    if pid == 0:
        report("child_work", timed(child_work))
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        sys.exit(f"child ended with status {status}")


def hold_gil(data, table):
    return data.translate(table)  # one C call that keeps the GIL throughout


released = [0]


def release_gil(data):
    # Entered straight from hold_gil's return: the first point where the
    # thread may let the GIL go after the translate is this function's start.
    start = time.thread_time_ns()
    hashlib.sha256(memoryview(data)[:1 << 22]).digest()  # 4 MiB, the GIL let go
    released[0] += time.thread_time_ns() - start


def python_work():
    burn(0.005)


def gil():
    """CPU time in C code that holds the GIL is charged to that code only by
    a sampler that does not wait for the GIL to take its sample. hold_gil's
    time is what the pair of calls used less what release_gil timed itself:
    a timer read inside hold_gil, after the translate, would be a point where
    the thread lets the GIL go, in hold_gil."""
    held = bytes(range(256)) * (1 << 15)  # 8 MiB
    table = bytes(reversed(range(256)))
    spent = {"hold_gil": 0, "release_gil": 0, "python_work": 0}
    pair = 0
    while sum(spent.values()) < CPU_S * 1e9:
        start = time.thread_time_ns()
        release_gil(hold_gil(held, table))
        pair += time.thread_time_ns() - start
        spent["release_gil"] = released[0]
        spent["hold_gil"] = pair - released[0]
        spent["python_work"] += timed(python_work)
    for name, ns in spent.items():
        report(name, ns)


def before_close():
    burn(CPU_S)


def after_close():
    burn(CPU_S)


def closefds():
    closed = threading.Event()
    go_on = threading.Event()

    def work():
        report("before_close", timed(before_close))
        closed.set()
        go_on.wait()
        report("after_close", timed(after_close))

    thread = threading.Thread(target=work)
    thread.start()
    closed.wait()
    null = os.open("/dev/null", os.O_RDONLY)
    null_id = os.fstat(null)[:2]
    top = min(resource.getrlimit(resource.RLIMIT_NOFILE)[0], 1024)
    os.closerange(3, top)
    null = os.open("/dev/null", os.O_RDONLY)
    for fd in range(3, top):
        if fd != null:
            os.dup2(null, fd, inheritable=False)
    go_on.set()
    thread.join()
    time.sleep(0.3)  # the sampler notices the thread's end and lets it go
    kept = 0
    for fd in range(3, top):
        try:
            kept += os.fstat(fd)[:2] == null_id
        except OSError:
            pass
    print(f"kept {kept} of {top - 3}", flush=True)


class Slow:
    """A map-style dataset whose samples cost CPU time to make."""

    def __len__(self):
        return 16

    def __getitem__(self, index):
        return self.decode(index)

    def decode(self, index):
        burn(CPU_S / 8)
        return index


def loader(method):
    from torch.utils.data import DataLoader
    batches = DataLoader(Slow(), batch_size=4, num_workers=2, multiprocessing_context=method)
    print("batches", len(list(batches)), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "loader":
        loader(sys.argv[2])
    else:
        {"threads": threads, "fork": fork, "gil": gil, "closefds": closefds}[sys.argv[1]]()
