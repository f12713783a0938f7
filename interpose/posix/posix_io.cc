// POSIX data transfers: read, write and their positional, vector, fortified
// and 64-bit forms, and the in-kernel copies (copy_file_range, sendfile).

#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <unistd.h>

#include "interpose/core/direct_io.h"
#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/trace_call.h"
#include "interpose/posix/glibc_symbols.h"
#include "interpose/tfrecord/tfrecord.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(read);
IOTAP_REAL(__read_chk);
IOTAP_REAL(pread);
IOTAP_REAL(pread64);
IOTAP_REAL(__pread_chk);
IOTAP_REAL(__pread64_chk);
IOTAP_REAL(readv);
IOTAP_REAL(preadv);
IOTAP_REAL(preadv64);
IOTAP_REAL(preadv2);
IOTAP_REAL(preadv64v2);
IOTAP_REAL(write);
IOTAP_REAL(pwrite);
IOTAP_REAL(pwrite64);
IOTAP_REAL(writev);
IOTAP_REAL(pwritev);
IOTAP_REAL(pwritev64);
IOTAP_REAL(pwritev2);
IOTAP_REAL(pwritev64v2);
IOTAP_REAL(copy_file_range);
IOTAP_REAL(sendfile);
IOTAP_REAL(sendfile64);

uint64_t IovecBytes(const struct iovec* iov, int count) {
  uint64_t total = 0;
  for (int i = 0; i < count && iov != nullptr; ++i) total += iov[i].iov_len;
  return total;
}

// Whether a vector call that failed with `err` may have left the iovec
// unread: Linux checks the descriptor (EBADF, ESPIPE), the count and offset
// (EINVAL) before copying the vector in, and reports a bad one as EFAULT.
// The vector is then the caller's garbage, or longer than its array.
bool VectorUnread(int err) {
  return err == EBADF || err == ESPIPE || err == EINVAL || err == EFAULT;
}

// read and __read_chk. Reads hand what they returned to the TFRecord layer.
IOTAP_HOT void RecordRead(TraceCall& call, int fd, const void* buf, size_t n, ssize_t r) {
  if (RawEvent* e = call.Finish(kOpRead, r < 0)) {
    FdEntry* f = FdLookup(fd, r);
    FillTrackedIo(e, f, n, r, false);
    TfRecordAfterRead(call, f, e, buf);
  }
}

// pread and its variants.
IOTAP_HOT void RecordPread(TraceCall& call, int fd, const void* buf, size_t n, off64_t offset,
                           ssize_t r) {
  if (RawEvent* e = call.Finish(kOpPread, r < 0)) {
    FdEntry* f = FdLookup(fd);
    FillExplicitIo(e, f, offset, n, r);
    TfRecordAfterRead(call, f, e, buf);
  }
}

IOTAP_HOT void RecordPwrite(TraceCall& call, int fd, size_t n, off64_t offset, ssize_t r) {
  if (RawEvent* e = call.Finish(kOpPwrite, r < 0)) FillExplicitIo(e, FdLookup(fd), offset, n, r);
}

// Vector transfers; `offset` -1 means "at the current position" (readv, or
// preadv2 with offset -1).
IOTAP_HOT void RecordVector(TraceCall& call, Op op, int fd, const struct iovec* iov, int count,
                            off64_t offset, ssize_t r, bool is_write) {
  RawEvent* e = call.Finish(op, r < 0);
  if (e == nullptr) return;
  FdEntry* f = FdLookup(fd, offset == -1 ? r : 0);
  uint64_t bytes = r < 0 && VectorUnread(call.saved_errno()) ? 0 : IovecBytes(iov, count);
  if (offset == -1) {
    FillTrackedIo(e, f, bytes, r, is_write);
  } else {
    FillExplicitIo(e, f, offset, bytes, r);
  }
  e->aux = static_cast<uint64_t>(count);
  if (!is_write) TfRecordAfterReadv(call, f, e, iov, count);
}

// One side of an in-kernel copy. With an explicit offset pointer the kernel
// advanced it by the bytes moved; it is read only after a successful call
// (a bad pointer is the caller's EFAULT, not ours to fault on).
void FillCopySide(RawEvent* e, FdEntry* f, const int64_t* offset, size_t n, ssize_t r,
                  bool is_write) {
  if (offset == nullptr) {
    FillTrackedIo(e, f, n, r, is_write);
  } else if (r >= 0) {
    FillExplicitIo(e, f, *offset - r, n, r);
  } else {
    e->file = FileOf(f);
    e->requested = n;
    e->result = r;
  }
}

void RecordCopy(TraceCall& call, Op in_op, Op out_op, int in_fd, const int64_t* in_offset,
                int out_fd, const int64_t* out_offset, size_t n, ssize_t r) {
  RawEvent* e = call.Finish(in_op, r < 0);
  if (e == nullptr) return;
  FdEntry* in = FdLookup(in_fd, in_offset == nullptr ? r : 0);
  FdEntry* out = FdLookup(out_fd, out_offset == nullptr ? r : 0);
  FillCopySide(e, in, in_offset, n, r, false);
  e->aux = FileOf(out);
  e = call.Another(out_op);
  if (e == nullptr) return;
  e->flags = 0;
  e->offset = 0;
  FillCopySide(e, out, out_offset, n, r, true);
  e->aux = FileOf(in);
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  TraceCall call(kLayerPosix);
  ssize_t r = DirectIo() ? DirectRead(fd, buf, n) : real_read()(fd, buf, n);
  RecordRead(call, fd, buf, n, r);
  return r;
}

IOTAP_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  TraceCall call(kLayerPosix);
  ssize_t r = real___read_chk()(fd, buf, n, buflen);
  RecordRead(call, fd, buf, n, r);
  return r;
}

IOTAP_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = DirectIo() ? DirectPread(fd, buf, n, offset) : real_pread()(fd, buf, n, offset);
  RecordPread(call, fd, buf, n, offset, r);
  return r;
}

IOTAP_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off64_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = DirectIo() ? DirectPread(fd, buf, n, offset) : real_pread64()(fd, buf, n, offset);
  RecordPread(call, fd, buf, n, offset, r);
  return r;
}

IOTAP_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t offset, size_t buflen) {
  TraceCall call(kLayerPosix);
  ssize_t r = real___pread_chk()(fd, buf, n, offset, buflen);
  RecordPread(call, fd, buf, n, offset, r);
  return r;
}

IOTAP_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t offset, size_t buflen) {
  TraceCall call(kLayerPosix);
  ssize_t r = real___pread64_chk()(fd, buf, n, offset, buflen);
  RecordPread(call, fd, buf, n, offset, r);
  return r;
}

IOTAP_EXPORT ssize_t readv(int fd, const struct iovec* iov, int count) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_readv()(fd, iov, count);
  RecordVector(call, kOpReadv, fd, iov, count, -1, r, false);
  return r;
}

IOTAP_EXPORT ssize_t preadv(int fd, const struct iovec* iov, int count, off_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_preadv()(fd, iov, count, offset);
  RecordVector(call, kOpPreadv, fd, iov, count, offset, r, false);
  return r;
}

IOTAP_EXPORT ssize_t preadv64(int fd, const struct iovec* iov, int count, off64_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_preadv64()(fd, iov, count, offset);
  RecordVector(call, kOpPreadv, fd, iov, count, offset, r, false);
  return r;
}

IOTAP_EXPORT ssize_t preadv2(int fd, const struct iovec* iov, int count, off_t offset, int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_preadv2()(fd, iov, count, offset, flags);
  RecordVector(call, kOpPreadv2, fd, iov, count, offset, r, false);
  return r;
}

IOTAP_EXPORT ssize_t preadv64v2(int fd, const struct iovec* iov, int count, off64_t offset,
                                int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_preadv64v2()(fd, iov, count, offset, flags);
  RecordVector(call, kOpPreadv2, fd, iov, count, offset, r, false);
  return r;
}

IOTAP_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  TraceCall call(kLayerPosix);
  ssize_t r = DirectIo() ? DirectWrite(fd, buf, n) : real_write()(fd, buf, n);
  if (RawEvent* e = call.Finish(kOpWrite, r < 0)) FillTrackedIo(e, FdLookup(fd, r), n, r, true);
  return r;
}

IOTAP_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = DirectIo() ? DirectPwrite(fd, buf, n, offset) : real_pwrite()(fd, buf, n, offset);
  RecordPwrite(call, fd, n, offset, r);
  return r;
}

IOTAP_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = DirectIo() ? DirectPwrite(fd, buf, n, offset) : real_pwrite64()(fd, buf, n, offset);
  RecordPwrite(call, fd, n, offset, r);
  return r;
}

IOTAP_EXPORT ssize_t writev(int fd, const struct iovec* iov, int count) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_writev()(fd, iov, count);
  RecordVector(call, kOpWritev, fd, iov, count, -1, r, true);
  return r;
}

IOTAP_EXPORT ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_pwritev()(fd, iov, count, offset);
  RecordVector(call, kOpPwritev, fd, iov, count, offset, r, true);
  return r;
}

IOTAP_EXPORT ssize_t pwritev64(int fd, const struct iovec* iov, int count, off64_t offset) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_pwritev64()(fd, iov, count, offset);
  RecordVector(call, kOpPwritev, fd, iov, count, offset, r, true);
  return r;
}

IOTAP_EXPORT ssize_t pwritev2(int fd, const struct iovec* iov, int count, off_t offset, int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_pwritev2()(fd, iov, count, offset, flags);
  RecordVector(call, kOpPwritev2, fd, iov, count, offset, r, true);
  return r;
}

IOTAP_EXPORT ssize_t pwritev64v2(int fd, const struct iovec* iov, int count, off64_t offset,
                                 int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_pwritev64v2()(fd, iov, count, offset, flags);
  RecordVector(call, kOpPwritev2, fd, iov, count, offset, r, true);
  return r;
}

IOTAP_EXPORT ssize_t copy_file_range(int in_fd, off64_t* in_offset, int out_fd, off64_t* out_offset,
                                     size_t n, unsigned int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_copy_file_range()(in_fd, in_offset, out_fd, out_offset, n, flags);
  RecordCopy(call, kOpCopyFileRangeIn, kOpCopyFileRangeOut, in_fd, in_offset, out_fd, out_offset, n,
             r);
  return r;
}

IOTAP_EXPORT ssize_t sendfile(int out_fd, int in_fd, off_t* offset, size_t n) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_sendfile()(out_fd, in_fd, offset, n);
  RecordCopy(call, kOpSendfileIn, kOpSendfileOut, in_fd, offset, out_fd, nullptr, n, r);
  return r;
}

IOTAP_EXPORT ssize_t sendfile64(int out_fd, int in_fd, off64_t* offset, size_t n) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_sendfile64()(out_fd, in_fd, offset, n);
  RecordCopy(call, kOpSendfileIn, kOpSendfileOut, in_fd, offset, out_fd, nullptr, n, r);
  return r;
}
