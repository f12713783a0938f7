#include "interpose/uring/uring_calls.h"

#include "interpose/core/io_event.h"

namespace iotap::interpose {

namespace {

bool Failed(long result, Failure failure) {
  return failure == Failure::kErrno ? result == -1 : result < 0;
}

// Finishes the call's event as the trace wants its result.
RawEvent* Finish(TraceCall& call, Op op, long result, Failure failure) {
  bool failed = Failed(result, failure);
  RawEvent* e = call.Finish(op, failure == Failure::kErrno && failed);
  if (e == nullptr) return nullptr;
  e->result = failed ? -1 : result;
  if (failed && failure == Failure::kNegative) e->error = static_cast<uint16_t>(-result);
  return e;
}

// The descriptors an IORING_REGISTER_FILES* argument names, from `first`.
void NoteFiles(int fd, unsigned opcode, const void* arg, unsigned nr_args) {
  switch (opcode) {
    case IORING_REGISTER_FILES:
      UringFilesRegistered(fd, 0, static_cast<const int*>(arg), nr_args);
      break;
    case IORING_UNREGISTER_FILES:
      UringFilesUnregistered(fd);
      break;
    case IORING_REGISTER_FILES_UPDATE: {
      const auto* u = static_cast<const struct io_uring_files_update*>(arg);
      if (u != nullptr) {
        UringFilesRegistered(fd, u->offset, reinterpret_cast<const int*>(u->fds), nr_args);
      }
      break;
    }
    case IORING_REGISTER_FILES2: {
      const auto* r = static_cast<const struct io_uring_rsrc_register*>(arg);
      if (r != nullptr && r->data != 0) {
        UringFilesRegistered(fd, 0, reinterpret_cast<const int*>(r->data), r->nr);
      }
      break;
    }
    case IORING_REGISTER_FILES_UPDATE2: {
      const auto* u = static_cast<const struct io_uring_rsrc_update2*>(arg);
      if (u != nullptr) {
        UringFilesRegistered(fd, u->offset, reinterpret_cast<const int*>(u->data), u->nr);
      }
      break;
    }
    default:
      break;
  }
}

}  // namespace

void RecordSetup(TraceCall& call, unsigned entries, const struct io_uring_params* params, int fd,
                 long result, Failure failure, bool raw) {
  RawEvent* e = Finish(call, kOpUringSetup, result, failure);
  if (!call.active()) return;
  if (raw && fd >= 0 && params != nullptr) UringRingSetUp(fd, *params);
  if (e == nullptr) return;
  e->file = fd >= 0 ? FileOf(fd) : 0;
  e->requested = entries;
  e->aux = params != nullptr ? params->flags : 0;
}

void RecordRegister(TraceCall& call, int fd, unsigned opcode, const void* arg, unsigned nr_args,
                    long result, Failure failure) {
  RawEvent* e = Finish(call, kOpUringRegister, result, failure);
  if (!call.active()) return;
  if (!Failed(result, failure)) NoteFiles(fd, opcode, arg, nr_args);
  if (e == nullptr) return;
  e->file = FileOf(fd);
  e->requested = nr_args;
  e->aux = opcode;
}

void RecordEnter(TraceCall& call, int fd, const RingView* view, const SubmitMark& mark,
                 unsigned wait_nr, long result, Failure failure) {
  RawEvent* e = Finish(call, kOpUringEnter, result, failure);
  if (!call.active()) return;
  if (e != nullptr) e->aux = wait_nr;
  if (fd >= 0) UringAfterCall(call, e, fd, view, mark);
}

}  // namespace iotap::interpose
