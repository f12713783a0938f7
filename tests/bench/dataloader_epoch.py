#!/usr/bin/python3
"""One DataLoader epoch, timed from inside: the worker the overhead harness
runs to price the waits layer (a trainer polling its workers' queues, the
workers' and feeder threads' semaphores and conditions).

  dataloader_epoch.py START_METHOD DATA_DIR SAMPLES WORKERS

reads SAMPLES files of 16 KiB from DATA_DIR (written on first use) through a
DataLoader with WORKERS workers started by START_METHOD (fork or spawn), in
batches of 32, with a small training step per batch, and prints the line
overhead_harness parses: ns_per_call (wall time of the epoch, workers'
start included, per batch), cpu_ns_per_call (CPU of the trainer and its
workers per batch), calls (batches), rss_growth_kib (0: not measured).
"""

import os
import resource
import sys
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

SAMPLE_BYTES = 16384
BATCH = 32


class Files(Dataset):
    def __init__(self, root, count):
        self.paths = [os.path.join(root, f"{i:05d}.bin") for i in range(count)]

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            raw = np.frombuffer(f.read(), dtype=np.uint8)
        x = torch.from_numpy(raw.astype(np.float32)).view(16, 32, 32)
        return (x - 127.5) / 64.0, i % 10


def make_data(root, count):
    os.makedirs(root, exist_ok=True)
    rng = np.random.default_rng(0)
    for i in range(count):
        path = os.path.join(root, f"{i:05d}.bin")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.write(rng.integers(0, 256, SAMPLE_BYTES, dtype=np.uint8).tobytes())


def cpu_seconds():
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main():
    method, root, samples, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    make_data(root, samples)
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.AvgPool2d(4), torch.nn.Flatten(),
                                torch.nn.Linear(16 * 8 * 8, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    extra = {"multiprocessing_context": method} if workers > 0 else {}
    loader = DataLoader(Files(root, samples), batch_size=BATCH, shuffle=True,
                        num_workers=workers, **extra)
    wall0, cpu0 = time.perf_counter(), cpu_seconds()
    batches = 0
    for x, y in loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        batches += 1
    del loader
    wall, cpu = time.perf_counter() - wall0, cpu_seconds() - cpu0
    print(f"ns_per_call={wall * 1e9 / batches:.2f} cpu_ns_per_call={cpu * 1e9 / batches:.2f} "
          f"calls={batches} rss_growth_kib=0")


if __name__ == "__main__":
    main()
