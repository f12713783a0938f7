// Receives on sockets: recv, recvfrom, recvmsg and the fortified recv
// forms, each recorded like a read of the socket (OP_RECV), every call. A
// PyTorch trainer receives the descriptors of a batch's shared memory from
// its workers this way; a receive that blocked is a wait the analyzer reads.

#include <sys/socket.h>
#include <sys/types.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/trace_call.h"
#include "interpose/posix/glibc_symbols.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(recv);
IOTAP_REAL(recvfrom);
IOTAP_REAL(recvmsg);
IOTAP_REAL(__recv_chk);
IOTAP_REAL(__recvfrom_chk);

IOTAP_HOT void RecordRecv(TraceCall& call, int fd, uint64_t requested, int flags, ssize_t r) {
  if (RawEvent* e = call.Finish(kOpRecv, r < 0)) {
    e->file = FileOf(fd);
    e->requested = requested;
    e->result = r;
    e->aux = static_cast<uint32_t>(flags);
  }
}

// The bytes recvmsg's buffers hold; read only after the kernel accepted the
// message header (a bad one is the caller's EFAULT).
uint64_t MessageBytes(const struct msghdr* msg, ssize_t r) {
  if (r < 0 || msg->msg_iov == nullptr) return 0;
  uint64_t total = 0;
  for (size_t i = 0; i < msg->msg_iovlen; ++i) total += msg->msg_iov[i].iov_len;
  return total;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT ssize_t recv(int fd, void* buf, size_t n, int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_recv()(fd, buf, n, flags);
  RecordRecv(call, fd, n, flags, r);
  return r;
}

IOTAP_EXPORT ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real___recv_chk()(fd, buf, n, buflen, flags);
  RecordRecv(call, fd, n, flags, r);
  return r;
}

IOTAP_EXPORT ssize_t recvfrom(int fd, void* buf, size_t n, int flags, struct sockaddr* from,
                              socklen_t* from_len) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_recvfrom()(fd, buf, n, flags, from, from_len);
  RecordRecv(call, fd, n, flags, r);
  return r;
}

IOTAP_EXPORT ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags,
                                    struct sockaddr* from, socklen_t* from_len) {
  TraceCall call(kLayerPosix);
  ssize_t r = real___recvfrom_chk()(fd, buf, n, buflen, flags, from, from_len);
  RecordRecv(call, fd, n, flags, r);
  return r;
}

IOTAP_EXPORT ssize_t recvmsg(int fd, struct msghdr* msg, int flags) {
  TraceCall call(kLayerPosix);
  ssize_t r = real_recvmsg()(fd, msg, flags);
  RecordRecv(call, fd, MessageBytes(msg, r), flags, r);
  return r;
}
