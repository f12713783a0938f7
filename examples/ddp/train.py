"""Trains one model on several processes with DistributedDataParallel.

The shape of a multi-GPU or multi-node job, on the CPU: a launcher (torchrun,
srun, mpirun) starts one training process per rank; each rank reads its own
part of every epoch (a DistributedSampler) through its own DataLoader workers,
and the ranks average their gradients after each backward pass (gloo
all-reduce over TCP). The data path is ../shards/'s: samples packed in a few
shard files, one pread each.

  # 2048 samples of 3x32x32 in 4 shards; then 2 ranks of 2 workers each
  # (--redirects 1 --tee 1: PyTorch 1.13's torchrun fails on its own default
  # under Python 3.11; README.md)
  python3 train.py --data /tmp/ddp-data --generate-only
  iotap run --torch-steps -o /tmp/trace -- python3 -m torch.distributed.run \\
      --nproc_per_node 2 --redirects 1 --tee 1 train.py --data /tmp/ddp-data
  iotap report /tmp/trace

The rank, the world size and the rendezvous come from torchrun's environment
(RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT); under srun or
mpirun, which set their own variables (SLURM_PROCID, OMPI_COMM_WORLD_RANK,
PMI_RANK, ...), they are taken from those, with the rendezvous on
MASTER_ADDR:MASTER_PORT (default 127.0.0.1:29500, one host).

The loop, the network and the summary are examples/common/training.py.
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import training  # noqa: E402  (examples/common/training.py)

shards = training.example_module("shards")  # its file format and dataset

# Where launchers put a process's rank, size and rank on its host: torchrun,
# Open MPI's mpirun, MPICH/Hydra's mpiexec (PMI), Slurm's srun.
LAUNCHER_ENV = (
    ("RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
    ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"),
    ("SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
)


def distributed_env():
    """Sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT from the
    first launcher's variables found, for torch.distributed's env:// start.
    Returns False when no launcher started this process."""
    for rank, size, local in LAUNCHER_ENV:
        if rank in os.environ and size in os.environ:
            os.environ["RANK"] = os.environ[rank]
            os.environ["WORLD_SIZE"] = os.environ[size]
            os.environ["LOCAL_RANK"] = os.environ.get(local, os.environ[rank])
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29500")
            return True
    return False


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="directory of shard-NNNN.bin and index.json")
    p.add_argument("--generate", action="store_true",
                   help="first write the shards into --data (which must be empty); "
                        "under a launcher, rank 0 writes them while the others wait")
    p.add_argument("--generate-only", action="store_true",
                   help="write the shards and stop (no launcher needed)")
    p.add_argument("--samples", type=int, default=2048, help="samples to generate (default 2048)")
    p.add_argument("--shards", type=int, default=4, help="shards to generate (default 4)")
    p.add_argument("--classes", type=int, default=4, help="classes to generate (default 4)")
    p.add_argument("--image-size", type=int, default=32,
                   help="pixels per side of a generated sample (default 32)")
    training.add_arguments(p, batch_size=32)
    return p.parse_args(argv)


def generate(args):
    shards.generate(args.data, args.shards, args.samples, args.classes, args.image_size,
                    args.seed)


def main(argv):
    args = parse_args(argv)
    if args.generate_only:
        generate(args)
        return
    if not distributed_env():
        sys.exit("train.py: start it with a launcher, e.g. "
                 "python3 -m torch.distributed.run --nproc_per_node 2 train.py ...")
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.generate:
        if rank == 0:
            generate(args)
        dist.barrier()
    dataset = shards.ShardDataset(args.data, direct=False)
    # Each rank gets every world-th sample of the epoch's shuffle.
    sampler = DistributedSampler(dataset, num_replicas=world, rank=rank, shuffle=True,
                                 seed=args.seed)
    torch.manual_seed(args.seed)
    model = DistributedDataParallel(
        training.SmallNet(dataset.classes, width=4 if args.compute_cost == "heavy" else 1))
    print(f"rank {rank} of {world}: {len(sampler)} samples per epoch", flush=True)
    training.train(dataset, dataset.classes, args, model=model, sampler=sampler,
                   before_epoch=sampler.set_epoch)
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1:])
