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
With --step-log FILE it also writes one JSON line per step (see README.md). The
loop, the network and the summary are examples/common/training.py.
"""

import argparse
import json
import multiprocessing.util
import os
import sys
import time
import types

import numpy
from PIL import Image
from torchvision import datasets, transforms

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import training  # noqa: E402  (examples/common/training.py)

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
    p.add_argument("--transform-cost", choices=("light", "heavy", "crop"), default="light",
                   help="light: decode and normalise; heavy: also random crops, flips, "
                        "colour jitter and blur, so preparing a batch costs CPU; crop: decode, "
                        "keep the centre 32x32 and normalise, so with large images decoding "
                        "is most of the cost")
    training.add_arguments(p)
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
    elif cost == "crop":
        steps.append(transforms.CenterCrop(32))
    steps += [transforms.ToTensor(), transforms.Normalize(MEAN, STD)]
    times = os.environ.get("IMAGEFOLDER_TRANSFORM_TIMES")
    if times:
        steps = [TimedTransform.around(t, times) for t in steps]
    return transforms.Compose(steps)


class TimedTransform:
    """Test only (IMAGEFOLDER_TRANSFORM_TIMES=DIR): runs `transform` and
    adds the CPU time of its thread to its class's total; a DataLoader worker
    writes the totals and its own CPU time to DIR/PID.json as it exits (a
    multiprocessing finalizer: workers leave through os._exit, after them).
    The Python profile's share of each transform is checked against these
    (tests/integration/py_profile_test.cc)."""

    totals = {}
    pid = None

    @classmethod
    def around(cls, transform, directory):
        """A timer of `transform` whose __call__ carries the transform's class
        name ("GaussianBlur.__call__"), so that a stack sample taken in the
        timer's frame, right after the transform returned (where C code that
        held the GIL lets the sampler in), counts for that transform and the
        timer is no cost of its own in the report."""
        name = type(transform).__name__
        call = cls.__call__
        code = call.__code__
        if hasattr(code, "co_qualname"):
            code = code.replace(co_qualname=f"{name}.__call__")
        named = types.FunctionType(code, call.__globals__, call.__name__, call.__defaults__,
                                   call.__closure__)
        return type(name, (cls,), {"__call__": named})(transform, directory)

    def __init__(self, transform, directory):
        self.transform = transform
        self.name = type(transform).__name__
        self.directory = directory

    def __call__(self, img):
        start = time.thread_time_ns()
        out = self.transform(img)
        TimedTransform.add(self.name, time.thread_time_ns() - start, self.directory)
        return out

    @classmethod
    def add(cls, name, spent, directory):
        """Adds `spent` ns to `name`'s total in this process; the first
        addition in a process starts its totals and their save at exit."""
        if cls.pid != os.getpid():
            cls.pid = os.getpid()
            cls.totals = {}
            multiprocessing.util.Finalize(None, cls.save, args=(directory,), exitpriority=100)
        cls.totals[name] = cls.totals.get(name, 0) + spent

    @classmethod
    def save(cls, directory):
        record = dict(cls.totals, process_cpu_ns=time.process_time_ns())
        with open(os.path.join(directory, f"{os.getpid()}.json"), "w") as f:
            json.dump(record, f)


def timed_loader(path):
    """Test only (IMAGEFOLDER_TRANSFORM_TIMES): the dataset's image loader
    (open, decode, convert to RGB), its thread's CPU time added to the totals
    as "loader", so that a test knows how far the heaviest transform is
    ahead of decoding."""
    start = time.thread_time_ns()
    img = datasets.folder.default_loader(path)
    TimedTransform.add("loader", time.thread_time_ns() - start,
                       os.environ["IMAGEFOLDER_TRANSFORM_TIMES"])
    return img


def train(args):
    extra = {"loader": timed_loader} if os.environ.get("IMAGEFOLDER_TRANSFORM_TIMES") else {}
    dataset = datasets.ImageFolder(args.data, transform=make_transform(args.transform_cost,
                                                                       args.image_size), **extra)
    training.train(dataset, len(dataset.classes), args, unit="images")


def main(argv):
    args = parse_args(argv)
    if args.generate or args.generate_only:
        generate(args.data, args.images, args.classes, args.image_size, args.format, args.seed)
        if args.generate_only:
            return
    train(args)


if __name__ == "__main__":
    main(sys.argv[1:])
