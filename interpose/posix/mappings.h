// The files behind the process's file mappings.
//
// munmap is given only an address; the file a mapping came from is kept here
// from its mmap. Anonymous mappings (most of them: malloc) never enter the
// table, and munmap skips the lookup entirely while it is empty. The table
// holds at most kMaxMappings mappings; later ones go unrecorded (their munmap
// then names no file).
//
//   AddMapping(addr, length, file);              // after a file mmap
//   if (HasMappings()) file = TakeMapping(addr, length);   // after munmap

#ifndef IOTAP_INTERPOSE_POSIX_MAPPINGS_H_
#define IOTAP_INTERPOSE_POSIX_MAPPINGS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::interpose {

inline constexpr int kMaxMappings = 4096;

// Remembers that `file` (an interned string id) is mapped at [addr, addr+length).
void AddMapping(void* addr, size_t length, uint32_t file);

// The file mapped at `addr` (0 if none); forgets the mapping if the whole of
// it is unmapped.
uint32_t TakeMapping(void* addr, size_t length);

// Whether any mapping is recorded: one atomic load, no lock.
bool HasMappings();

// Fork handlers (interpose/shim.cc): the table's lock is taken before fork so no
// other thread holds it, half-way through an update, when the child is made;
// the parent releases it, the child starts with a fresh one.
void LockMappingsForFork();
void UnlockMappingsAfterFork(bool child);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_POSIX_MAPPINGS_H_
