"""A PyTorch job whose bottleneck changes half-way, for top_test.cc.

    python3 top_switch_train.py SWITCH STOP

Trains a linear model on endless synthetic samples with one DataLoader
worker; a step's compute is 60 ms (a sleep, as a GPU step leaves the CPU
free). Until the file SWITCH exists, a sample costs nothing to prepare and the
worker keeps 8 batches ahead: the loop hardly waits for data, even on a busy
machine. Once it exists, every
sample takes 40 ms of the worker's CPU (an expensive transform), a batch of 4
takes 160 ms, and the loop waits for the worker most of each step. Stops at
the first step after the file STOP exists. It knows nothing of iotap.
"""

import os
import sys
import time

import torch
from torch.utils.data import DataLoader, Dataset


class Samples(Dataset):
    def __init__(self, switch):
        self.switch = switch

    def __len__(self):
        return 1_000_000

    def __getitem__(self, i):
        x = torch.full((64,), float(i % 7))
        if os.path.exists(self.switch):
            end = time.process_time() + 0.04
            while time.process_time() < end:
                x = x * 1.0001
        return x


def main(switch, stop):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    loader = DataLoader(Samples(switch), batch_size=4, num_workers=1, prefetch_factor=8)
    model = torch.nn.Linear(64, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    steps = 0
    for x in loader:
        time.sleep(0.06)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        steps += 1
        if os.path.exists(stop):
            break
    print("steps", steps)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
