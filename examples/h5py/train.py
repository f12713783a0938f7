"""Trains on images stored in one HDF5 dataset, read sample by sample with h5py.

The layout of many scientific and medical datasets: /images of shape
(N, 3, S, S) uint8 and /labels of shape (N,), in one HDF5 file. Each DataLoader
worker opens the file itself (h5py handles must not cross a fork) and reads a
sample with images[i], one H5Dread. How the dataset is chunked decides how
many reads of the file that H5Dread becomes:

  --chunks sample      one chunk per sample (S x S x 3 bytes): one read each
  --chunks tiny        chunks of 1 x 1 x 8 x 8 (64 bytes): 3 S^2 / 64 reads per
                       sample, the layout h5py's automatic chunking or a
                       careless converter can produce for small images
  --chunks contiguous  no chunking: one read per sample

  # 2048 samples of 3x32x32 with tiny chunks, then train one epoch
  python3 train.py --data /tmp/images.h5 --generate --chunks tiny
  iotap run --torch-steps -o /tmp/trace -- python3 train.py --data /tmp/images.h5
  iotap report /tmp/trace

The loop, the network and the summary are examples/common/training.py.
"""

import argparse
import os
import sys

import h5py
import numpy
import torch
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import training  # noqa: E402  (examples/common/training.py)

CHUNKS = ("sample", "tiny", "contiguous")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="the HDF5 file")
    p.add_argument("--generate", action="store_true",
                   help="first write the file (which must not exist)")
    p.add_argument("--generate-only", action="store_true", help="write the file and stop")
    p.add_argument("--samples", type=int, default=2048, help="samples to generate (default 2048)")
    p.add_argument("--classes", type=int, default=4, help="classes to generate (default 4)")
    p.add_argument("--image-size", type=int, default=32,
                   help="pixels per side of a generated sample (default 32)")
    p.add_argument("--chunks", choices=CHUNKS, default="tiny",
                   help="chunk layout of the generated /images (default tiny)")
    training.add_arguments(p, batch_size=64)
    return p.parse_args(argv)


def generate(path, samples, classes, size, chunks, seed):
    if os.path.exists(path):
        sys.exit(f"train.py: --generate would overwrite {path}")
    rng = numpy.random.default_rng(seed)
    centres = rng.integers(40, 216, size=(classes, 3)).astype(numpy.float32)
    shape = (samples, 3, size, size)
    layout = {"sample": (1, 3, size, size), "tiny": (1, 1, 8, 8), "contiguous": None}[chunks]
    with h5py.File(path, "w") as f:
        images = f.create_dataset("images", shape, dtype=numpy.uint8, chunks=layout)
        labels = numpy.arange(samples, dtype=numpy.int64) % classes
        f.create_dataset("labels", data=labels)
        block = 256
        for start in range(0, samples, block):
            n = min(block, samples - start)
            noise = rng.normal(0, 40, size=(n, 3, size, size)).astype(numpy.float32)
            mean = centres[labels[start:start + n]][:, :, None, None]
            images[start:start + n] = numpy.clip(mean + noise, 0, 255).astype(numpy.uint8)


class H5Images(Dataset):
    """Sample i is images[i] (one H5Dread) and its label, from a file each
    worker opens on first use."""

    def __init__(self, path):
        self.path = path
        with h5py.File(path, "r") as f:
            self.length = f["images"].shape[0]
            self.labels = f["labels"][:]
        self.classes = int(self.labels.max()) + 1
        self.file = None

    def __len__(self):
        return self.length

    def __getitem__(self, i):
        if self.file is None:
            self.file = h5py.File(self.path, "r")
            self.images = self.file["images"]
        image = torch.from_numpy(self.images[i].astype(numpy.float32))
        return (image - 128.0) / 64.0, int(self.labels[i])


def main(argv):
    args = parse_args(argv)
    if args.generate or args.generate_only:
        generate(args.data, args.samples, args.classes, args.image_size, args.chunks, args.seed)
        if args.generate_only:
            return
    dataset = H5Images(args.data)
    training.train(dataset, dataset.classes, args)


if __name__ == "__main__":
    main(sys.argv[1:])
