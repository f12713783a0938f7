// TraceCall: the one shape every wrapper has.
//
//   ssize_t pread(int fd, void* buf, size_t n, off_t offset) {
//     TraceCall call(kLayerPosix);               // t0, if this thread may record
//     ssize_t r = real_pread()(fd, buf, n, offset);
//     if (RawEvent* e = call.Finish(kOpPread, r < 0)) {
//       e->file = FileOf(fd);                     // bookkeeping runs "busy"
//       ...
//     }
//     return r;                                   // ~TraceCall publishes the
//   }                                             // event and restores errno
//
// The real function's return value is returned untouched; errno is saved
// right after the real call and restored as the wrapper returns, whatever the
// bookkeeping did. Calls made while the thread is already inside the shim
// (including from a signal handler that interrupted it) are not recorded.

#ifndef IOTAP_INTERPOSE_CORE_TRACE_CALL_H_
#define IOTAP_INTERPOSE_CORE_TRACE_CALL_H_

#include <errno.h>
#include <string.h>

#include "interpose/core/clock.h"
#include "interpose/core/config.h"
#include "interpose/core/ops.h"
#include "interpose/core/recorder.h"

namespace iotap::interpose {

// The events of one call after its first (TFRecord records found in what a
// read returned), for code out of line: the call's thread, its reserved and
// not yet published event, and its end time, by value. A TraceCall whose
// address a wrapper hands to any function, even on a cold branch, lives on
// the stack for the whole wrapper; handed this instead, it stays in
// registers (pread: 132 instructions from entry to return instead of 161,
// by callgrind).
//
//   CallEvents events = call.Events();   // only after Finish gave an event
//   OutOfLine(events);                   // events.Follow(op), events.EventId()
//   call.Resume(events);
class CallEvents {
 public:
  CallEvents(ThreadState* ts, RawEvent* event, uint64_t t1) : ts_(ts), event_(event), t1_(t1) {}

  // Publishes the held event and reserves a further one caused by the call,
  // with op and parent set, both times at the call's end and every other
  // field zero; null when it cannot be recorded (counted as dropped).
  RawEvent* Follow(Op op) {
    if (event_ != nullptr) CommitEvent(ts_);
    event_ = Reserve(ts_, t1_, t1_, op, 0);
    return event_;
  }

  // The held event's name within the trace: (tid << 40) | its sequence
  // number in the thread (EventChunk.first_seq counts the same way).
  uint64_t EventId() const {
    const Ring* r = ts_->ring;
    uint64_t seq = r->head.load(std::memory_order_relaxed) - r->seq_origin;
    return (static_cast<uint64_t>(r->tid) << 40) | seq;
  }

  RawEvent* event() const { return event_; }

  // Reserves the next event of `ts`'s ring with its times, op, error and
  // parent set and every other field zero; null (and counted as dropped)
  // when the ring has no room.
  static RawEvent* Reserve(ThreadState* ts, uint64_t t0, uint64_t t1, Op op, uint16_t error) {
    RawEvent* e = ReserveEvent(ts);
    if (e == nullptr) {
      CountDropped(ts);
      return nullptr;
    }
    *e = RawEvent{.t0 = t0,
                  .t1 = t1,
                  .offset = 0,
                  .requested = 0,
                  .result = 0,
                  .aux = 0,
                  .parent = ts->parent,
                  .file = 0,
                  .op = op,
                  .error = error,
                  .flags = 0};
    return e;
  }

 private:
  ThreadState* ts_;
  RawEvent* event_;
  uint64_t t1_;
};

class TraceCall {
 public:
  explicit TraceCall(uint32_t layer) : ts_(&tls_thread) {
    active_ = (g_active_layers.load(std::memory_order_relaxed) & layer) != 0 && !ts_->busy;
    if (active_) t0_ = Now();
  }

  TraceCall(const TraceCall&) = delete;
  TraceCall& operator=(const TraceCall&) = delete;

  ~TraceCall() {
    if (!finished_) return;
    if (event_ != nullptr) CommitEvent(ts_);
    ts_->busy = false;
    *errno_ = saved_errno_;
  }

  bool active() const { return active_; }
  uint64_t start() const { return t0_; }

  // Ends the call: takes the end time and errno, marks the thread busy and
  // reserves the event. Returns the event with op, times, error and parent
  // set and every other field zero, or null if nothing is to be recorded.
  RawEvent* Finish(Op op, bool failed) {
    if (!active_) return nullptr;
    return FinishAt(Now(), op, failed);
  }

  // Finish for a call that may block (waits/): null, with nothing taken or
  // changed, when the call returned within the wait threshold, so that a
  // wait that did not block costs two clock reads.
  RawEvent* FinishWait(Op op, bool failed) {
    if (!active_) return nullptr;
    uint64_t t1 = Now();
    if (t1 - t0_ < g_wait_threshold_raw.load(std::memory_order_relaxed)) return nullptr;
    return FinishAt(t1, op, failed);
  }

  // A second event for the same call (copy_file_range's destination side).
  // Only after Finish returned an event.
  RawEvent* Another(Op op) {
    RawEvent first = *event_;
    CommitEvent(ts_);
    event_ = ReserveEvent(ts_);
    if (event_ == nullptr) {
      CountDropped(ts_);
      return nullptr;
    }
    *event_ = first;
    event_->op = op;
    return event_;
  }

  // A further event caused by this call (CallEvents::Follow). Only after
  // Finish returned an event; null when the event cannot be recorded.
  RawEvent* Follow(Op op) {
    CallEvents events = Events();
    RawEvent* e = events.Follow(op);
    Resume(events);
    return e;
  }

  // The reserved, not yet published event's name within the trace
  // (CallEvents::EventId). Only while Finish's or Follow's event is held.
  uint64_t EventId() const { return Events().EventId(); }

  // This call's events for code out of line, by value (CallEvents), and
  // back: Resume takes the event it ended with. Only after Finish returned
  // an event.
  CallEvents Events() const { return CallEvents(ts_, event_, t1_); }
  void Resume(const CallEvents& events) { event_ = events.event(); }

  int saved_errno() const { return saved_errno_; }

 private:
  RawEvent* FinishAt(uint64_t t1, Op op, bool failed) {
    t1_ = t1;
    errno_ = ts_->errno_location;
    if (__builtin_expect(errno_ == nullptr, 0)) errno_ = ts_->errno_location = &errno;
    saved_errno_ = *errno_;
    finished_ = true;
    ts_->busy = true;
    return Reserve(t0_, t1, op, failed ? static_cast<uint16_t>(saved_errno_) : uint16_t{0});
  }

  // Reserves the call's event as `event_` (CallEvents::Reserve).
  RawEvent* Reserve(uint64_t t0, uint64_t t1, Op op, uint16_t error) {
    event_ = CallEvents::Reserve(ts_, t0, t1, op, error);
    return event_;
  }

  ThreadState* ts_;
  RawEvent* event_ = nullptr;
  int* errno_ = nullptr;
  uint64_t t0_ = 0;
  uint64_t t1_ = 0;
  int saved_errno_ = 0;
  bool active_ = false;
  bool finished_ = false;
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_TRACE_CALL_H_
