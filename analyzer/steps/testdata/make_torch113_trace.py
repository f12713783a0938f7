"""Writes torch113_cpu.pt.trace.json with Debian's python3-torch 1.13.

    /usr/bin/python3 analyzer/steps/testdata/make_torch113_trace.py OUT.json

A linear model trained on 64 random samples in batches of 8 under
torch.profiler with schedule(wait=1, warmup=1, active=3): the trace holds
ProfilerStep#1-#3 with one enumerate(DataLoader)#_SingleProcessDataLoaderIter
.__next__ span each. Debian builds torch without Kineto, so export_chrome_trace
writes the legacy flavour: a bare JSON array, "pid": "CPU functions", small
thread numbers as "tid", and `ts` in microseconds since the profiler began
recording (torch/autograd/profiler.py: start_us() - trace_start_us()); the
wall-clock time of that start is not in the file. Times differ from run to
run; the committed file is one run.
"""

import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main(out):
    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(torch.randn(64, 8), torch.randn(64, 1)), batch_size=8)
    model = torch.nn.Linear(8, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=3, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=schedule) as prof:
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            prof.step()
    prof.export_chrome_trace(out)


if __name__ == "__main__":
    main(sys.argv[1])
