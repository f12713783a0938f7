"""A DataLoader over a numpy.memmap, for mapped_uring_test.cc:

  memmap_loader.py FILE WINDOW WORKERS

The memmap is made in the main process, before the workers fork (as
datasets usually are), so the workers fault on an inherited mapping. Sample
i is the byte at i * WINDOW; every sample is read once. Prints "sum N".
"""

import sys
import time

import numpy
import torch
from torch.utils.data import DataLoader, Dataset


class Windows(Dataset):
    def __init__(self, path, window):
        self.data = numpy.memmap(path, dtype=numpy.uint8, mode="r")
        self.window = window

    def __len__(self):
        return len(self.data) // self.window

    def __getitem__(self, i):
        return int(self.data[i * self.window])


def settle(worker_id):
    # A forked worker's first milliseconds are a storm of copy-on-write
    # faults that can fill the tracer's sample buffer before it drains it
    # (a known limit, README "Mapped reads"): let the storm pass before the
    # worker's data faults, which the test counts exactly.
    time.sleep(0.2)


def main(path, window, workers):
    torch.set_num_threads(1)
    loader = DataLoader(Windows(path, window), batch_size=8, num_workers=workers,
                        worker_init_fn=settle if workers else None)
    print(f"sum {sum(int(b.sum()) for b in loader)}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
