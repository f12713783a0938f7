/* A program that reads and writes through liburing, for mapped_uring_test.cc:
 *
 *   uring_reader DATA OUT
 *
 * DATA must hold at least 160 KiB. Five rounds of four reads each (8 KiB
 * apart; 4, 8 and 12 KiB from the plain descriptor, 8 KiB from fixed file 0),
 * submitted with io_uring_submit_and_wait and reaped with io_uring_wait_cqe;
 * then one readv of two 4 KiB buffers at 64 KiB, one write of 1000 bytes to
 * OUT at offset 0, an openat of DATA and a close of what it returned, each
 * submitted with io_uring_submit and reaped with io_uring_wait_cqe. Prints
 * every completion's result, one per line. */

#define _GNU_SOURCE
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static struct io_uring ring;

static int reap(const char* what) {
  struct io_uring_cqe* cqe;
  if (io_uring_wait_cqe(&ring, &cqe) != 0) return -1;
  int res = cqe->res;
  io_uring_cqe_seen(&ring, cqe);
  printf("%s %d\n", what, res);
  return res;
}

int main(int argc, char** argv) {
  if (argc != 3 || io_uring_queue_init(8, &ring, 0) < 0) return 2;
  int fd = open(argv[1], O_RDONLY);
  int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || out < 0 || io_uring_register_files(&ring, &fd, 1) != 0) return 2;
  static char buf[4][12288];
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 4; ++i) {
      struct io_uring_sqe* sqe = io_uring_get_sqe(&ring);
      unsigned offset = (round * 4 + i) * 8192;
      if (i == 3) {
        io_uring_prep_read(sqe, 0, buf[i], 8192, offset);
        sqe->flags |= IOSQE_FIXED_FILE;
      } else {
        io_uring_prep_read(sqe, fd, buf[i], 4096 * (i + 1), offset);
      }
    }
    io_uring_submit_and_wait(&ring, 4);
    for (int i = 0; i < 4; ++i) reap("read");
  }
  struct iovec iov[2] = {{buf[0], 4096}, {buf[1], 4096}};
  io_uring_prep_readv(io_uring_get_sqe(&ring), fd, iov, 2, 65536);
  io_uring_submit(&ring);
  reap("readv");
  memset(buf[2], 'x', 1000);
  io_uring_prep_write(io_uring_get_sqe(&ring), out, buf[2], 1000, 0);
  io_uring_submit(&ring);
  reap("write");
  io_uring_prep_openat(io_uring_get_sqe(&ring), AT_FDCWD, argv[1], O_RDONLY, 0);
  io_uring_submit(&ring);
  int opened = reap("openat");
  io_uring_prep_close(io_uring_get_sqe(&ring), opened);
  io_uring_submit(&ring);
  reap("close");
  io_uring_queue_exit(&ring);
  close(out);
  close(fd);
  return 0;
}
