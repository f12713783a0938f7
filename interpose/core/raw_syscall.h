// RawSyscall: syscall(2) with every argument passed as a long.
//
// syscall() is variadic and reads six longs. An int passed to it fills only
// half of its slot, and the sixth system-call argument travels on the stack,
// where the other half is whatever the stack held: an mmap of a perf buffer
// whose offset 0 was an int failed with EINVAL in forked children
// (interpose/README.md, "Raw system calls"). RawSyscall widens each argument
// (integers by value, pointers by address) before the call, so no call site
// can get it wrong.
//
//   long addr = RawSyscall(SYS_mmap, nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);

#ifndef IOTAP_INTERPOSE_CORE_RAW_SYSCALL_H_
#define IOTAP_INTERPOSE_CORE_RAW_SYSCALL_H_

#include <sys/syscall.h>
#include <unistd.h>

#include <type_traits>

namespace iotap::interpose {

namespace internal {

template <typename T>
inline long SyscallArgument(T value) {
  if constexpr (std::is_pointer_v<T> || std::is_null_pointer_v<T>) {
    return reinterpret_cast<long>(value);
  } else {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>,
                  "a system call takes integers and pointers");
    return static_cast<long>(value);
  }
}

}  // namespace internal

template <typename... Args>
inline long RawSyscall(long number, Args... args) {
  static_assert(sizeof...(Args) <= 6, "a system call takes at most six arguments");
  return syscall(number, internal::SyscallArgument(args)...);
}

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_RAW_SYSCALL_H_
