"""Trains a small CNN on a directory of images read with torchvision's ImageFolder.

The data path is the one most image-classification jobs use: one small file per
sample, opened, read and decoded by PIL in DataLoader workers, then batched and
handed to the training loop. Tracing it with iotap shows every image read once
per epoch, by which process, and how long the loop waited for each batch.

  # make 1000 PNG images of 32x32 pixels in 4 classes, then train one epoch
  python3 train.py --data /tmp/images --generate --images 1000 --epochs 1
  # trace the same run with 4 workers started by "spawn"
  iotap run -o /tmp/trace -- python3 train.py --data /tmp/images \\
      --num-workers 4 --start-method spawn

At the end it prints a summary of the steps: how long each waited for its batch
(data) and how long the forward, backward and optimizer step took (compute).
With --step-log FILE it also writes one JSON line per step (see README.md).
"""

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import time

import numpy
import torch
import torch.nn.functional as F
from PIL import Image
from torch import nn
from torch.utils.data import DataLoader
from torchvision import datasets, transforms

MEAN = (0.5, 0.5, 0.5)
STD = (0.25, 0.25, 0.25)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="ImageFolder root: DIR/CLASS/IMAGE")
    p.add_argument("--generate", action="store_true",
                   help="first write --images images into --data (which must be empty)")
    p.add_argument("--generate-only", action="store_true", help="write the images and stop")
    p.add_argument("--images", type=int, default=1000, help="images to generate (default 1000)")
    p.add_argument("--classes", type=int, default=4, help="classes to generate (default 4)")
    p.add_argument("--image-size", type=int, default=32, help="pixels per side (default 32)")
    p.add_argument("--format", choices=("png", "jpeg"), default="png",
                   help="file format of generated images (default png)")
    p.add_argument("--num-workers", type=int, default=2, help="DataLoader workers (default 2)")
    p.add_argument("--start-method", choices=("fork", "spawn", "forkserver"), default="fork",
                   help="how workers are started (default fork; ignored with 0 workers)")
    p.add_argument("--persistent-workers", action="store_true",
                   help="keep the workers from one epoch to the next")
    p.add_argument("--transform-cost", choices=("light", "heavy"), default="light",
                   help="light: decode and normalise; heavy: also random crops, flips, "
                        "colour jitter and blur, so preparing a batch costs CPU")
    p.add_argument("--compute-cost", choices=("light", "heavy"), default="light",
                   help="light: a few thousand weights; heavy: a wider network that takes "
                        "longer per step than the workers take to prepare a batch")
    p.add_argument("--epochs", type=int, default=1, help="passes over the data (default 1)")
    p.add_argument("--batch-size", type=int, default=50, help="images per step (default 50)")
    p.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="seed for data, weights and shuffling")
    p.add_argument("--step-log", help="write one JSON line per step to this file")
    return p.parse_args(argv)


def generate(root, images, classes, size, fmt, seed):
    """Writes `images` images spread over `classes` class directories.

    Each class has its own mean colour with per-pixel noise on top, so the
    task is learnable and the files do not compress to nothing.
    """
    if os.path.isdir(root) and os.listdir(root):
        sys.exit(f"train.py: --generate needs an empty directory, and {root} is not")
    rng = numpy.random.default_rng(seed)
    centres = rng.integers(40, 216, size=(classes, 3))
    suffix = "png" if fmt == "png" else "jpg"
    for c in range(classes):
        os.makedirs(os.path.join(root, f"class_{c}"), exist_ok=True)
    for i in range(images):
        c = i % classes
        noise = rng.normal(0, 40, size=(size, size, 3))
        pixels = numpy.clip(centres[c] + noise, 0, 255).astype(numpy.uint8)
        path = os.path.join(root, f"class_{c}", f"img_{i:06d}.{suffix}")
        Image.fromarray(pixels, "RGB").save(path)


def make_transform(cost, size):
    steps = []
    if cost == "heavy":
        steps += [
            transforms.RandomResizedCrop(size, scale=(0.6, 1.0), antialias=True),
            transforms.RandomHorizontalFlip(),
            transforms.ColorJitter(brightness=0.3, contrast=0.3, saturation=0.3),
            transforms.GaussianBlur(3),
        ]
    steps += [transforms.ToTensor(), transforms.Normalize(MEAN, STD)]
    return transforms.Compose(steps)


class SmallNet(nn.Module):
    """Two convolutions and a linear classifier: a few thousand weights, or
    (width=4) a few hundred thousand."""

    def __init__(self, classes, width=1):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16 * width, 3, padding=1)
        self.conv2 = nn.Conv2d(16 * width, 32 * width, 3, padding=1)
        self.fc = nn.Linear(32 * width, classes)

    def forward(self, x):
        # Pooled to 32x32 first: the cost of a step does not grow with the
        # image size, which only the data preparation pays for.
        x = F.adaptive_avg_pool2d(x, 32)
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def make_loader(dataset, args):
    generator = torch.Generator()
    generator.manual_seed(args.seed)
    kwargs = {}
    if args.num_workers > 0:
        kwargs["multiprocessing_context"] = args.start_method
        kwargs["persistent_workers"] = args.persistent_workers
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                      num_workers=args.num_workers, generator=generator, **kwargs)


@dataclasses.dataclass
class Step:
    epoch: int
    images: int
    start_unix_s: float  # when the loop began waiting for this step's batch
    data_s: float        # waiting for the batch
    compute_s: float     # forward, loss, backward, optimizer step
    loss: float


def run_epoch(epoch, loader, model, optimizer, loss_fn, steps, log):
    """One pass over `loader`; appends a Step per batch. Returns (correct, seen)."""
    correct = seen = 0
    waited_from = time.perf_counter()
    waited_from_unix = time.time()
    for images, labels in loader:
        got_batch = time.perf_counter()
        optimizer.zero_grad()
        logits = model(images)
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
        waited_from = time.perf_counter()
        waited_from_unix = time.time()
    return correct, seen


def train(args):
    torch.manual_seed(args.seed)
    dataset = datasets.ImageFolder(args.data, transform=make_transform(args.transform_cost,
                                                                       args.image_size))
    loader = make_loader(dataset, args)
    model = SmallNet(len(dataset.classes), width=4 if args.compute_cost == "heavy" else 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    steps = []
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        log = stack.enter_context(open(args.step_log, "w")) if args.step_log else None
        for epoch in range(args.epochs):
            correct, seen = run_epoch(epoch, loader, model, optimizer, loss_fn, steps, log)
            last_loss = steps[-1].loss if steps else float("nan")
            print(f"epoch {epoch}: {seen} images, last loss {last_loss:.3f}, "
                  f"accuracy {correct / max(seen, 1):.3f}")
    summarise(steps, time.perf_counter() - start)


def summarise(steps, elapsed):
    if not steps:
        print("no steps")
        return
    images = sum(s.images for s in steps)
    data = sorted(s.data_s for s in steps)
    compute = sorted(s.compute_s for s in steps)

    def row(name, values):
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        return (f"  {name:8s} mean {1000 * statistics.mean(values):8.2f} ms   "
                f"median {1000 * statistics.median(values):8.2f} ms   "
                f"p90 {1000 * p90:8.2f} ms   total {sum(values):7.2f} s")

    print(f"{len(steps)} steps, {images} images in {elapsed:.2f} s "
          f"({images / elapsed:.0f} images/s)")
    print(row("data", data))
    print(row("compute", compute))
    print(f"  waiting for data: {100 * sum(data) / elapsed:.1f} % of the run's wall time")


def main(argv):
    args = parse_args(argv)
    if args.generate or args.generate_only:
        generate(args.data, args.images, args.classes, args.image_size, args.format, args.seed)
        if args.generate_only:
            return
    train(args)


if __name__ == "__main__":
    main(sys.argv[1:])
