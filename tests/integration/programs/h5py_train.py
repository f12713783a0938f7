"""Training-style HDF5 reads with h5py, for the HDF5 layer's ground-truth test.

    h5py_train.py create FILE LAYOUT SAMPLES
    h5py_train.py read FILE SEED COUNT MARKER_DIR
    h5py_train.py forked FILE

create writes SAMPLES samples of 160 x 256 uint8 (40 KiB each) as /images,
with LAYOUT "chunk2k" (chunks of 1 x 8 x 256: 2 KiB, 20 per sample),
"chunk64k" (8 x 32 x 256: 64 KiB, 5 per sample, each shared by 8
samples) or "contiguous".

read opens the file once and reads COUNT samples in an order shuffled by
SEED, one dataset[i] (one H5Dread) each, as a DataLoader's __getitem__
does. Before sample k it stats MARKER_DIR/sample-k (which does not exist),
and after the last one MARKER_DIR/end, so that a strace log can be cut
into the system calls of each H5Dread. Prints the sum of the bytes read.

forked opens the file and reads sample 0, then forks a worker that reads
samples 1-3 and leaves with os._exit, as a DataLoader worker does; the
parent then reads sample 4.
"""
import os
import sys

import h5py
import numpy as np

SHAPE = (160, 256)
CHUNKS = {"chunk2k": (1, 8, 256), "chunk64k": (8, 32, 256), "contiguous": None}


def create(path, layout, samples):
    with h5py.File(path, "w") as f:
        images = f.create_dataset("images", (samples,) + SHAPE, dtype=np.uint8,
                                  chunks=CHUNKS[layout])
        block = 500
        for start in range(0, samples, block):
            n = min(block, samples - start)
            values = (np.arange(start, start + n, dtype=np.uint64) % 251).astype(np.uint8)
            images[start:start + n] = np.broadcast_to(values[:, None, None], (n,) + SHAPE)


def marker(directory, name):
    try:
        os.stat(os.path.join(directory, name))
    except FileNotFoundError:
        pass


def read(path, seed, count, marker_dir):
    order = np.random.RandomState(seed).permutation
    total = 0
    with h5py.File(path, "r") as f:
        images = f["images"]
        for k, i in enumerate(order(images.shape[0])[:count]):
            marker(marker_dir, "sample-%d" % k)
            sample = images[i]
            total += int(sample[0, 0]) == int(i) % 251 and sample.nbytes
    marker(marker_dir, "end")
    print(total)


def forked(path):
    with h5py.File(path, "r") as f:
        images = f["images"]
        images[0]
        pid = os.fork()
        if pid == 0:
            for i in (1, 2, 3):
                images[i]
            os._exit(0)
        os.waitpid(pid, 0)
        images[4]


if __name__ == "__main__":
    if sys.argv[1] == "create":
        create(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif sys.argv[1] == "forked":
        forked(sys.argv[2])
    else:
        read(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
