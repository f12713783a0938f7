"""The training loop the iotap examples share.

Each example (imagefolder/, shards/, h5py/, tfrecord/, checkpoint/, ddp/)
defines how samples are stored and read; this module gives them the same
DataLoader settings, the same small network, the same loop and the same
summary, so that their traces differ only in the data path:

  p = argparse.ArgumentParser()
  training.add_arguments(p)            # --num-workers, --epochs, --step-log ...
  args = p.parse_args()
  training.train(dataset, classes=4, args=args)

The loop times each step in two parts: data (from the end of one step until the
next batch arrived: the time the loop waited for the loader) and compute
(forward, loss, backward and optimizer step). With --step-log FILE it writes one
JSON line per step: {"step", "epoch", "images", "start_unix_s", "data_s",
"compute_s", "loss"}, a step log `iotap report --steps` reads.

Examples that change more than the data path pass it in: a model of their own
(`model=`, e.g. one wrapped in DistributedDataParallel), a sampler (`sampler=`,
e.g. a DistributedSampler) and a hook that runs after each step
(`after_step=`, e.g. to save a checkpoint).
"""

import contextlib
import dataclasses
import importlib.util
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, IterableDataset


def example_module(name):
    """examples/NAME/train.py, imported as the module `NAME_example`, for an
    example that trains on another example's data format. Call it at the top
    level of the script, so that a worker started by spawn, which runs that
    level again, can unpickle the dataset."""
    module_name = f"{name}_example"
    if module_name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", name, "train.py")
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    return sys.modules[module_name]


def add_arguments(p, workers=2, batch_size=50):
    """The switches every example shares, with their defaults."""
    p.add_argument("--num-workers", type=int, default=workers,
                   help=f"DataLoader workers (default {workers})")
    p.add_argument("--start-method", choices=("fork", "spawn", "forkserver"), default="fork",
                   help="how workers are started (default fork; ignored with 0 workers)")
    p.add_argument("--persistent-workers", action="store_true",
                   help="keep the workers from one epoch to the next")
    p.add_argument("--compute-cost", choices=("light", "heavy"), default="light",
                   help="light: a few thousand weights; heavy: a wider network that takes "
                        "longer per step than the workers take to prepare a batch")
    p.add_argument("--epochs", type=int, default=1, help="passes over the data (default 1)")
    p.add_argument("--batch-size", type=int, default=batch_size,
                   help=f"samples per step (default {batch_size})")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="seed for data, weights and shuffling")
    p.add_argument("--step-log", help="write one JSON line per step to this file")


class SmallNet(nn.Module):
    """Two convolutions and a linear classifier: a few thousand weights, or
    (width=4) a few hundred thousand."""

    def __init__(self, classes, channels=3, width=1):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 16 * width, 3, padding=1)
        self.conv2 = nn.Conv2d(16 * width, 32 * width, 3, padding=1)
        self.fc = nn.Linear(32 * width, classes)

    def forward(self, x):
        # Pooled to 32x32 first: the cost of a step does not grow with the
        # sample size, which only the data path pays for.
        x = F.adaptive_avg_pool2d(x, 32)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def make_loader(dataset, args, worker_init_fn=None, sampler=None):
    """A DataLoader over `dataset` in shuffled order: the sampler's if one is
    given, a seeded shuffle otherwise. An IterableDataset yields samples in
    its own order (it shuffles, if at all, itself)."""
    generator = torch.Generator()
    generator.manual_seed(args.seed)
    kwargs = {}
    if args.num_workers > 0:
        kwargs["multiprocessing_context"] = args.start_method
        kwargs["persistent_workers"] = args.persistent_workers
        kwargs["worker_init_fn"] = worker_init_fn
    shuffle = sampler is None and not isinstance(dataset, IterableDataset)
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=shuffle, sampler=sampler,
                      num_workers=args.num_workers, generator=generator, **kwargs)


@dataclasses.dataclass
class Step:
    epoch: int
    images: int
    start_unix_s: float  # when the loop began waiting for this step's batch
    data_s: float        # waiting for the batch
    compute_s: float     # forward, loss, backward, optimizer step
    loss: float


def run_epoch(epoch, loader, model, optimizer, loss_fn, steps, log, after_step=None):
    """One pass over `loader`; appends a Step per batch and calls
    after_step(step, model, optimizer), if given, after each (outside the
    step's data and compute times). Returns (correct, seen)."""
    correct = seen = 0
    waited_from = time.perf_counter()
    waited_from_unix = time.time()
    for samples, labels in loader:
        got_batch = time.perf_counter()
        optimizer.zero_grad()
        logits = model(samples)
        loss = loss_fn(logits, labels)
        loss.backward()
        optimizer.step()
        done = time.perf_counter()
        correct += (logits.argmax(1) == labels).sum().item()
        seen += labels.numel()
        step = Step(epoch, labels.numel(), waited_from_unix, got_batch - waited_from,
                    done - got_batch, loss.item())
        if log is not None:
            log.write(json.dumps({"step": len(steps), **dataclasses.asdict(step)}) + "\n")
        steps.append(step)
        if after_step is not None:
            after_step(len(steps) - 1, model, optimizer)
        waited_from = time.perf_counter()
        waited_from_unix = time.time()
    return correct, seen


def train(dataset, classes, args, channels=3, before_epoch=None, worker_init_fn=None,
          unit="samples", model=None, sampler=None, after_step=None):
    """Trains SmallNet (or `model`) on `dataset` for args.epochs epochs and
    prints a summary that counts `unit` ("samples", "images").

    `before_epoch(epoch)`, if given, runs in the training process before each
    epoch's workers start (the shards example drops its data from the page
    cache there; a DistributedSampler is told the epoch there).
    `after_step(step, model, optimizer)`, if given, runs after each step's
    optimizer step, with the step's number counted from 0 over the run."""
    torch.manual_seed(args.seed)
    loader = make_loader(dataset, args, worker_init_fn, sampler)
    if model is None:
        model = SmallNet(classes, channels, width=4 if args.compute_cost == "heavy" else 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    steps = []
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(args.step_log, "w")) if args.step_log else None
        for epoch in range(args.epochs):
            if before_epoch is not None:
                before_epoch(epoch)
            correct, seen = run_epoch(epoch, loader, model, optimizer, loss_fn, steps, log,
                                      after_step)
            last_loss = steps[-1].loss if steps else float("nan")
            print(f"epoch {epoch}: {seen} {unit}, last loss {last_loss:.3f}, "
                  f"accuracy {correct / max(seen, 1):.3f}")
    summarise(steps, time.perf_counter() - start, unit)


def summarise(steps, elapsed, unit="samples"):
    if not steps:
        print("no steps")
        return
    samples = sum(s.images for s in steps)
    data = sorted(s.data_s for s in steps)
    compute = sorted(s.compute_s for s in steps)

    def row(name, values):
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        return (f"  {name:8s} mean {1000 * statistics.mean(values):8.2f} ms   "
                f"median {1000 * statistics.median(values):8.2f} ms   "
                f"p90 {1000 * p90:8.2f} ms   total {sum(values):7.2f} s")

    print(f"{len(steps)} steps, {samples} {unit} in {elapsed:.3f} s "
          f"({samples / elapsed:.0f} {unit}/s)")
    print(row("data", data))
    print(row("compute", compute))
    print(f"  waiting for data: {100 * sum(data) / elapsed:.1f} % of the run's wall time")
