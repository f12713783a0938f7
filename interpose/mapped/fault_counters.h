// Per-thread fault and storage counters: what the shim records about reads
// through mappings when the kernel will not sample page faults.
//
// At every CPU sample, while the process has data mappings, the writer reads
// each thread's minor and major faults (/proc/self/task/TID/stat) and the
// bytes it caused to be read from storage (/proc/self/task/TID/io) into a
// FaultCounters packet. They cannot say which file a fault touched, nor
// tell a data file's faults from others; the analyzer uses their changes
// during data waits.

#ifndef IOTAP_INTERPOSE_MAPPED_FAULT_COUNTERS_H_
#define IOTAP_INTERPOSE_MAPPED_FAULT_COUNTERS_H_

#include <stdint.h>

namespace iotap::interpose {

// Threads read per sample at most; the rest are left out of it.
inline constexpr int kMaxCountedThreads = 256;

// The counters of one thread, from the text of its stat and io files.
struct ThreadCounters {
  uint32_t tid;
  uint64_t minor_faults;
  uint64_t major_faults;
  uint64_t read_bytes;
};

// Parses /proc/.../stat (minflt and majflt, the 10th and 12th fields) and
// /proc/.../io (read_bytes) into `out`. False if `stat` has no such fields.
bool ParseThreadCounters(const char* stat, const char* io, ThreadCounters* out);

// Writes a FaultCounters packet of every thread but `skip_tid` (the
// writer's). Under the writer lock.
void WriteFaultCounters(uint64_t now_ns, int skip_tid);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_FAULT_COUNTERS_H_
