// The process's io_uring instances, as the io_uring layer needs them: where
// each ring's submission and completion queues lie, and its registered
// files.
//
// A ring is learnt in one of two ways:
//   - from the raw system calls (syscall(SYS_io_uring_setup, ...), as fio
//     makes them): the setup parameters give the queues' offsets, and the
//     mmap wrapper reports where the program mapped the ring descriptor
//     (UringRingMapped);
//   - from liburing's struct io_uring, which holds the same pointers
//     (liburing.cc fills a RingView from it; liburing 2.x makes its system
//     calls itself, so libc never sees them).
// Registered files come from io_uring_register(IORING_REGISTER_FILES...)
// and liburing's io_uring_register_files*, so that a request on a fixed
// file (IOSQE_FIXED_FILE) names the file.
//
// One lock (a leaf) guards the table; the queues are read under it, so that
// a ring is never unmapped while a thread reads it (the munmap wrapper takes
// it first).

#ifndef IOTAP_INTERPOSE_URING_URING_RINGS_H_
#define IOTAP_INTERPOSE_URING_URING_RINGS_H_

#include <linux/io_uring.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

namespace iotap::interpose {

inline constexpr int kMaxRings = 64;
inline constexpr uint32_t kMaxFixedFiles = 4096;

// Where one ring's queues are, for reading them.
struct RingView {
  int fd = -1;
  uint32_t setup_flags = 0;
  const uint32_t* sq_head = nullptr;  // the kernel's consumer index
  uint32_t sq_mask = 0;
  const uint32_t* sq_array = nullptr;  // null with IORING_SETUP_NO_SQARRAY
  const uint8_t* sqes = nullptr;
  const uint32_t* cq_tail = nullptr;  // the kernel's producer index
  uint32_t cq_mask = 0;
  const uint8_t* cqes = nullptr;

  bool complete() const {
    return sq_head != nullptr && sqes != nullptr && cq_tail != nullptr && cqes != nullptr;
  }
};

// A ring made by the io_uring_setup system call on descriptor `fd`, with
// the parameters it returned.
void UringRingSetUp(int fd, const struct io_uring_params& params);

// The mmap wrapper mapped descriptor `fd` at `offset` to `addr`: if it is a
// ring's, one of its queues now lies there.
void UringRingMapped(int fd, int64_t offset, void* addr, size_t length);

// The munmap wrapper, before unmapping [addr, addr+length): a ring mapped
// there is read a last time (its completions recorded) and forgotten.
void UringRingUnmapping(void* addr, size_t length);

// close(fd) or io_uring_queue_exit, before the real call: the ring on `fd`,
// if any, is read a last time (through `given`, liburing's view, when not
// null) and forgotten; its requests still in flight are recorded as
// incomplete.
void UringRingClosing(int fd, const RingView* given = nullptr);

// Whether `fd` is a ring this table knows: one atomic load while none is.
bool IsUringRing(int fd);

// Registered files: `fds` (count `n`, -1 for an empty slot) are the ring's
// fixed files from index `first` on; UringFilesUnregistered empties them.
void UringFilesRegistered(int ring_fd, uint32_t first, const int* fds, uint32_t n);
void UringFilesUnregistered(int ring_fd);
// The interned file of the ring's fixed file `index` (0 if unknown).
uint32_t UringFixedFile(int ring_fd, uint32_t index);

// The interned name of the ring's descriptor, for its events.
uint32_t UringRingFile(int ring_fd);

// Runs `fn(view, state, context)` holding the table's lock, with the view of
// the ring on `fd` (filled from the table for raw rings; `given` for
// liburing's, when not null) and its mutable state: the completion index up
// to which the shim has looked. False (fn not run) if the ring is unknown
// and no view was given, or the view is incomplete.
struct QueueState {
  uint32_t cq_seen;
  bool cq_seen_valid;
  // Requests taken from the submission queue during calls the shim saw,
  // since setup (raw rings, whose queue head starts at 0).
  uint32_t sq_taken;
};
bool WithRing(int fd, const RingView* given,
              void (*fn)(const RingView& view, QueueState* state, void* context), void* context);

// The table's lock, for whoever must hold it across several calls above.
void LockRingsTable();
void UnlockRingsTable();

// Fork handlers (interpose/shim.cc): the lock comes right after the writer's
// (it is held while paths are interned and descriptors looked up, never
// while events are recorded), and is held across fork.
// A child shares the parent's rings but none of its requests in flight.
void LockRingsTableForFork();
void UnlockRingsTableAfterFork(bool child);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_URING_URING_RINGS_H_
