/* Shared pieces of symbol_caller, the program symbols_test.cc runs once per
 * symbol of libiotap.map, with and without the shim:
 *
 *   symbol_caller SYMBOL WORKDIR      (run with WORKDIR as the current directory)
 *
 * It creates a fixed set of files in WORKDIR, then runs the symbol's cases.
 * Each case brackets exactly one call (or a follow-up call that shows the
 * call's effect) between two markers, so the test can pick out the events the
 * call produced and nothing else:
 *
 *   begin("ok");                       // iotap_mark("case:ok") when traced
 *   ssize_t r = read(20, buf, 50);
 *   end(r, errno);                     // iotap_mark("end"), prints "ok ret=50 errno=0"
 *
 * Symbols are called by name. Where several symbols share a signature, a case
 * takes the symbol's address (`read`, `__read_chk`...), which binds to the
 * same dynamic symbol as a call would; fortified and old glibc entry points
 * are declared here by hand and called directly. The program is built
 * without _FORTIFY_SOURCE and builtins, so the compiler substitutes nothing.
 *
 * Files in WORKDIR after set-up:
 *   data.bin   4096 bytes, byte i = (i * 7 + 3) & 0xff
 *   text.txt   "line one\nline two\n" (18 bytes)
 *   dir/       holding dir/a ("abc", 3 bytes)
 *   link       symbolic link to data.bin (8 bytes)
 */

#ifndef IOTAP_TESTS_INTEGRATION_PROGRAMS_SYMBOL_CALLER_H_
#define IOTAP_TESTS_INTEGRATION_PROGRAMS_SYMBOL_CALLER_H_

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* One symbol: `run` performs its cases; `fn` is the symbol's address when
 * `run` serves several symbols of one signature. */
struct symbol_case {
  const char* name;
  void (*run)(const char* name, void* fn);
  void* fn;
};

/* Tables of the files symbol_caller_*.c, each ended by a null name. */
extern const struct symbol_case kIoCases[];
extern const struct symbol_case kOpenCases[];
extern const struct symbol_case kMetaCases[];
extern const struct symbol_case kStdioCases[];
extern const struct symbol_case kProcessCases[];
extern const struct symbol_case kWaitCases[];

/* The absolute path of this program, for exec and posix_spawn. */
extern const char* g_self;
extern const char* g_workdir;

/* Starts case `label` (a marker "case:LABEL" when traced) and sets errno to
 * EDOM, which successful calls leave alone. */
void begin(const char* label);
/* Ends the case (marker "end") and prints "LABEL ret=RET errno=ERR". */
void end(long ret, int err);
/* Prints one more line of what the case observed, for the untraced run to
 * match. */
void note(const char* format, ...) __attribute__((format(printf, 1, 2)));

/* Sum of `n` bytes, to compare data read with and without the shim. */
unsigned checksum(const void* data, size_t n);

/* Opens `path` with open(2) (traced, so the shim knows its name), moves the
 * descriptor to `target` and seeks to `offset`. */
int open_at(const char* path, int flags, int target, off_t offset);
/* The same with raw system calls, unseen by the shim. */
int raw_open_at(const char* path, int flags, int target);

/* Creates an empty file or a directory with raw system calls. */
void raw_touch(const char* path);
void raw_mkdir(const char* path);

/* Declarations the installed headers do not give (see glibc_symbols.h). */
extern ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen);
extern ssize_t __pread_chk(int fd, void* buf, size_t n, off_t offset, size_t buflen);
extern ssize_t __pread64_chk(int fd, void* buf, size_t n, off64_t offset, size_t buflen);
extern int __open_2(const char* path, int flags);
extern int __open64_2(const char* path, int flags);
extern int __openat_2(int dirfd, const char* path, int flags);
extern int __openat64_2(int dirfd, const char* path, int flags);
extern size_t __fread_chk(void* ptr, size_t ptrlen, size_t size, size_t n, FILE* stream);
extern size_t __fread_unlocked_chk(void* ptr, size_t ptrlen, size_t size, size_t n, FILE* stream);
extern char* __fgets_chk(char* buf, size_t size, int n, FILE* stream);
extern char* __fgets_unlocked_chk(char* buf, size_t size, int n, FILE* stream);
extern int _IO_getc(FILE* stream);
extern int _IO_putc(int c, FILE* stream);
extern int __xstat(int ver, const char* path, struct stat* buf);
extern int __xstat64(int ver, const char* path, struct stat64* buf);
extern int __lxstat(int ver, const char* path, struct stat* buf);
extern int __lxstat64(int ver, const char* path, struct stat64* buf);
extern int __fxstat(int ver, int fd, struct stat* buf);
extern int __fxstat64(int ver, int fd, struct stat64* buf);
extern int __fxstatat(int ver, int dirfd, const char* path, struct stat* buf, int flags);
extern int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* buf, int flags);

/* The version argument of the __xstat family on x86_64 (_STAT_VER_LINUX). */
#define STAT_VER 1

#endif /* IOTAP_TESTS_INTEGRATION_PROGRAMS_SYMBOL_CALLER_H_ */
