// The process's file mappings: address range to file, file offset, and
// whether the file holds data.
//
// The mmap, mmap64, mremap and munmap wrappers (posix/) keep the table; the
// page-fault sampler (fault_sampler.h) asks it which file and offset a
// faulting address fell in. Anonymous mappings (most of them: malloc) never
// enter it, and munmap skips the lookup entirely while it is empty. The table
// holds at most kMaxMappings mappings; later ones go unrecorded (their munmap
// then names no file, their faults no file).
//
// Faults are sampled and resolved later, on the writer thread, when the
// mapping they hit may be gone, or replaced by another at the same address
// (a loader that maps each sample file in turn). Data mappings therefore
// carry the CLOCK_MONOTONIC times they were made and removed, and removed
// ones are kept for a while (kRemovedHistory of them), so that a fault
// resolves against the mapping that was there when it happened.
//
//   AddMapping(addr, length, file, offset, IsDataFile(fd, prot));   // after mmap
//   if (HasMappings()) file = RemoveMappingRange(addr, length, now); // after munmap

#ifndef IOTAP_INTERPOSE_MAPPED_MAPPINGS_H_
#define IOTAP_INTERPOSE_MAPPED_MAPPINGS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::interpose {

inline constexpr int kMaxMappings = 4096;
inline constexpr int kRemovedHistory = 1024;

// A data mapping as the sampler sees it: live from added_ns to removed_ns
// (UINT64_MAX while it is still mapped).
struct DataMapping {
  uintptr_t start;
  uint64_t length;
  int64_t offset;  // file offset of `start`
  uint64_t added_ns;
  uint64_t removed_ns;
  uint32_t file;
};

// Whether the file behind `fd` holds data worth watching page faults for: a
// file outside the system's, the interpreter's and the libraries' trees
// (the analyzer's "data files"), mapped readable and not executable. Reads
// the descriptor's name from /proc/self/fd.
bool IsDataFile(int fd, int prot);

// The same test on a path, for mappings found in /proc/self/maps.
bool IsDataPath(const char* path);

// Remembers that `file` (an interned string id) is mapped at
// [addr, addr+length) from file offset `offset`, at `now_ns`.
void AddMapping(void* addr, size_t length, uint32_t file, int64_t offset, bool data,
                uint64_t now_ns);

// Forgets [addr, addr+length) wherever it overlaps recorded mappings,
// trimming or splitting them. Returns the file of the first mapping it
// overlapped (0 if none).
uint32_t RemoveMappingRange(void* addr, size_t length, uint64_t now_ns);

// mremap moved or resized the mapping at `old_addr`: the mapping that
// started there now spans [new_addr, new_addr+new_length). Returns its file
// (0 if the table has no mapping starting at `old_addr`) and its file offset
// in `offset`.
uint32_t MoveMapping(void* old_addr, void* new_addr, size_t new_length, uint64_t now_ns,
                     int64_t* offset);

// Whether the table has a mapping starting at `addr`.
bool HasMappingAt(void* addr);

// Whether any mapping is recorded: one atomic load, no lock.
bool HasMappings();

// How many data mappings are live now: one atomic load.
int LiveDataMappings();

// A number that changes whenever a data mapping is added or removed.
uint64_t DataMappingsVersion();

// Copies the data mappings that were live at any time at or after `since_ns`
// into `out` (at most `cap`), sorted by start address. Returns how many.
size_t SnapshotDataMappings(uint64_t since_ns, DataMapping* out, size_t cap);

// The mapping of `snapshot` (sorted, `n` entries, none longer than
// `max_length`) that held `addr` at `time_ns`, or null.
const DataMapping* FindDataMapping(const DataMapping* snapshot, size_t n, uint64_t max_length,
                                   uintptr_t addr, uint64_t time_ns);

// Fork handlers (interpose/shim.cc): the table's lock is taken before fork so
// no other thread holds it, half-way through an update, when the child is
// made; the parent releases it, the child starts with a fresh one.
void LockMappingsForFork();
void UnlockMappingsAfterFork(bool child);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_MAPPINGS_H_
