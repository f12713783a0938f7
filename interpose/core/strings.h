// Interned strings: paths and names are written once per trace file and
// events refer to them by id.
//
// The table is bounded: when it holds kMaxStrings entries or its arena is
// full, it is emptied after every pending string has been written, and ids go
// on counting up, so an id is never reused within a file and memory does not
// grow with the length of the run. A path seen again after that is simply
// written again under a new id.
//
//   uint32_t id = InternString(path, len, kKindPath);   // any thread
//   ...
//   EncodePendingStrings(&writer);   // the writer (file/packets.h)

#ifndef IOTAP_INTERPOSE_CORE_STRINGS_H_
#define IOTAP_INTERPOSE_CORE_STRINGS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::interpose {

// InternedString.Kind in trace.proto.
enum StringKind : uint8_t {
  kKindUnspecified = 0,
  kKindPath = 1,
  kKindPipe = 2,
  kKindSocket = 3,
  kKindDevice = 4,
  kKindAnon = 5,
  kKindDataset = 6,
  kKindMark = 7,
  kKindThreadName = 8,
  kKindCudaStream = 9,
  kKindPyFunction = 12,
  kKindPyStack = 13,
};

// Returns the id of `s` (n bytes), adding it if new. Never returns 0. Takes
// the table lock; call with the thread's busy flag set.
uint32_t InternString(const char* s, size_t n, StringKind kind);

// Makes `path` absolute against `dirfd` (AT_FDCWD or a directory descriptor)
// and the current directory, removes "." components, duplicate slashes and
// resolvable ".." components (lexically, as os.path.normpath does), then
// interns it as a path.
uint32_t InternPath(int dirfd, const char* path);

// The text InternPath interns: `path` made absolute and normalised, into
// `out` (capacity `cap`). Returns its length, or 0 if it does not fit (or
// `path` is null), when InternPath interns `path` as given.
size_t AbsolutePath(int dirfd, const char* path, char* out, size_t cap);

// Forgets the cached working directory (after chdir/fchdir).
void InvalidateCwd();

// One interned string, as the table holds it.
struct StringRecord {
  uint32_t id;
  StringKind kind;
  const uint8_t* bytes;
  uint32_t size;
};

// Hands the strings interned since the last call (or since the fork that
// made this process) to `take`, oldest first, holding the table lock, for as
// long as `take` accepts them: one it refuses (returns false) stays pending.
// Returns whether none remain. Caller holds the writer lock, which the
// table's emptying (ResetStringsIfFull) also takes.
bool TakePendingStrings(bool (*take)(const StringRecord& s, void* context), void* context);

// Locks for fork: the table lock is taken after the writer lock.
void LockStringsForFork();
void UnlockStringsAfterFork(bool child);

// How many times the table was emptied in this process (or before the fork
// that made it). An id stays defined in the trace file for good, but a fork
// child's file holds only the strings in the table at the fork: a caller
// that keeps ids across calls (the Python sampler, py_samples.cc) checks
// this and interns again when it changed.
uint32_t StringGeneration();

// Empties the table if it is full and every string in it was taken; the
// writer calls it after taking everything pending (WriterHooks::strings_full
// in core/recorder.h).
void ResetStringsIfFull();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_STRINGS_H_
