// The events of io_uring's calls, shared by the raw system calls
// (uring_syscall.cc) and liburing's functions (liburing.cc): each wrapper
// calls the real function inside a TraceCall and hands the outcome here.
//
// Results: the system calls return -1 and set errno; liburing returns
// -errno. `result` is passed as the call returned it and recorded as the
// trace wants it (-1, with `error`).

#ifndef IOTAP_INTERPOSE_URING_URING_CALLS_H_
#define IOTAP_INTERPOSE_URING_URING_CALLS_H_

#include <linux/io_uring.h>

#include "interpose/core/trace_call.h"
#include "interpose/uring/uring_requests.h"
#include "interpose/uring/uring_rings.h"

namespace iotap::interpose {

// How a call reports failure: the system call's -1 and errno, or
// liburing's -errno.
enum class Failure { kErrno, kNegative };

// A ring set up on `fd` (-1 if it failed) from `entries` and `params`.
// `raw`: the io_uring_setup system call, whose parameters locate the queues
// (liburing hands its own view to each later call instead).
void RecordSetup(TraceCall& call, unsigned entries, const struct io_uring_params* params, int fd,
                 long result, Failure failure, bool raw);

// io_uring_register(fd, opcode, arg, nr_args) returned `result`: registered
// files are noted for fixed-file requests.
void RecordRegister(TraceCall& call, int fd, unsigned opcode, const void* arg, unsigned nr_args,
                    long result, Failure failure);

// A call on ring `fd` (-1: unknown) that may have submitted and waited,
// `mark` taken before it: its event, the requests it submitted and the
// completions that arrived. `view`: liburing's, or null for a raw ring.
void RecordEnter(TraceCall& call, int fd, const RingView* view, const SubmitMark& mark,
                 unsigned wait_nr, long result, Failure failure);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_URING_URING_CALLS_H_
