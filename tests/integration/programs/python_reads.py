"""Reads data files the ways Python programs do, for python_test.cc.

usage: python_reads.py DIR

Expects DIR/{whole,into,pread,numpy}.bin (python_test.cc writes them) and
reads each one way:

  whole.bin  open(path, "rb").read()            BufferedReader -> FileIO.readall
  into.bin   f.readinto(buf) on an unbuffered file, in 64 KiB pieces
  pread.bin  os.pread at explicit offsets, 10000 bytes at a time
  numpy.bin  numpy.fromfile: Python open, then dup + fdopen + fread

Prints one line per file, "NAME BYTES", so the test can check that the
program saw every byte.
"""

import os
import sys

import numpy


def read_whole(path):
    with open(path, "rb") as f:
        return len(f.read())


def read_into(path):
    total = 0
    buf = bytearray(64 * 1024)
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                return total
            total += n


def read_pread(path):
    total = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            chunk = os.pread(fd, 10000, total)
            if not chunk:
                return total
            total += len(chunk)
    finally:
        os.close(fd)


def read_numpy(path):
    return numpy.fromfile(path, dtype=numpy.uint8).nbytes


def main():
    data = sys.argv[1]
    for name, reader in (("whole", read_whole), ("into", read_into),
                         ("pread", read_pread), ("numpy", read_numpy)):
        print(name, reader(os.path.join(data, name + ".bin")))


if __name__ == "__main__":
    main()
