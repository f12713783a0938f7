// File mappings the shim did not see being made, found in /proc/self/maps.
//
// The mmap wrappers see every mapping a program makes through libc. A page
// fault the sampler cannot place may still lie in a file mapping made
// otherwise: before the shim was loaded, by a raw mmap system call, or by a
// library linked against its own copy of libc. On such a miss the writer
// asks the kernel about the one mapping holding the fault (the PROCMAP_QUERY
// ioctl of /proc/self/maps, Linux 6.11 and later) and adds it to the mapping
// table (mappings.h) if it is a data file's, so its faults are attributed
// from then on. Nearly every miss is anonymous memory (the heap, a
// copy-on-write fault after fork), so the ranges found not to be a data
// file's are remembered for a second. Where the kernel lacks the ioctl, the
// writer reads the whole of /proc/self/maps instead, at most once a second:
// 200 KB and a few milliseconds for a process that imported PyTorch, and
// sooner after a miss only as EarlyRereads allows: waiting out the second
// left every fault of a mapping made since (by a raw mmap) unplaced, and
// dropped, until then.
//
//   if (LearnMappingAt(addr, now, &budget)) { /* new snapshot, look again */ }

#ifndef IOTAP_INTERPOSE_MAPPED_PROC_MAPS_H_
#define IOTAP_INTERPOSE_MAPPED_PROC_MAPS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::interpose {

// One line of /proc/PID/maps: "START-END PERMS OFFSET DEV INODE   PATH".
struct MapsLine {
  uintptr_t start;
  uintptr_t end;
  int64_t offset;
  bool readable;
  bool executable;
  const char* path;  // into the line; empty for anonymous memory
  size_t path_size;
};

// Parses `line` (n bytes, no newline). False if it is not a maps line.
bool ParseMapsLine(const char* line, size_t n, MapsLine* out);

// Reads /proc/self/maps unless it was read less than a second before
// `now_ns` and EarlyRereads' wait has not passed, and adds the data-file
// mappings the table lacks. Returns whether it added any. Writer side only
// (it keeps its buffers and the time of the last read without a lock).
bool LearnMappings(uint64_t now_ns);

// A fault at `addr` lies in no mapping of the table: adds the data-file
// mapping holding it, if there is one, and returns whether it did. Spends
// one of `*queries` on a question to the kernel (none when the range is
// known not to be a data file's); with none left, or where the kernel lacks
// the ioctl, falls back on LearnMappings (once per drain: the caller passes
// the same `*queries` for every miss of one drain). Writer side only.
bool LearnMappingAt(uint64_t addr, uint64_t now_ns, int* queries);

// In a fork child: /proc/self/maps opened by the parent describes the
// parent; forgets it and the ranges learned there.
void ForgetProcMapsInChild();

// When /proc/self/maps may be read again, for a miss, within the second of
// the last read: not before `wait_ns()` after it, a wait that starts at
// kFirstWaitNs and doubles (up to a second) after each early read that
// found no new data mapping (misses in anonymous memory: a heap growing, a
// copy-on-write storm after fork), and starts again after one that found
// one. A process whose misses never stop reads it 4 times more in its
// first second than before (at 50, 150, 350 and 750 ms), then once a second
// as before: a DataLoader worker that imported PyTorch read it 5 times in an
// epoch of 1.5 s (under strace), where the rule before allowed 2; 0.44 ms a
// read here.
//
//   EarlyRereads early;
//   if (now - last_read >= early.wait_ns()) early.After(ReadTheWholeList());
class EarlyRereads {
 public:
  static constexpr uint64_t kFirstWaitNs = 50'000'000;
  static constexpr uint64_t kMaxWaitNs = 1'000'000'000;

  uint64_t wait_ns() const { return wait_ns_; }
  // An early read was made; `learned`: it added a data mapping.
  void After(bool learned) {
    wait_ns_ = learned ? kFirstWaitNs : (wait_ns_ * 2 < kMaxWaitNs ? wait_ns_ * 2 : kMaxWaitNs);
  }

 private:
  uint64_t wait_ns_ = kFirstWaitNs;
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_PROC_MAPS_H_
