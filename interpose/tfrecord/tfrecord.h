// The TFRecord layer: records found in the bytes a program reads.
//
// A regular file is watched when its name ends in .tfrecord or .tfrecords
// (optionally followed by .gz, .gzip, .zlib or .zz), or when the first read
// that starts at offset 0 returns a valid record header (a length and its
// masked CRC32C). The read wrappers (read, pread, readv, preadv and their
// variants, fread and its variants) hand what they returned to the
// descriptor's TfRecordParser; each record whose data a read completed
// becomes an OP_TFRECORD_RECORD event right after that read's event, linked
// to it by `parent` = the read's EventId(). Records the read delivered whole
// are grouped, which readers expand (one event per record would cost more
// than the read): a run of up to 255 of equal length is one OP_TFRECORD_RUN
// event, and records of differing lengths under 64 KiB go eight to an
// OP_TFRECORD_RECORDS event. The file
// itself is described once per trace file by a TfRecordFile packet; a file
// named as TFRecord that starts with a GZIP or ZLIB header is reported as
// compressed and not parsed (its records exist only after decompression, in
// the program's memory).
//
//   IOTAP_HOT void RecordRead(TraceCall& call, int fd, const void* buf, ...) {
//     if (RawEvent* e = call.Finish(kOpRead, r < 0)) {
//       FdEntry* f = FdLookup(fd);
//       FillTrackedIo(e, f, n, r, false);
//       TfRecordAfterRead(call, f, e, buf);
//     }
//   }
//
// Not seen: records read through mmap (no read call), and reads the program
// makes before the descriptor was recognised (an unnamed file read at other
// offsets before offset 0).

#ifndef IOTAP_INTERPOSE_TFRECORD_TFRECORD_H_
#define IOTAP_INTERPOSE_TFRECORD_TFRECORD_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "interpose/core/fd_table.h"
#include "interpose/core/io_event.h"
#include "interpose/core/trace_call.h"

namespace iotap::interpose {

// FdBits for a regular file being opened as `path` (may be null): kFdTfRecord
// for a TFRecord name, else kFdTfProbe; 0 when the TFRecord layer is off.
uint32_t TfRecordOpenBits(const char* path);

// Whether `path`'s last component has a TFRecord suffix.
bool HasTfRecordSuffix(const char* path);

// Out-of-line parts of TfRecordAfterRead.
void TfRecordFeed(CallEvents& events, FdEntry* f, int64_t offset, const void* data, size_t n);
void TfRecordFeedIov(CallEvents& events, FdEntry* f, int64_t offset, const struct iovec* iov,
                     int count, size_t n);

// Whether the read just recorded in `e` concerns the TFRecord layer: a watched
// descriptor, or a probed one read from offset 0. One load of bits the read
// path already touched.
IOTAP_HOT bool TfRecordWants(const FdEntry* f, const RawEvent* e) {
  if (f == nullptr || e->result <= 0 || !(e->flags & kFlagHasOffset)) return false;
  uint32_t bits = f->bits.load(std::memory_order_relaxed);
  if (__builtin_expect((bits & (kFdTfRecord | kFdTfProbe)) == 0, 1)) return false;
  return (bits & kFdTfRecord) != 0 || e->offset == 0;
}

// After a read's event `e` is filled: feeds what it returned to the parser.
IOTAP_HOT void TfRecordAfterRead(TraceCall& call, FdEntry* f, const RawEvent* e,
                                 const void* buf) {
  if (__builtin_expect(TfRecordWants(f, e), 0)) {
    // By value: `call` stays in registers (CallEvents).
    CallEvents events = call.Events();
    TfRecordFeed(events, f, e->offset, buf, static_cast<size_t>(e->result));
    call.Resume(events);
  }
}

IOTAP_HOT void TfRecordAfterReadv(TraceCall& call, FdEntry* f, const RawEvent* e,
                                  const struct iovec* iov, int count) {
  if (__builtin_expect(TfRecordWants(f, e), 0)) {
    CallEvents events = call.Events();
    TfRecordFeedIov(events, f, e->offset, iov, count, static_cast<size_t>(e->result));
    call.Resume(events);
  }
}

// The descriptor's parser goes back to the pool (close, or the descriptor
// now names something else).
void TfRecordRelease(FdEntry* f);

// In a fork child: parsers' locks are free again and every file is
// described anew in the child's trace.
void TfRecordAfterForkChild();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_TFRECORD_TFRECORD_H_
