"""What one DataLoader worker does over a numpy.memmap dataset, EPOCHS times
in one process, with each epoch's CPU split by thread.

Reads every sample of examples/shards/train.py's dataset at DIR (written by
its --generate-only) in a shuffled order, as ShardDataset does in a worker
(the shards mapped afresh each epoch, as a fresh worker maps them), and
stacks them in batches of 32. After each epoch it prints one line:

  epoch MAIN_MS WRITER_MS WALL_MS FAULTS

- MAIN_MS: CPU time (user + system) of the main thread, which reads and
  transforms the samples: what the job's own thread pays;
- WRITER_MS: CPU time of the shim's writer thread ("iotap-writer": it
  drains the page-fault samples, looks at the page tables, encodes and
  writes the trace), 0 untraced;
- WALL_MS: the epoch's wall time;
- FAULTS: the page faults the process took (minor and major, all threads).

CPU times come from /proc/self/task/TID/schedstat (nanoseconds), not from
getrusage's tick-sampled user/system split. Run it pinned to one CPU
(taskset) so that the writer's time shows in the wall time too, as it does
where the job's processes already fill the cores.

  /usr/bin/python3 tests/bench/memmap_worker_loop.py DIR EPOCHS
"""

import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "shards"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "common"))

import time  # noqa: E402

import torch  # noqa: E402
import train  # noqa: E402
from thread_cpu import WRITER  # noqa: E402  (the writer thread's name, beside this file)


def thread_ns():
    """CPU ns of the main thread and of the writer threads, so far."""
    main = writer = 0
    me = os.getpid()
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/self/task/{tid}/comm") as f:
                name = f.read().strip()
        except (OSError, ValueError, IndexError):
            continue
        if int(tid) == me:
            main += ns
        elif name == WRITER:
            writer += ns
    return main, writer


def faults():
    with open("/proc/self/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[7]) + int(fields[9])  # minflt, majflt


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__.split("\n\n")[-1].strip())
    root, epochs = argv[0], int(argv[1])
    # A DataLoader worker runs one intra-op thread.
    torch.set_num_threads(1)
    dataset = train.ShardDataset(root, False, mapped=True)
    order = list(range(len(dataset)))
    random.Random(1).shuffle(order)
    for _ in range(epochs):
        dataset.maps = None  # unmapped; mapped again at the first sample
        main0, writer0 = thread_ns()
        faults0 = faults()
        t0 = time.perf_counter()
        batch = []
        for i in order:
            batch.append(dataset[i][0])
            if len(batch) == 32:
                torch.stack(batch)
                batch = []
        wall = time.perf_counter() - t0
        main1, writer1 = thread_ns()
        print("epoch %.2f %.2f %.2f %d" % ((main1 - main0) / 1e6, (writer1 - writer0) / 1e6,
                                           wall * 1e3, faults() - faults0), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
