"""Reads data files the ways Python programs do, for python_test.cc.

usage: python_reads.py DIR

Expects DIR/{whole,into,pread,readv,preadv,threads,numpy}.bin (python_test.cc
writes them) and reads each one way:

  whole.bin    open(path, "rb").read()          BufferedReader -> FileIO.readall
  into.bin     f.readinto(buf) on an unbuffered file, in 64 KiB pieces
  pread.bin    os.pread at explicit offsets, 10000 bytes at a time
  readv.bin    os.readv into buffers of 4000, 5000 and 6000 bytes
  preadv.bin   os.preadv (glibc's preadv2) into two buffers of 8192 bytes at
               explicit offsets
  threads.bin  four threads, each os.pread-ing its quarter on one shared
               descriptor, 10000 bytes at a time
  numpy.bin    numpy.fromfile: Python open, then dup + fdopen + fread

Prints one line per file, "NAME BYTES", so the test can check that the
program saw every byte.
"""

import os
import sys
import threading

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


def read_readv(path):
    total = 0
    buffers = [bytearray(4000), bytearray(5000), bytearray(6000)]
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            n = os.readv(fd, buffers)
            if not n:
                return total
            total += n
    finally:
        os.close(fd)


def read_preadv(path):
    total = 0
    buffers = [bytearray(8192), bytearray(8192)]
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            n = os.preadv(fd, buffers, total)
            if not n:
                return total
            total += n
    finally:
        os.close(fd)


def read_threads(path):
    size = os.path.getsize(path)
    quarter = size // 4
    totals = [0] * 4
    fd = os.open(path, os.O_RDONLY)

    def read_quarter(i):
        start = i * quarter
        for offset in range(start, start + quarter, 10000):
            totals[i] += len(os.pread(fd, min(10000, start + quarter - offset), offset))

    threads = [threading.Thread(target=read_quarter, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    os.close(fd)
    return sum(totals)


def read_numpy(path):
    return numpy.fromfile(path, dtype=numpy.uint8).nbytes


def main():
    data = sys.argv[1]
    for name, reader in (("whole", read_whole), ("into", read_into),
                         ("pread", read_pread), ("readv", read_readv),
                         ("preadv", read_preadv), ("threads", read_threads),
                         ("numpy", read_numpy)):
        print(name, reader(os.path.join(data, name + ".bin")))


if __name__ == "__main__":
    main()
