// Waits on descriptors: poll, ppoll, select, pselect, epoll_wait,
// epoll_pwait, epoll_pwait2 and the fortified poll forms.
//
// A wait is recorded only when it blocked (TraceCall::FinishWait): the
// DataLoader's trainer polls each worker's queue before reading a batch,
// and a poll that finds the batch there is no wait. poll and epoll_wait
// with a timeout of 0 cannot block and go straight to the real call; the
// forms with a timeout behind a pointer are not looked into (a bad pointer
// is the caller's EFAULT), they return within the threshold.
//
// What each event names (proto/iotap/trace.proto, OP_POLL ... OP_EPOLL_WAIT)
// is read from the caller's arrays only after the kernel accepted them.

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/trace_call.h"

extern "C" {
// The fortified forms (glibc's debug/poll_chk.c, debug/ppoll_chk.c), which
// the headers declare only under _FORTIFY_SOURCE.
int __poll_chk(struct pollfd* fds, nfds_t nfds, int timeout, size_t fdslen);
int __ppoll_chk(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout,
                const __sigset_t* ss, size_t fdslen);
}

namespace iotap::interpose {
namespace {

IOTAP_REAL(poll);
IOTAP_REAL(ppoll);
IOTAP_REAL(__poll_chk);
IOTAP_REAL(__ppoll_chk);
IOTAP_REAL(select);
IOTAP_REAL(pselect);
IOTAP_REAL(epoll_wait);
IOTAP_REAL(epoll_pwait);
IOTAP_REAL(epoll_pwait2);

// Whether the kernel read (and, for poll, wrote back) the caller's array:
// it did unless the call failed before looking (a bad pointer, a count past
// the limit). An interrupted wait had copied it in.
bool ArrayAccepted(int r, int err) { return r >= 0 || err == EINTR; }

// The first descriptor poll reported ready, or else the first it waited on.
int PolledFd(const struct pollfd* fds, nfds_t nfds, int r) {
  if (r > 0) {
    for (nfds_t i = 0; i < nfds; ++i) {
      if (fds[i].fd >= 0 && fds[i].revents != 0) return fds[i].fd;
    }
  }
  for (nfds_t i = 0; i < nfds; ++i) {
    if (fds[i].fd >= 0) return fds[i].fd;
  }
  return -1;
}

IOTAP_HOT void RecordPoll(TraceCall& call, const struct pollfd* fds, nfds_t nfds, int r) {
  if (RawEvent* e = call.FinishWait(kOpPoll, r < 0)) {
    if (ArrayAccepted(r, call.saved_errno())) e->file = FileOf(PolledFd(fds, nfds, r));
    e->requested = nfds;
    e->result = r;
  }
}

// The lowest descriptor in any of the sets, which after a successful select
// hold only the ready ones; -1 if none.
int LowestReadyFd(int nfds, const fd_set* read, const fd_set* write, const fd_set* except) {
  for (const fd_set* set : {read, write, except}) {
    if (set == nullptr) continue;
    for (int fd = 0; fd < nfds && fd < FD_SETSIZE; ++fd) {
      if (FD_ISSET(fd, set)) return fd;
    }
  }
  return -1;
}

IOTAP_HOT void RecordSelect(TraceCall& call, int nfds, const fd_set* read, const fd_set* write,
                            const fd_set* except, int r) {
  if (RawEvent* e = call.FinishWait(kOpSelect, r < 0)) {
    if (r > 0) e->file = FileOf(LowestReadyFd(nfds, read, write, except));
    e->requested = static_cast<uint64_t>(nfds);
    e->result = r;
  }
}

IOTAP_HOT void RecordEpoll(TraceCall& call, int epfd, int maxevents, int r) {
  if (RawEvent* e = call.FinishWait(kOpEpollWait, r < 0)) {
    e->file = FileOf(epfd);
    e->requested = static_cast<uint64_t>(maxevents);
    e->result = r;
  }
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT int poll(struct pollfd* fds, nfds_t nfds, int timeout) {
  if (timeout == 0) return real_poll()(fds, nfds, timeout);
  TraceCall call(kLayerWaits);
  int r = real_poll()(fds, nfds, timeout);
  RecordPoll(call, fds, nfds, r);
  return r;
}

IOTAP_EXPORT int __poll_chk(struct pollfd* fds, nfds_t nfds, int timeout, size_t fdslen) {
  if (timeout == 0) return real___poll_chk()(fds, nfds, timeout, fdslen);
  TraceCall call(kLayerWaits);
  int r = real___poll_chk()(fds, nfds, timeout, fdslen);
  RecordPoll(call, fds, nfds, r);
  return r;
}

IOTAP_EXPORT int ppoll(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout,
                       const sigset_t* sigmask) {
  TraceCall call(kLayerWaits);
  int r = real_ppoll()(fds, nfds, timeout, sigmask);
  RecordPoll(call, fds, nfds, r);
  return r;
}

IOTAP_EXPORT int __ppoll_chk(struct pollfd* fds, nfds_t nfds, const struct timespec* timeout,
                             const __sigset_t* sigmask, size_t fdslen) {
  TraceCall call(kLayerWaits);
  int r = real___ppoll_chk()(fds, nfds, timeout, sigmask, fdslen);
  RecordPoll(call, fds, nfds, r);
  return r;
}

IOTAP_EXPORT int select(int nfds, fd_set* read, fd_set* write, fd_set* except,
                        struct timeval* timeout) {
  TraceCall call(kLayerWaits);
  int r = real_select()(nfds, read, write, except, timeout);
  RecordSelect(call, nfds, read, write, except, r);
  return r;
}

IOTAP_EXPORT int pselect(int nfds, fd_set* read, fd_set* write, fd_set* except,
                         const struct timespec* timeout, const sigset_t* sigmask) {
  TraceCall call(kLayerWaits);
  int r = real_pselect()(nfds, read, write, except, timeout, sigmask);
  RecordSelect(call, nfds, read, write, except, r);
  return r;
}

IOTAP_EXPORT int epoll_wait(int epfd, struct epoll_event* events, int maxevents, int timeout) {
  if (timeout == 0) return real_epoll_wait()(epfd, events, maxevents, timeout);
  TraceCall call(kLayerWaits);
  int r = real_epoll_wait()(epfd, events, maxevents, timeout);
  RecordEpoll(call, epfd, maxevents, r);
  return r;
}

IOTAP_EXPORT int epoll_pwait(int epfd, struct epoll_event* events, int maxevents, int timeout,
                             const sigset_t* sigmask) {
  if (timeout == 0) return real_epoll_pwait()(epfd, events, maxevents, timeout, sigmask);
  TraceCall call(kLayerWaits);
  int r = real_epoll_pwait()(epfd, events, maxevents, timeout, sigmask);
  RecordEpoll(call, epfd, maxevents, r);
  return r;
}

IOTAP_EXPORT int epoll_pwait2(int epfd, struct epoll_event* events, int maxevents,
                              const struct timespec* timeout, const sigset_t* sigmask) {
  TraceCall call(kLayerWaits);
  int r = real_epoll_pwait2()(epfd, events, maxevents, timeout, sigmask);
  RecordEpoll(call, epfd, maxevents, r);
  return r;
}
