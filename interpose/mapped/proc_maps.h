// File mappings the shim did not see being made, found in /proc/self/maps.
//
// The mmap wrappers see every mapping a program makes through libc. A page
// fault the sampler cannot place may still lie in a file mapping made
// otherwise: before the shim was loaded, by a raw mmap system call, or by a
// library linked against its own copy of libc. On such a miss the writer
// reads /proc/self/maps (at most once a second) and adds the data-file
// mappings it did not know to the mapping table (mappings.h), so their
// faults are attributed from then on.
//
//   if (LearnMappings(now)) { /* take a new snapshot and look again */ }

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
// `now_ns`, and adds the data-file mappings the table lacks. Returns whether
// it added any. Writer side only (it keeps its buffers and the time of the
// last read without a lock).
bool LearnMappings(uint64_t now_ns);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_PROC_MAPS_H_
