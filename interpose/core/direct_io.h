// Reads and writes made as glibc makes them in a process with one thread.
//
// glibc's read, pread, write and pwrite are cancellation points once a
// process has a second thread: each call enables asynchronous cancellation
// around its system call, two atomic operations on the thread's descriptor
// (47 instructions, about 5 ns here). The shim's writer thread is such a
// second thread, so a program that never starts one (cat, dd, a DataLoader
// worker) would pay on every call what it does not pay untraced.
//
// While the program has no thread of its own and has never called
// pthread_cancel (posix/threads.cc reports both), nothing can cancel its one
// thread: the wrappers then make the system call themselves, exactly as
// glibc does untraced (the result, errno on failure, a signal's EINTR). Only
// where the real functions are libc's own: a tool preloaded after the shim
// keeps seeing the calls. x86-64 only; elsewhere glibc's function is called.
//
//   ssize_t r = DirectIo() ? DirectPread(fd, buf, n, offset) : real_pread()(fd, buf, n, offset);

#ifndef IOTAP_INTERPOSE_CORE_DIRECT_IO_H_
#define IOTAP_INTERPOSE_CORE_DIRECT_IO_H_

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>

#include <atomic>

namespace iotap::interpose {

// Why the wrappers call glibc's functions rather than the system calls (no
// bit: they need not).
enum DirectIoBlocker : uint32_t {
  kDirectUnchecked = 1,  // before CheckDirectIo
  kDirectNotLibc = 2,    // a real function is not libc's (another interposer)
  kDirectThreads = 4,    // the program started a thread
  kDirectCancel = 8,     // the program called pthread_cancel
  kDirectNoArch = 16,    // not x86-64
};

extern std::atomic<uint32_t> g_direct_io_blockers;

inline bool DirectIo() { return g_direct_io_blockers.load(std::memory_order_relaxed) == 0; }

// At start-up: whether read, pread, pread64, write, pwrite and pwrite64
// resolve to libc's own definitions.
void CheckDirectIo();

// The program started a thread / asked for a cancellation.
inline void BlockDirectIo(DirectIoBlocker why) {
  g_direct_io_blockers.fetch_or(why, std::memory_order_relaxed);
}

// In a fork child: the program's threads are gone (a cancellation asked for
// before still counts).
inline void DirectIoAfterForkChild() {
  g_direct_io_blockers.fetch_and(~static_cast<uint32_t>(kDirectThreads), std::memory_order_relaxed);
}

#if defined(__x86_64__)
inline long DirectSyscall(long nr, long a1, long a2, long a3, long a4) {
  long ret;
  register long r10 asm("r10") = a4;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10)
               : "rcx", "r11", "memory");
  return ret;
}
#else
inline long DirectSyscall(long, long, long, long, long) { return -ENOSYS; }
#endif

// The result as glibc returns it: -1 with errno set for a failure.
inline ssize_t DirectResult(long ret) {
  if (__builtin_expect(static_cast<unsigned long>(ret) > -4096ul, 0)) {
    errno = static_cast<int>(-ret);
    return -1;
  }
  return ret;
}

inline ssize_t DirectRead(int fd, void* buf, size_t n) {
  return DirectResult(
      DirectSyscall(SYS_read, fd, reinterpret_cast<long>(buf), static_cast<long>(n), 0));
}
inline ssize_t DirectPread(int fd, void* buf, size_t n, off64_t offset) {
  return DirectResult(
      DirectSyscall(SYS_pread64, fd, reinterpret_cast<long>(buf), static_cast<long>(n), offset));
}
inline ssize_t DirectWrite(int fd, const void* buf, size_t n) {
  return DirectResult(
      DirectSyscall(SYS_write, fd, reinterpret_cast<long>(buf), static_cast<long>(n), 0));
}
inline ssize_t DirectPwrite(int fd, const void* buf, size_t n, off64_t offset) {
  return DirectResult(
      DirectSyscall(SYS_pwrite64, fd, reinterpret_cast<long>(buf), static_cast<long>(n), offset));
}

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_DIRECT_IO_H_
