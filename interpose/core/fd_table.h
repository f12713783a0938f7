// What each file descriptor refers to, and where its file position is.
//
// Entries live in a two-level table indexed by descriptor (pages of 1024
// entries, mapped on first use), so a lookup on the read path is two loads and
// no lock. A descriptor the shim did not see being opened (inherited, from
// pipe() or socket(), opened before start-up) is identified on first use from
// fstat and /proc/self/fd, once.
//
// Positions belong to open file descriptions, which dup() shares; entries of
// duplicated descriptors point at one shared, reference-counted position, so
// read() offsets stay right through dup, dup2 and fdopen(dup(fd)).
//
//   FdEntry* f = FdLookup(fd);            // on a read or write
//   int64_t offset = FdAdvance(f, n);     // position before the call

#ifndef IOTAP_INTERPOSE_CORE_FD_TABLE_H_
#define IOTAP_INTERPOSE_CORE_FD_TABLE_H_

#include <stdint.h>

#include <atomic>

namespace iotap::interpose {

// Per-descriptor facts kept in FdEntry::bits.
enum FdBits : uint32_t {
  kFdKnown = 1u << 0,        // entry describes the current descriptor
  kFdSeekable = 1u << 1,     // positions are meaningful (regular file, block device)
  kFdAppend = 1u << 2,       // O_APPEND: write positions are the file's end
  kFdDirect = 1u << 3,       // O_DIRECT
  kFdTfRecord = 1u << 4,     // the TFRecord layer parses this descriptor's reads
  kFdTfProbe = 1u << 5,      // a regular file whose first read from offset 0
                             // the TFRecord layer checks for a record header
};

struct TfStream;  // tfrecord/tfrecord.cc

struct FilePosition {
  std::atomic<int64_t> offset{0};
  std::atomic<int32_t> refs{0};
  uint32_t next_free = 0;  // pool free list
};

struct FdEntry {
  std::atomic<uint32_t> file{0};  // interned string id
  std::atomic<uint32_t> bits{0};
  std::atomic<FilePosition*> position{nullptr};
  // Position of the stdio stream on this descriptor, which buffering keeps
  // apart from the descriptor's own; -1 if unknown.
  std::atomic<int64_t> stream_offset{-1};
  // The TFRecord parser of this descriptor, once it has read TFRecord bytes
  // (the TFRecord layer's: FdHooks).
  std::atomic<TfStream*> tfrecord{nullptr};
};

// Two-level table: kFdPages pages of kFdPageSize entries, mapped on first use.
inline constexpr int kFdPageBits = 10;
inline constexpr int kFdPageSize = 1 << kFdPageBits;
inline constexpr int kFdPages = 1024;  // descriptors below 2^20
extern std::atomic<FdEntry*> g_fd_pages[kFdPages];

FdEntry* FdLookupSlow(int fd, int64_t moved);

// The entry for `fd`, identifying the descriptor if it is not known yet.
// Returns null for negative or absurd descriptors. Call with busy set.
//
// Wrappers look descriptors up after the real call. A read or write at the
// position passes what it moved the position by (its result) as `moved`, so
// that a descriptor identified only now gets the position it had before the
// call, which the event then reports.
inline FdEntry* FdLookup(int fd, int64_t moved = 0) {
  if (static_cast<unsigned>(fd) < (static_cast<unsigned>(kFdPages) << kFdPageBits)) {
    FdEntry* page = g_fd_pages[fd >> kFdPageBits].load(std::memory_order_acquire);
    if (__builtin_expect(page != nullptr, 1)) {
      FdEntry* e = &page[fd & (kFdPageSize - 1)];
      if (__builtin_expect((e->bits.load(std::memory_order_acquire) & kFdKnown) != 0, 1)) return e;
    }
  }
  return FdLookupSlow(fd, moved);
}

// The entry for `fd` without identifying it (null if its page was never used).
FdEntry* FdPeek(int fd);

// Records that `fd` now refers to the file `file` opened with `open_flags`
// (an O_* mask; -1 if unknown) at position `offset`. `path` is the name the
// program gave (null if none), for layers that recognise files by name.
void FdOpened(int fd, uint32_t file, int open_flags, int64_t offset, const char* path);
// Records that `fd` was closed.
void FdClosed(int fd);
// Records that `newfd` is a duplicate of `oldfd`.
void FdDuplicated(int oldfd, int newfd);
// Marks every descriptor from `first` to `last` closed (close_range, closefrom).
void FdClosedRange(unsigned first, unsigned last);

// The position of `fd` before an operation that moves it by `moved` bytes
// (negative results move nothing), and moves it. -1 if not seekable.
int64_t FdAdvance(FdEntry* e, int64_t moved);
// Sets the position after lseek and similar.
void FdSetPosition(FdEntry* e, int64_t offset);

// The same for the position of a stdio stream on the descriptor.
int64_t StreamAdvance(FdEntry* e, int64_t moved);
void StreamSetPosition(FdEntry* e, int64_t offset);

// What the TFRecord layer (tfrecord/tfrecord.h) is told of descriptors. Set
// once at start-up (interpose/shim.cc), before recording begins; until then
// nothing is told.
struct FdHooks {
  // FdBits to add for a regular file being opened as `path` (null if
  // unknown).
  uint32_t (*open_bits)(const char* path);
  // `e` no longer describes what it did: closed, or now naming something
  // else.
  void (*released)(FdEntry* e);
};
void SetFdHooks(const FdHooks& hooks);

// Fork handlers (interpose/shim.cc). A child inherits the descriptors and so the
// table as it is; only the lock of the position pool needs care: it is taken
// before fork so no other thread is half-way through the pool when the child
// is made, released in the parent and made afresh in the child.
void LockFdTableForFork();
void UnlockFdTableAfterFork(bool child);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_FD_TABLE_H_
