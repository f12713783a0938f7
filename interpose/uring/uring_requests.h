// io_uring requests: found in a ring's submission queue after the call that
// submitted them, kept while in flight, and recorded when the shim sees
// their completion.
//
// A call into the kernel (io_uring_enter, liburing's submit and wait
// functions) goes through one shape:
//
//   TraceCall call(kLayerUring);
//   SubmitMark mark = UringMark(fd, view);          // the queue's head before
//   int r = real(...);
//   RawEvent* e = call.Finish(kOpUringEnter, r < 0);
//   UringAfterCall(call, e, fd, view, mark);         // requests in, completions out
//
// The kernel takes requests from the submission queue during the call and
// moves its head past them, so the requests between the head before the
// call and the head after it are exactly those submitted; they are decoded
// then (before the program can reuse their slots) with the call's start as
// their submit time. Completions are read from the completion queue, from
// where the shim last looked to the kernel's tail, at every such call: a
// request's end is when the shim saw its completion, which is the return of
// the call that waited for it or, for a completion the program reaped
// without entering the kernel (io_uring_peek_cqe, io_uring_wait_cqe when one
// is ready), its next call into io_uring. The kernel overwrites a completion
// only after the program consumed it and a queue's worth more arrived; a
// program that reaps a queue's worth without a call loses the shim those.
// Requests whose completion is never seen are recorded with FLAG_INCOMPLETE
// when their ring goes away or the process ends.

#ifndef IOTAP_INTERPOSE_URING_URING_REQUESTS_H_
#define IOTAP_INTERPOSE_URING_URING_REQUESTS_H_

#include <stddef.h>
#include <stdint.h>

#include "interpose/core/ring.h"
#include "interpose/core/trace_call.h"
#include "interpose/uring/uring_rings.h"

namespace iotap::interpose {

inline constexpr int kMaxInflight = 4096;
// Events handed out of the lock at a time.
inline constexpr int kLeftoverBatch = 128;

// The submission queue's head before a call.
struct SubmitMark {
  uint32_t sq_head = 0;
  bool valid = false;
};

// Before a call that may submit, on ring `fd` (`given`: liburing's view, or
// null for a raw ring).
SubmitMark UringMark(int fd, const RingView* given);

// After it: records the requests the kernel took since `mark` as in flight,
// sets `e->requested` to their number (when `e` is not null), and records
// the completions that arrived as events following `call`'s.
void UringAfterCall(TraceCall& call, RawEvent* e, int fd, const RingView* given,
                    const SubmitMark& mark);

// Events made under the rings' lock, recorded after it is released (the
// recorder may take the writer lock, which comes before it).
struct Leftovers {
  RawEvent events[kLeftoverBatch];
  int count = 0;
  int lost = 0;  // beyond the batch
};

// With the rings' lock held: the completions in `view` since `state` as
// events, into `out`.
void CollectCompletionsLocked(const RingView& view, QueueState* state, Leftovers* out);
// With the rings' lock held: every request of ring `fd` still in flight,
// as FLAG_INCOMPLETE events, into `out`, and forgotten.
void TakeInflightLocked(int fd, Leftovers* out);
// With the rings' lock held, as ring `fd` (interned as `file`) goes away:
// `unseen` requests (if any) that the kernel took without a call the shim
// saw, as one OP_URING_ENTER event with FLAG_INCOMPLETE (requested =
// `unseen`, result = `completions`, the ring's total), into `out`.
void AddUnseenLocked(int fd, uint32_t file, uint32_t unseen, uint32_t completions,
                     Leftovers* out);
// Records `leftovers` on the calling thread.
void RecordLeftovers(Leftovers* leftovers);

// At the end of the trace (exit, exec, abort), on the thread that ends it:
// every request still in flight, as FLAG_INCOMPLETE events.
void UringEndOfTrace();

// In a fork child: the parent's requests are not the child's.
void ForgetInflightInChild();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_URING_URING_REQUESTS_H_
