"""Random reads of an LMDB database, for mapped_uring_test.cc:

  lmdb_reader.py DIR

Writes 2000 values of 4 KiB under keys 0..1999 into DIR (lmdb, whose reads
go through its memory map), drops data.mdb from the page cache, then reads
400 keys in a fixed random order. Prints the main thread's minor and major
page faults during the reads (/proc/thread-self/stat) and a checksum:
  faults MINOR MAJOR
  sum N
"""

import os
import random
import sys

import lmdb


def faults():
    fields = open("/proc/thread-self/stat").read().rsplit(")", 1)[1].split()
    return int(fields[7]), int(fields[9])


def main(path):
    env = lmdb.open(path, map_size=64 << 20)
    with env.begin(write=True) as txn:
        for k in range(2000):
            txn.put(b"%06d" % k, bytes([k % 251]) * 4096)
    env.close()
    fd = os.open(os.path.join(path, "data.mdb"), os.O_RDONLY)
    os.fdatasync(fd)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
    keys = random.Random(7).sample(range(2000), 400)
    env = lmdb.open(path, readonly=True, lock=False)
    total = 0
    with env.begin() as txn:
        minor0, major0 = faults()
        for k in keys:
            total += txn.get(b"%06d" % k)[100]
        minor1, major1 = faults()
    print(f"faults {minor1 - minor0} {major1 - major0}")
    print(f"sum {total}")


if __name__ == "__main__":
    main(sys.argv[1])
