"""Moves DataLoader batches to the GPU, the way training loops do, and writes
down what it moved, for check-gpu.sh to compare with what iotap recorded.

    python3 dataloader_to_gpu.py --pin-memory 1 --method to --manifest out.json

--pin-memory 0|1   DataLoader(pin_memory=...): batches in pageable or pinned memory
--method cuda|to   batch.cuda(), or batch.to(device, non_blocking=True)

Each batch is a pair of tensors whose sizes no other copy in the run has
(images 24 x 3 x 40 x 56 float32 = 645,120 bytes; labels 24 x 7 int64 =
1,344 bytes). The manifest lists every tensor moved, with its size in bytes
and whether PyTorch says it was pinned:

    {"method": "to", "pin_memory": true,
     "moved": [{"bytes": 645120, "pinned": true, "count": 40}, ...]}
"""

import argparse
import collections
import json
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Synthetic(Dataset):
    """Samples made on the fly in the DataLoader workers."""

    def __init__(self, samples):
        self.samples = samples

    def __len__(self):
        return self.samples

    def __getitem__(self, i):
        image = torch.full((3, 40, 56), float(i), dtype=torch.float32)
        label = torch.full((7,), i, dtype=torch.int64)
        return image, label


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pin-memory", type=int, choices=(0, 1), required=True)
    parser.add_argument("--method", choices=("cuda", "to"), required=True)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument("--manifest", required=True)
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("dataloader_to_gpu: PyTorch sees no CUDA device", file=sys.stderr)
        return 3

    device = torch.device("cuda")
    loader = DataLoader(Synthetic(24 * args.batches), batch_size=24, num_workers=2,
                        pin_memory=bool(args.pin_memory), drop_last=True)
    moved = collections.Counter()
    checksum = 0.0
    for images, labels in loader:
        for t in (images, labels):
            moved[(t.nelement() * t.element_size(), t.is_pinned())] += 1
        if args.method == "cuda":
            images, labels = images.cuda(), labels.cuda()
        else:
            images = images.to(device, non_blocking=True)
            labels = labels.to(device, non_blocking=True)
        checksum += float(images.sum()) + float(labels.sum())
    torch.cuda.synchronize()

    with open(args.manifest, "w") as f:
        json.dump({"method": args.method, "pin_memory": bool(args.pin_memory),
                   "moved": [{"bytes": b, "pinned": p, "count": n}
                             for (b, p), n in sorted(moved.items())]}, f)
    print(f"moved {sum(moved.values())} tensors in {args.batches} batches "
          f"(pin_memory={bool(args.pin_memory)}, method={args.method}), checksum {checksum:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
