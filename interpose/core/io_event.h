// Helpers that fill the common fields of I/O events, shared by the POSIX and
// STDIO wrappers so that every read and write is described the same way.

#ifndef IOTAP_INTERPOSE_CORE_IO_EVENT_H_
#define IOTAP_INTERPOSE_CORE_IO_EVENT_H_

#include <stdint.h>

#include "interpose/core/fd_table.h"
#include "interpose/core/ops.h"
#include "interpose/core/ring.h"

// Marks a wrapper as exported (the build hides everything else).
#define IOTAP_EXPORT extern "C" __attribute__((visibility("default")))

// For the helpers a wrapper calls to record its event: inlined, so the
// TraceCall stays in registers (an out-of-line call also brings a stack
// protector check with it).
#define IOTAP_HOT inline __attribute__((always_inline))

namespace iotap::interpose {

// The interned file of a descriptor (0 if none).
inline uint32_t FileOf(FdEntry* f) {
  return f == nullptr ? 0 : f->file.load(std::memory_order_relaxed);
}
inline uint32_t FileOf(int fd) { return FileOf(FdLookup(fd)); }

// A transfer at the descriptor's current position, which it then advances
// (read, write, readv, ...). Appending writes have no known offset.
inline void FillTrackedIo(RawEvent* e, FdEntry* f, uint64_t requested, int64_t result,
                          bool is_write) {
  e->file = FileOf(f);
  e->requested = requested;
  e->result = result;
  bool append = is_write && f != nullptr &&
                (f->bits.load(std::memory_order_relaxed) & kFdAppend) != 0;
  int64_t offset = append ? -1 : FdAdvance(f, result);
  if (offset >= 0) {
    e->offset = offset;
    e->flags |= kFlagHasOffset | kFlagOffsetTracked;
  }
}

// A transfer at an explicit offset (pread, pwrite, ...).
inline void FillExplicitIo(RawEvent* e, FdEntry* f, int64_t offset, uint64_t requested,
                           int64_t result) {
  e->file = FileOf(f);
  e->requested = requested;
  e->result = result;
  e->offset = offset;
  e->flags |= kFlagHasOffset;
}

// The descriptor's position without moving it (-1 if not seekable).
inline int64_t PositionOf(FdEntry* f) { return FdAdvance(f, 0); }

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_IO_EVENT_H_
