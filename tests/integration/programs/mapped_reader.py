"""Reads a file through numpy.memmap, one byte every STRIDE bytes, for
mapped_uring_test.cc:

  mapped_reader.py FILE STRIDE [PAUSE_EVERY]

With PAUSE_EVERY, pauses 30 ms after every PAUSE_EVERY bytes read, so that
the tracer's writer drains the samples while the pass is under way.
Prints the process's minor and major page faults taken during the pass
(/proc/thread-self/stat of this thread, fields 10 and 12) and the sum of the bytes read:
  faults MINOR MAJOR
  sum N
"""

import sys
import time

import numpy


def faults():
    fields = open("/proc/thread-self/stat").read().rsplit(")", 1)[1].split()
    return int(fields[7]), int(fields[9])


def main(path, stride, pause_every):
    m = numpy.memmap(path, dtype=numpy.uint8, mode="r")
    offsets = range(0, len(m), stride)
    total = 0
    minor0, major0 = faults()
    for n, i in enumerate(offsets, 1):
        total += int(m[i])
        if pause_every and n % pause_every == 0:
            time.sleep(0.03)
    minor1, major1 = faults()
    print(f"faults {minor1 - minor0} {major1 - major0}")
    print(f"sum {total}")
    del m


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 0)
