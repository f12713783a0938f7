"""Trains on samples stored back to back in a few large shard files.

The layout of packed datasets (WebDataset tars, TFRecord shards, NumPy memmaps
without the header): each sample is SAMPLE_BYTES raw uint8 pixels (3 x S x S)
at a fixed offset in one of the shards, so a DataLoader worker reads a sample
with one pread of exactly its size. Samples are visited in a shuffled order, so
each epoch reads every shard at random offsets.

Two switches make every read come from the storage device instead of the page
cache, which is how a dataset larger than the machine's memory, or one on
network storage, behaves:

  --evict    before each epoch, drop the shards' pages from the page cache with
             posix_fadvise(POSIX_FADV_DONTNEED) (anyone may; no root needed)
  --direct   open the shards with O_DIRECT, bypassing the page cache entirely

--mmap reads each sample through a numpy.memmap of its shard instead of
pread: the page faults of the copy out of the mapping are the reads (with
--evict, reads from the storage device that no system call shows).

  # 1024 samples of 3x256x256 (192 KiB) in 4 shards, then 2 epochs from disk
  python3 train.py --data /tmp/shards --generate --evict --epochs 2
  iotap run --torch-steps -o /tmp/trace -- python3 train.py --data /tmp/shards --evict
  iotap report /tmp/trace

The loop, the network and the summary are examples/common/training.py.
"""

import argparse
import json
import mmap
import os
import sys

import numpy
import torch
from torch.utils.data import Dataset

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import training  # noqa: E402  (examples/common/training.py)

ALIGN = 4096  # O_DIRECT wants offsets, sizes and buffers aligned to the block size


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="directory of shard-NNNN.bin and index.json")
    p.add_argument("--generate", action="store_true",
                   help="first write the shards into --data (which must be empty)")
    p.add_argument("--generate-only", action="store_true", help="write the shards and stop")
    p.add_argument("--shards", type=int, default=4, help="shards to generate (default 4)")
    p.add_argument("--samples", type=int, default=1024, help="samples to generate (default 1024)")
    p.add_argument("--classes", type=int, default=4, help="classes to generate (default 4)")
    p.add_argument("--image-size", type=int, default=256,
                   help="pixels per side of a generated sample (default 256: 192 KiB)")
    p.add_argument("--evict", action="store_true",
                   help="drop the shards from the page cache before each epoch")
    p.add_argument("--direct", action="store_true", help="read the shards with O_DIRECT")
    p.add_argument("--mmap", action="store_true",
                   help="read samples through a numpy.memmap of each shard")
    training.add_arguments(p, batch_size=32)
    return p.parse_args(argv)


def generate(root, shards, samples, classes, size, seed):
    """Writes `samples` samples round-robin into `shards` files, plus index.json
    (sample size, classes, and each sample's shard, offset and label).

    Each class has its own mean colour with noise on top, so the task is
    learnable. Samples are padded to a multiple of 4 KiB so that O_DIRECT can
    read them in place."""
    if os.path.isdir(root) and os.listdir(root):
        sys.exit(f"train.py: --generate needs an empty directory, and {root} is not")
    os.makedirs(root, exist_ok=True)
    rng = numpy.random.default_rng(seed)
    centres = rng.integers(40, 216, size=(classes, 3)).astype(numpy.float32)
    sample_bytes = 3 * size * size
    stride = -(-sample_bytes // ALIGN) * ALIGN
    pad = bytes(stride - sample_bytes)
    files = [open(os.path.join(root, f"shard-{s:04d}.bin"), "wb") for s in range(shards)]
    index = []
    for i in range(samples):
        label = i % classes
        shard = i % shards
        noise = rng.normal(0, 40, size=(3, size, size)).astype(numpy.float32)
        pixels = numpy.clip(centres[label][:, None, None] + noise, 0, 255).astype(numpy.uint8)
        index.append([shard, files[shard].tell(), label])
        files[shard].write(pixels.tobytes())
        files[shard].write(pad)
    for f in files:
        f.close()
    with open(os.path.join(root, "index.json"), "w") as f:
        json.dump({"shards": shards, "classes": classes, "size": size,
                   "sample_bytes": sample_bytes, "samples": index}, f)


class ShardDataset(Dataset):
    """Sample i is one pread of `sample_bytes` at its offset in its shard.

    Shards are opened lazily in each worker (descriptors opened before the
    fork would be shared by all workers)."""

    def __init__(self, root, direct, mapped=False):
        self.root = root
        self.direct = direct
        self.mapped = mapped
        self.maps = None
        with open(os.path.join(root, "index.json")) as f:
            meta = json.load(f)
        self.shards = meta["shards"]
        self.classes = meta["classes"]
        self.size = meta["size"]
        self.sample_bytes = meta["sample_bytes"]
        self.index = meta["samples"]
        self.fds = None
        self.buffer = None

    def __len__(self):
        return len(self.index)

    def _open(self):
        flags = os.O_RDONLY | (os.O_DIRECT if self.direct else 0)
        self.fds = [os.open(shard_path(self.root, s), flags) for s in range(self.shards)]
        if self.direct:
            # An anonymous mapping is page-aligned, as O_DIRECT requires.
            self.buffer = mmap.mmap(-1, -(-self.sample_bytes // ALIGN) * ALIGN)

    def _read(self, shard, offset):
        if self.mapped:
            if self.maps is None:
                self.maps = [numpy.memmap(shard_path(self.root, s), dtype=numpy.uint8, mode="r")
                             for s in range(self.shards)]
            # The copy touches every page of the sample: the faults read it.
            return self.maps[shard][offset:offset + self.sample_bytes].tobytes()
        fd = self.fds[shard]
        if not self.direct:
            data = os.pread(fd, self.sample_bytes, offset)
        else:
            n = os.preadv(fd, [self.buffer], offset)
            data = self.buffer[:self.sample_bytes] if n >= self.sample_bytes else b""
        if len(data) != self.sample_bytes:
            raise IOError(f"short read of sample at {offset} in shard {shard}")
        return data

    def __getitem__(self, i):
        if self.fds is None and not self.mapped:
            self._open()
        shard, offset, label = self.index[i]
        pixels = numpy.frombuffer(self._read(shard, offset), dtype=numpy.uint8)
        image = torch.from_numpy(pixels.reshape(3, self.size, self.size).astype(numpy.float32))
        # Down to 32x32 here, so the batch sent to the training process is small.
        image = torch.nn.functional.adaptive_avg_pool2d(image, 32)
        return (image - 128.0) / 64.0, label


def shard_path(root, shard):
    return os.path.join(root, f"shard-{shard:04d}.bin")


def evict(root, shards):
    """Drops the shards' pages from the page cache (clean pages only: the
    files were written and closed long before)."""
    for s in range(shards):
        fd = os.open(shard_path(root, s), os.O_RDONLY)
        try:
            os.fdatasync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def main(argv):
    args = parse_args(argv)
    if args.generate or args.generate_only:
        generate(args.data, args.shards, args.samples, args.classes, args.image_size, args.seed)
        if args.generate_only:
            return
    dataset = ShardDataset(args.data, args.direct, args.mmap)
    before_epoch = (lambda epoch: evict(args.data, dataset.shards)) if args.evict else None
    training.train(dataset, dataset.classes, args, before_epoch=before_epoch)


if __name__ == "__main__":
    main(sys.argv[1:])
