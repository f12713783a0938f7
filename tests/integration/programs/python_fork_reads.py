"""Reads one descriptor from forked children, for python_test.cc.

usage: python_fork_reads.py DIR

The parent opens DIR/shared.bin and reads its first 4096 bytes; reads
DIR/before.bin in 100 pieces on its main thread and DIR/thread.bin in 100
pieces on a second thread, just before forking, so those events are still in
its buffers when it forks; then forks two children that pread one half each
of shared.bin (what is left after the first 4096 bytes) through the inherited
descriptor, 10000 bytes at a time, and leave through os._exit as DataLoader
workers do, with status 0 if they read their half whole. The parent waits for
both and prints "forked 2, read 4096".
"""

import os
import sys
import threading


def read_in_pieces(path, pieces):
    size = os.path.getsize(path)
    step = size // pieces
    with open(path, "rb", buffering=0) as f:
        for _ in range(pieces):
            f.read(step)


def child(fd, start, end):
    total = 0
    for offset in range(start, end, 10000):
        total += len(os.pread(fd, min(10000, end - offset), offset))
    os._exit(0 if total == end - start else 1)


def main():
    data = sys.argv[1]
    shared = os.path.join(data, "shared.bin")
    fd = os.open(shared, os.O_RDONLY)
    first = len(os.read(fd, 4096))
    worker = threading.Thread(
        target=read_in_pieces, args=(os.path.join(data, "thread.bin"), 100))
    worker.start()
    read_in_pieces(os.path.join(data, "before.bin"), 100)
    worker.join()
    size = os.path.getsize(shared)
    middle = first + (size - first) // 2
    pids = []
    for start, end in ((first, middle), (middle, size)):
        pid = os.fork()
        if pid == 0:
            child(fd, start, end)
        pids.append(pid)
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        if status != 0:
            sys.exit(f"child {pid} failed: {status}")
    os.close(fd)
    print(f"forked {len(pids)}, read {first}")


if __name__ == "__main__":
    main()
