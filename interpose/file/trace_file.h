// The process's trace file, created safely and written through a descriptor
// parked out of the program's way.
//
// The file is created owner-only (0600) with O_CREAT|O_EXCL|O_NOFOLLOW inside
// a directory opened with O_NOFOLLOW and owned by the effective user, so a
// symlink or a directory planted by someone else is never followed. Its
// descriptor is kept high in the table (kept_fd.h) so the program's own
// descriptor numbers are what they would be untraced; every write checks that
// the descriptor still names the same inode, and a program that closed every
// descriptor or dup2'd over ours makes the shim reopen the file by name
// (O_NOFOLLOW, same inode again), so a file swapped in its place is never
// written. A write that fails half-way is truncated back, so the file always
// ends with a complete frame.
//
// While a write is in progress, its descriptor is published (WritingFd),
// from before the inode check until after the last write: the shim's close,
// dup2, dup3, close_range and closefrom wrappers wait for the write to end
// rather than close that descriptor or put the application's file in its
// place between the check and the write, which would lose the frame or write
// it into the application's file. Untraced, the descriptor would not be open
// at all. While the file is being reopened the number is not known yet
// (kOpening): they wait for any descriptor then, but only as long as opening
// is quick, so that a hung file system does not hold up the job's every
// close.

#ifndef IOTAP_INTERPOSE_FILE_TRACE_FILE_H_
#define IOTAP_INTERPOSE_FILE_TRACE_FILE_H_

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <atomic>

#include "interpose/file/kept_fd.h"

namespace iotap::interpose {

class TraceFile {
 public:
  // Creates "<dir>/<host>.<pid>.<UTC start time>.iotap", making `dir` (one
  // level, mode 0700) if it does not exist. Returns 0 or an errno value.
  int Create(const char* dir, int pid, uint64_t realtime_ns);

  // Appends `n` bytes. Returns 0 or an errno value; on failure nothing of
  // `data` remains in the file.
  int Append(const uint8_t* data, size_t n);

  // Opens the file in the calling thread's descriptor table now rather than
  // at its first write: the writer thread, whose table is its own, opens it
  // by name, which the program could still change later. Returns 0 or an
  // errno value.
  int Open() { return Append(nullptr, 0); }

  bool created() const { return created_; }
  const char* path() const { return path_; }
  uint64_t size() const { return size_; }

  // Forgets the file and closes this process's descriptor for it (a fork
  // child makes its own; a write the parent had in progress is not the
  // child's to wait for).
  void Forget() {
    kept_.Close();
    created_ = false;
    writing_fd_.store(-1, std::memory_order_release);
    stopped_.store(false, std::memory_order_relaxed);
  }

  // The process is about to end in exit_group (_exit) on a thread that
  // could not take the shim's locks (a signal handler that interrupted the
  // shim). Linux ends a regular file's write early once a fatal signal is
  // pending, so a frame another thread is writing then would be cut, and
  // the reader would drop all of it. From here on a write that has not
  // started parks its thread instead (until exit_group ends it), and this
  // waits up to `wait_ns` for a write in progress on another thread to end.
  // A write the calling thread itself was in (the handler interrupted it
  // between two system calls) cannot be waited for.
  static void StopWritesForExit(uint64_t wait_ns);

  // The descriptor open on a trace file for a write in progress: -1 if
  // none, kOpening while the file is being opened (since OpeningSinceNs(),
  // CLOCK_MONOTONIC).
  static constexpr int kOpening = -2;
  static int WritingFd() { return writing_fd_.load(std::memory_order_acquire); }
  static uint64_t OpeningSinceNs() { return opening_since_ns_.load(std::memory_order_relaxed); }

 private:
  char path_[PATH_MAX] = {};
  KeptFd kept_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  uint64_t size_ = 0;
  bool created_ = false;

  static void PublishOpening();
  static constinit std::atomic<int> writing_fd_;
  static constinit std::atomic<bool> stopped_;
  static constinit std::atomic<uint64_t> opening_since_ns_;
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_FILE_TRACE_FILE_H_
