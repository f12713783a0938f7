// Declarations of glibc entry points that the installed headers do not
// declare in a shim build.
//
// Wrapper signatures normally come from the system headers through decltype.
// These are the exceptions, with the reason for each group:
// - The fortified functions (__read_chk, __open_2, ...) are declared only
//   when _FORTIFY_SOURCE is on, which would also turn read() and friends into
//   inline functions that the shim cannot define.
// - The __xstat family left the headers in glibc 2.33 but stays exported for
//   programs built against older glibc.
// - __libc_start_main has no public declaration.
// Each prototype is glibc's own (debug/*.c, io/*.c, csu/libc-start.c).

#ifndef IOTAP_INTERPOSE_POSIX_GLIBC_SYMBOLS_H_
#define IOTAP_INTERPOSE_POSIX_GLIBC_SYMBOLS_H_

#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>

extern "C" {

int __open_2(const char* path, int oflag);
int __open64_2(const char* path, int oflag);
int __openat_2(int dirfd, const char* path, int oflag);
int __openat64_2(int dirfd, const char* path, int oflag);

ssize_t __read_chk(int fd, void* buf, size_t nbytes, size_t buflen);
ssize_t __pread_chk(int fd, void* buf, size_t nbytes, off_t offset, size_t buflen);
ssize_t __pread64_chk(int fd, void* buf, size_t nbytes, off64_t offset, size_t buflen);
ssize_t __recv_chk(int fd, void* buf, size_t n, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void* buf, size_t n, size_t buflen, int flags,
                       struct sockaddr* addr, socklen_t* addr_len);

size_t __fread_chk(void* ptr, size_t ptrlen, size_t size, size_t n, FILE* stream);
size_t __fread_unlocked_chk(void* ptr, size_t ptrlen, size_t size, size_t n, FILE* stream);
char* __fgets_chk(char* buf, size_t size, int n, FILE* stream);
char* __fgets_unlocked_chk(char* buf, size_t size, int n, FILE* stream);

int __xstat(int ver, const char* path, struct stat* buf);
int __xstat64(int ver, const char* path, struct stat64* buf);
int __lxstat(int ver, const char* path, struct stat* buf);
int __lxstat64(int ver, const char* path, struct stat64* buf);
int __fxstat(int ver, int fd, struct stat* buf);
int __fxstat64(int ver, int fd, struct stat64* buf);
int __fxstatat(int ver, int dirfd, const char* path, struct stat* buf, int flags);
int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* buf, int flags);

int __libc_start_main(int (*main)(int, char**, char**), int argc, char** argv,
                      void (*init)(void), void (*fini)(void), void (*rtld_fini)(void),
                      void* stack_end);

}  // extern "C"

#endif  // IOTAP_INTERPOSE_POSIX_GLIBC_SYMBOLS_H_
