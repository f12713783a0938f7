"""CPU time of a command's threads, the tracer's own apart from the job's.

Runs COMMAND and, every few milliseconds while it runs, reads the CPU time
Linux has charged each thread of it and of every process it starts
(/proc/PID/task/TID/schedstat, in nanoseconds: finer than the clock ticks
of /proc/PID/stat and of getrusage), keeping each thread's last reading.
When COMMAND ends it prints one line of sums by role:

  job=    the job's own threads, every process
  writer= the shim's writer threads ("iotap-writer"), every process
  first=  both, of the first process of the job (under `iotap run`, the
          command it runs; otherwise COMMAND itself)
  others= both, of every later process (DataLoader workers, ...)

and the same split of the writer threads alone (first_writer=,
others_writer=), each in milliseconds, and how many times the writers of
the later processes were scheduled in (others_writer_runs=: about one
wake-up each, a drain of the page-fault buffers or a flush). COMMAND's own output goes to this
script's stderr. A thread that ends between two readings loses the CPU time
it used since the last one (at most the poll interval's worth), so short
threads are undercounted a little; the shim's writers live as long as their
process.

  /usr/bin/python3 tests/bench/thread_cpu.py -- build/bin/iotap run -o /tmp/t -- \\
      /usr/bin/python3 examples/shards/train.py --data /tmp/shards --mmap --epochs 1

`iotap run` itself and this script are not counted. THREAD_CPU_DEBUG=1 also
writes each thread's reading to stderr ("PID TID IS_WRITER MS").
"""

import argparse
import os
import subprocess
import sys
import time

WRITER = "iotap-writer"


def children(pid):
    """The pids of `pid`'s children (any of its threads' children)."""
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(x) for x in f.read().split())
        except OSError:
            pass
    return out


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--interval-ms", type=float, default=5, help="poll interval (default 5)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("no command to run")
    try:
        job = subprocess.Popen(command, stdout=sys.stderr)
    except OSError as e:
        sys.exit(f"thread_cpu.py: cannot run {command[0]}: {e.strerror}")
    last = {}  # (pid, tid) -> (ns, is writer)
    order = {}  # pid -> when first seen, for "first"
    skip = {job.pid} if os.path.basename(command[0]) == "iotap" else set()
    while job.poll() is None:
        pending = [job.pid]
        seen = set()
        while pending:
            pid = pending.pop()
            if pid in seen:
                continue
            seen.add(pid)
            pending.extend(children(pid))
            if pid in skip:
                continue
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            order.setdefault(pid, len(order))
            for tid in tids:
                try:
                    with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                        fields = f.read().split()
                        ns, runs = int(fields[0]), int(fields[2])
                    with open(f"/proc/{pid}/task/{tid}/comm") as f:
                        writer = f.read().strip() == WRITER
                except (OSError, ValueError, IndexError):
                    continue
                last[(pid, int(tid))] = (ns, writer, runs)
        time.sleep(args.interval_ms / 1000)
    first = min(order, key=order.get) if order else None
    sums = dict.fromkeys(("job", "writer", "first", "others", "first_writer", "others_writer"), 0)
    runs_of_others = 0
    for (pid, _), (ns, writer, runs) in last.items():
        where = "first" if pid == first else "others"
        sums["writer" if writer else "job"] += ns
        sums[where] += ns
        if writer:
            sums[where + "_writer"] += ns
            if where == "others":
                runs_of_others += runs
    if os.environ.get("THREAD_CPU_DEBUG"):
        for (pid, tid), (ns, writer, runs) in sorted(last.items()):
            print(pid, tid, writer, ns / 1e6, runs, file=sys.stderr)
    print(" ".join(f"{k}={v / 1e6:.1f}" for k, v in sums.items()),
          f"others_writer_runs={runs_of_others}")
    return job.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
