"""Trains with a checkpoint of the model and the optimizer every N steps.

Most long jobs save their state periodically so that a failure costs minutes,
not days. Here the training process itself writes it, between two steps, with
torch.save of {"step", "model": model.state_dict(), "optimizer":
optimizer.state_dict()} to CHECKPOINT_DIR/ckpt-STEP.pt, the way most training
loops do; the next step starts only when the file is written (and, with
--fsync, on the disk). The data path is ../shards/'s: samples packed in a few
shard files, one pread each.

The network is the shared small one; --checkpoint-mb adds frozen weights (a
stand-in for a large pretrained part of the model: saved with it, not trained)
so that a checkpoint is as large as a real model's without a slower step.

  # 1024 samples of 3x32x32 in 4 shards, 2 epochs, a 64 MiB checkpoint every
  # 8 steps
  python3 train.py --data /tmp/ckpt-data --generate-only
  iotap run --torch-steps -o /tmp/trace -- python3 train.py --data /tmp/ckpt-data \\
      --checkpoint-dir /tmp/ckpts --checkpoint-every 8 --epochs 2
  iotap report /tmp/trace

The loop, the network and the summary are examples/common/training.py.
"""

import argparse
import os
import sys
import time

import torch
from torch import nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import training  # noqa: E402  (examples/common/training.py)

shards = training.example_module("shards")  # its file format and dataset


class CheckpointedNet(nn.Module):
    """SmallNet plus `frozen_mb` MiB of frozen float32 weights (a buffer: in
    the state dict, so in every checkpoint, but never trained or used)."""

    def __init__(self, classes, width, frozen_mb):
        super().__init__()
        self.net = training.SmallNet(classes, width=width)
        generator = torch.Generator().manual_seed(0)
        self.register_buffer("frozen", torch.randn(frozen_mb * (1 << 20) // 4,
                                                   generator=generator))

    def forward(self, x):
        return self.net(x)


class Checkpointer:
    """after_step hook: saves the model and the optimizer after every
    `every`-th step to DIR/ckpt-STEP.pt (STEP: steps done), and keeps the time
    it took."""

    def __init__(self, directory, every, fsync):
        self.directory = directory
        self.every = every
        self.fsync = fsync
        self.saved = []  # (path, bytes, seconds)

    def __call__(self, step, model, optimizer):
        done = step + 1
        if self.every <= 0 or done % self.every:
            return
        path = os.path.join(self.directory, f"ckpt-{done:06d}.pt")
        start = time.perf_counter()
        state = {"step": done, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        with open(path, "wb") as f:
            torch.save(state, f)
            if self.fsync:
                f.flush()
                os.fsync(f.fileno())
        self.saved.append((path, os.path.getsize(path), time.perf_counter() - start))

    def summarise(self):
        if not self.saved:
            print("no checkpoints")
            return
        size = sum(s[1] for s in self.saved)
        seconds = sum(s[2] for s in self.saved)
        print(f"{len(self.saved)} checkpoints, {size / (1 << 20):.1f} MiB in {seconds:.2f} s "
              f"({seconds / len(self.saved) * 1000:.1f} ms each)")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="directory of shard-NNNN.bin and index.json")
    p.add_argument("--generate", action="store_true",
                   help="first write the shards into --data (which must be empty)")
    p.add_argument("--generate-only", action="store_true", help="write the shards and stop")
    p.add_argument("--samples", type=int, default=1024, help="samples to generate (default 1024)")
    p.add_argument("--shards", type=int, default=4, help="shards to generate (default 4)")
    p.add_argument("--classes", type=int, default=4, help="classes to generate (default 4)")
    p.add_argument("--image-size", type=int, default=32,
                   help="pixels per side of a generated sample (default 32)")
    p.add_argument("--checkpoint-dir", help="where checkpoints go (required to train)")
    p.add_argument("--checkpoint-every", type=int, default=8,
                   help="save after every N-th step (default 8; 0: never)")
    p.add_argument("--checkpoint-mb", type=int, default=64,
                   help="MiB of frozen weights in the model, so in each checkpoint (default 64)")
    p.add_argument("--fsync", action="store_true",
                   help="fsync each checkpoint before the next step")
    training.add_arguments(p, batch_size=32)
    args = p.parse_args(argv)
    if not args.generate_only and not args.checkpoint_dir:
        p.error("--checkpoint-dir is required to train")
    return args


def main(argv):
    args = parse_args(argv)
    if args.generate or args.generate_only:
        shards.generate(args.data, args.shards, args.samples, args.classes, args.image_size,
                        args.seed)
        if args.generate_only:
            return
    os.makedirs(args.checkpoint_dir, exist_ok=True)
    dataset = shards.ShardDataset(args.data, direct=False)
    torch.manual_seed(args.seed)
    model = CheckpointedNet(dataset.classes, 4 if args.compute_cost == "heavy" else 1,
                            args.checkpoint_mb)
    checkpointer = Checkpointer(args.checkpoint_dir, args.checkpoint_every, args.fsync)
    training.train(dataset, dataset.classes, args, model=model, after_step=checkpointer)
    checkpointer.summarise()


if __name__ == "__main__":
    main(sys.argv[1:])
