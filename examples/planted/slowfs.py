#!/usr/bin/python3
"""A read-only FUSE view of a directory where every request waits first.

    slowfs.py SOURCE MOUNTPOINT [--latency-ms 0.5]

Network and parallel file systems answer each lookup, open, stat, read and
close with a round trip to a server; on a local disk the same calls cost
microseconds. This file system stands in for the remote kind: each request
the kernel sends it sleeps `--latency-ms` and is then served from SOURCE.
The kernel is told not to cache names or attributes, so every open and stat
of the traced job pays the round trip, as it would against NFS with
`actimeo=0` or a Lustre client whose locks were revoked.

It runs in the foreground until unmounted (`fusermount -u MOUNTPOINT`, or
`umount` as root) or sent SIGTERM. It needs python3-fusepy and /dev/fuse.
"""

import argparse
import errno
import os
import sys
import time

import fusepy


class SlowPassthrough(fusepy.Operations):
    def __init__(self, source, latency_s):
        self.source = os.path.realpath(source)
        self.latency_s = latency_s

    def _path(self, path):
        return os.path.join(self.source, path.lstrip("/"))

    def _wait(self):
        if self.latency_s > 0:
            time.sleep(self.latency_s)

    def access(self, path, mode):
        self._wait()
        if not os.access(self._path(path), mode):
            raise fusepy.FuseOSError(errno.EACCES)

    def getattr(self, path, fh=None):
        self._wait()
        try:
            st = os.lstat(self._path(path))
        except OSError as e:
            raise fusepy.FuseOSError(e.errno)
        keys = ("st_mode", "st_nlink", "st_uid", "st_gid", "st_size",
                "st_atime", "st_mtime", "st_ctime")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path, fh):
        self._wait()
        return [".", ".."] + os.listdir(self._path(path))

    def statfs(self, path):
        self._wait()
        st = os.statvfs(self._path(path))
        keys = ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
                "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")
        return {k: getattr(st, k) for k in keys}

    def open(self, path, flags):
        self._wait()
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise fusepy.FuseOSError(errno.EROFS)
        try:
            return os.open(self._path(path), os.O_RDONLY)
        except OSError as e:
            raise fusepy.FuseOSError(e.errno)

    def read(self, path, size, offset, fh):
        self._wait()
        return os.pread(fh, size, offset)

    def flush(self, path, fh):
        self._wait()
        return 0

    def release(self, path, fh):
        os.close(fh)
        return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source")
    p.add_argument("mountpoint")
    p.add_argument("--latency-ms", type=float, default=0.5,
                   help="wait before answering each request (default 0.5 ms)")
    args = p.parse_args()
    if not os.path.isdir(args.source):
        sys.exit(f"slowfs.py: {args.source}: not a directory")
    fusepy.FUSE(SlowPassthrough(args.source, args.latency_ms / 1000.0), args.mountpoint,
                foreground=True, nothreads=False, ro=True, default_permissions=True,
                attr_timeout=0, entry_timeout=0, negative_timeout=0)


if __name__ == "__main__":
    main()
