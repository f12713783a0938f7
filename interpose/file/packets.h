// Encoders for the packets of trace.proto, written with WireWriter.
//
// Each function appends one complete `Trace.packet` field. They run on the
// writer path (under the writer lock), never on an application's hot path.

#ifndef IOTAP_INTERPOSE_FILE_PACKETS_H_
#define IOTAP_INTERPOSE_FILE_PACKETS_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/utsname.h>

#include "interpose/core/clock.h"
#include "interpose/core/ring.h"
#include "interpose/file/wire_writer.h"

namespace iotap::interpose {

// What the header packet says about the process.
struct ProcessInfo {
  int pid;
  int ppid;
  bool forked;  // ORIGIN_FORK rather than ORIGIN_EXEC
  uint64_t start_monotonic_ns;
  uint64_t start_realtime_ns;
};

// The wall clock as traces record it: CLOCK_REALTIME, shifted by the
// test-only IOTAP_TEST_CLOCK_OFFSET_NS (core/config.h), 0 unless set.
uint64_t TraceRealtimeNs();

// The host name traces record: the test-only IOTAP_TEST_HOSTNAME if set,
// else the node name (uname, into `uts`), or "" if there is none.
const char* TraceHostname(struct utsname* uts);

// ProcessHeader. Reads argv, host, executable and environment itself.
void EncodeProcessHeader(WireWriter* w, const ProcessInfo& info,
                         const ClockConverter& clock);

// Remembers argv for the header (from the library constructor).
void SetArgv(int argc, char** argv);

// ClockSnapshot taken now.
void EncodeClockSnapshot(WireWriter* w, uint64_t recorded, uint64_t dropped);

// ResourceSample taken now (getrusage of the whole process).
void EncodeResourceSample(WireWriter* w);

// In a fork child: closes the descriptors the samples read the parent's
// /proc files through.
void ResetProcFilesInChild();

// EndOfTrace.Reason in trace.proto.
enum class EndReason {
  kExit = 1,
  kUnderscoreExit = 2,
  kExec = 3,
  kUnloaded = 4,
  kAbort = 5,
};

// EndOfTrace; `reason` is an EndReason.
void EncodeEnd(WireWriter* w, int reason, int code, bool code_known,
               uint64_t recorded, uint64_t dropped);

void EncodeExecNotice(WireWriter* w, const char* path, bool spawn);

// StringTable packets of the strings interned and not yet written
// (core/strings.h), stopping before `w` would overflow and at about 64 KiB a
// packet. Returns false if strings remain; the caller writes `w` out and
// calls again. Caller holds the writer lock.
bool EncodePendingStrings(WireWriter* w);

// Scratch memory for EncodeChunk: one column at a time, 10 bytes per event
// (`capacity` bytes in all), and each event's start and end in time units,
// computed once (2 x capacity / 10 entries).
struct ChunkScratch {
  uint8_t* column;
  size_t capacity;
  int64_t* times;
};

// EventChunk of `count` events starting at ring slot `first` (wrapping).
// Returns false if `w` overflowed.
bool EncodeChunk(WireWriter* w, const Ring& ring, uint64_t first, uint32_t count,
                 uint64_t first_seq, uint64_t dropped_before,
                 const ClockConverter& clock, ChunkScratch* scratch);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_FILE_PACKETS_H_
