// POSIX calls around the data: positioning, synchronisation, mappings,
// advice, and metadata (the stat family, directory scans, unlink, rename,
// mkdir). A dataset of many small files spends its time here.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/strings.h"
#include "interpose/core/trace_call.h"
#include "interpose/file/writer.h"
#include "interpose/posix/glibc_symbols.h"
#include "interpose/mapped/fault_sampler.h"
#include "interpose/mapped/mappings.h"
#include "interpose/uring/uring_rings.h"

namespace iotap::interpose {
namespace {

IOTAP_REAL(lseek);
IOTAP_REAL(lseek64);
IOTAP_REAL(fsync);
IOTAP_REAL(fdatasync);
IOTAP_REAL(mmap);
IOTAP_REAL(mmap64);
IOTAP_REAL(munmap);
IOTAP_REAL(mremap);
IOTAP_REAL(posix_fadvise);
IOTAP_REAL(posix_fadvise64);
IOTAP_REAL(stat);
IOTAP_REAL(stat64);
IOTAP_REAL(lstat);
IOTAP_REAL(lstat64);
IOTAP_REAL(fstat);
IOTAP_REAL(fstat64);
IOTAP_REAL(fstatat);
IOTAP_REAL(fstatat64);
IOTAP_REAL(statx);
IOTAP_REAL(__xstat);
IOTAP_REAL(__xstat64);
IOTAP_REAL(__lxstat);
IOTAP_REAL(__lxstat64);
IOTAP_REAL(__fxstat);
IOTAP_REAL(__fxstat64);
IOTAP_REAL(__fxstatat);
IOTAP_REAL(__fxstatat64);
IOTAP_REAL(opendir);
IOTAP_REAL(fdopendir);
IOTAP_REAL(readdir);
IOTAP_REAL(readdir64);
IOTAP_REAL(closedir);
IOTAP_REAL(unlink);
IOTAP_REAL(unlinkat);
IOTAP_REAL(rename);
IOTAP_REAL(renameat);
IOTAP_REAL(renameat2);
IOTAP_REAL(mkdir);
IOTAP_REAL(mkdirat);
IOTAP_REAL(rmdir);

// --- File mappings -------------------------------------------------------------

// A file mapping enters the table (munmap and faults name its file by it);
// a data file's starts the page-fault sampler; an io_uring descriptor's is
// one of its rings, which the io_uring layer reads.
void RecordMmap(TraceCall& call, void* r, size_t length, int prot, int flags, int fd,
                off64_t offset) {
  if ((flags & MAP_ANONYMOUS) || fd < 0) return;  // not a file: no event
  RawEvent* e = call.Finish(kOpMmap, r == MAP_FAILED);
  if (!call.active()) return;
  FdEntry* f = FdLookup(fd);
  if (r != MAP_FAILED) {
    UringRingMapped(fd, offset, r, length);
    bool data = IsDataFile(fd, prot);
    AddMapping(r, length, FileOf(f), offset, data, MonotonicNs());
    if (data) WatchFaults();
  }
  if (e == nullptr) return;
  FillExplicitIo(e, f, offset, length, r == MAP_FAILED ? -1 : 0);
  e->aux = static_cast<uint64_t>(prot);
}

// --- The stat family -----------------------------------------------------------
// aux carries the file's size on success, so the analyzer can tell a dataset
// of small files from its metadata calls alone.

void RecordPathStat(TraceCall& call, Op op, int dirfd, const char* path, int r,
                    int64_t size) {
  RawEvent* e = call.Finish(op, r != 0);
  if (e == nullptr) return;
  if (!(r != 0 && call.saved_errno() == EFAULT)) e->file = InternPath(dirfd, path);
  e->result = r;
  if (r == 0) e->aux = static_cast<uint64_t>(size);
}

void RecordFdStat(TraceCall& call, int fd, int r, int64_t size) {
  RawEvent* e = call.Finish(kOpFstat, r != 0);
  if (e == nullptr) return;
  e->file = FileOf(fd);
  e->result = r;
  if (r == 0) e->aux = static_cast<uint64_t>(size);
}

// fstatat and statx with an empty path and AT_EMPTY_PATH describe `dirfd`.
void RecordAtStat(TraceCall& call, Op op, int dirfd, const char* path, int flags, int r,
                  int64_t size) {
  RawEvent* e = call.Finish(op, r != 0);
  if (e == nullptr) return;
  bool bad_pointer = r != 0 && call.saved_errno() == EFAULT;
  if (!bad_pointer) {
    e->file = (flags & AT_EMPTY_PATH) && path != nullptr && path[0] == '\0'
                  ? FileOf(dirfd)
                  : InternPath(dirfd, path);
  }
  e->result = r;
  if (r == 0) e->aux = static_cast<uint64_t>(size);
}

void RecordPathOp(TraceCall& call, Op op, int dirfd, const char* path, int r) {
  RawEvent* e = call.Finish(op, r != 0);
  if (e == nullptr) return;
  if (!(r != 0 && call.saved_errno() == EFAULT)) e->file = InternPath(dirfd, path);
  e->result = r;
}

void RecordRename(TraceCall& call, int olddirfd, const char* oldpath, int newdirfd,
                  const char* newpath, int r) {
  RawEvent* e = call.Finish(kOpRename, r != 0);
  if (e == nullptr) return;
  if (!(r != 0 && call.saved_errno() == EFAULT)) {
    e->file = InternPath(olddirfd, oldpath);
    e->aux = InternPath(newdirfd, newpath);
  }
  e->result = r;
}

void RecordLseek(TraceCall& call, int fd, off64_t offset, int whence, off64_t r) {
  RawEvent* e = call.Finish(kOpLseek, r < 0);
  if (!call.active()) return;
  FdEntry* f = FdLookup(fd);
  if (r >= 0) FdSetPosition(f, r);
  if (e == nullptr) return;
  e->file = FileOf(f);
  e->offset = offset;
  e->flags |= kFlagHasOffset;
  e->aux = static_cast<uint64_t>(whence);
  e->result = r;
}

void RecordSync(TraceCall& call, Op op, int fd, int r) {
  if (RawEvent* e = call.Finish(op, r != 0)) {
    e->file = FileOf(fd);
    e->result = r;
  }
}

// posix_fadvise returns the error number instead of setting errno.
void RecordFadvise(TraceCall& call, int fd, off64_t offset, off64_t length, int advice,
                   int r) {
  if (RawEvent* e = call.Finish(kOpFadvise, false)) {
    FillExplicitIo(e, FdLookup(fd), offset, static_cast<uint64_t>(length), r == 0 ? 0 : -1);
    e->error = static_cast<uint16_t>(r);
    e->aux = static_cast<uint64_t>(advice);
  }
}

// --- Directories ---------------------------------------------------------------

void RecordOpendir(TraceCall& call, Op op, int fd_hint, const char* path, DIR* d) {
  RawEvent* e = call.Finish(op, d == nullptr);
  if (!call.active()) return;
  uint32_t file = 0;
  if (path != nullptr) {
    if (!(d == nullptr && call.saved_errno() == EFAULT)) file = InternPath(AT_FDCWD, path);
  } else {
    file = FileOf(fd_hint);
  }
  if (d != nullptr) FdOpened(dirfd(d), file, O_RDONLY | O_DIRECTORY, 0, nullptr);
  if (e == nullptr) return;
  e->file = file;
  e->result = d != nullptr ? dirfd(d) : -1;
}

// readdir signals the end and errors alike with null; errno tells them apart
// only if it was cleared first. The caller's errno is put back unless the
// call failed, so the program sees exactly what it would untraced.
template <typename Fn>
auto TracedReaddir(Fn real, DIR* d) {
  TraceCall call(kLayerPosix);
  int before = errno;
  errno = 0;
  auto* entry = real(d);
  bool failed = entry == nullptr && errno != 0;
  if (!failed) errno = before;
  if (RawEvent* e = call.Finish(kOpReaddir, failed)) {
    e->file = FileOf(dirfd(d));
    e->result = entry != nullptr ? 1 : 0;
  }
  return entry;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT off_t lseek(int fd, off_t offset, int whence) noexcept {
  TraceCall call(kLayerPosix);
  off_t r = real_lseek()(fd, offset, whence);
  RecordLseek(call, fd, offset, whence, r);
  return r;
}

IOTAP_EXPORT off64_t lseek64(int fd, off64_t offset, int whence) noexcept {
  TraceCall call(kLayerPosix);
  off64_t r = real_lseek64()(fd, offset, whence);
  RecordLseek(call, fd, offset, whence, r);
  return r;
}

IOTAP_EXPORT int fsync(int fd) {
  TraceCall call(kLayerPosix);
  int r = real_fsync()(fd);
  RecordSync(call, kOpFsync, fd, r);
  return r;
}

IOTAP_EXPORT int fdatasync(int fd) {
  TraceCall call(kLayerPosix);
  int r = real_fdatasync()(fd);
  RecordSync(call, kOpFdatasync, fd, r);
  return r;
}

IOTAP_EXPORT void* mmap(void* addr, size_t length, int prot, int flags, int fd,
                        off_t offset) noexcept {
  TraceCall call(kLayerPosix);
  void* r = real_mmap()(addr, length, prot, flags, fd, offset);
  RecordMmap(call, r, length, prot, flags, fd, offset);
  return r;
}

IOTAP_EXPORT void* mmap64(void* addr, size_t length, int prot, int flags, int fd,
                          off64_t offset) noexcept {
  TraceCall call(kLayerPosix);
  void* r = real_mmap64()(addr, length, prot, flags, fd, offset);
  RecordMmap(call, r, length, prot, flags, fd, offset);
  return r;
}

IOTAP_EXPORT int munmap(void* addr, size_t length) noexcept {
  if (!HasMappings()) return real_munmap()(addr, length);
  TraceCall call(kLayerPosix);
  if (!call.active()) return real_munmap()(addr, length);
  // Before the real call: faults until now belong to the mapping, and an
  // io_uring ring is read a last time while it is still there.
  uint64_t now = MonotonicNs();
  UringRingUnmapping(addr, length);
  int r = real_munmap()(addr, length);
  uint32_t file = r == 0 ? RemoveMappingRange(addr, length, now) : 0;
  if (file == 0) return r;
  if (RawEvent* e = call.Finish(kOpMunmap, false)) {
    e->file = file;
    e->requested = length;
  }
  return r;
}

// mremap(old, old_size, new_size, flags[, new_address]): the fifth argument
// is read only with MREMAP_FIXED, as glibc documents; a mapping the table
// knows follows its move.
IOTAP_EXPORT void* mremap(void* old_address, size_t old_size, size_t new_size, int flags,
                          ...) noexcept {
  void* new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_address = va_arg(ap, void*);
    va_end(ap);
  }
  if (!HasMappings()) return real_mremap()(old_address, old_size, new_size, flags, new_address);
  TraceCall call(kLayerPosix);
  void* r = real_mremap()(old_address, old_size, new_size, flags, new_address);
  if (!call.active()) return r;
  int64_t offset = 0;
  uint32_t file = 0;
  if (r != MAP_FAILED) file = MoveMapping(old_address, r, new_size, MonotonicNs(), &offset);
  if (file == 0) return r;
  if (RawEvent* e = call.Finish(kOpMremap, false)) {
    e->file = file;
    e->offset = offset;
    e->flags |= kFlagHasOffset;
    e->requested = new_size;
    e->aux = old_size;
  }
  return r;
}

IOTAP_EXPORT int posix_fadvise(int fd, off_t offset, off_t length, int advice) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_posix_fadvise()(fd, offset, length, advice);
  RecordFadvise(call, fd, offset, length, advice, r);
  return r;
}

IOTAP_EXPORT int posix_fadvise64(int fd, off64_t offset, off64_t length, int advice) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_posix_fadvise64()(fd, offset, length, advice);
  RecordFadvise(call, fd, offset, length, advice, r);
  return r;
}

IOTAP_EXPORT int stat(const char* path, struct stat* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_stat()(path, buf);
  RecordPathStat(call, kOpStat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int stat64(const char* path, struct stat64* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_stat64()(path, buf);
  RecordPathStat(call, kOpStat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int lstat(const char* path, struct stat* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_lstat()(path, buf);
  RecordPathStat(call, kOpLstat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int lstat64(const char* path, struct stat64* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_lstat64()(path, buf);
  RecordPathStat(call, kOpLstat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int fstat(int fd, struct stat* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_fstat()(fd, buf);
  RecordFdStat(call, fd, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int fstat64(int fd, struct stat64* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_fstat64()(fd, buf);
  RecordFdStat(call, fd, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int fstatat(int dirfd, const char* path, struct stat* buf, int flags) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_fstatat()(dirfd, path, buf, flags);
  RecordAtStat(call, kOpFstatat, dirfd, path, flags, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int fstatat64(int dirfd, const char* path, struct stat64* buf,
                           int flags) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_fstatat64()(dirfd, path, buf, flags);
  RecordAtStat(call, kOpFstatat, dirfd, path, flags, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int statx(int dirfd, const char* path, int flags, unsigned int mask,
                       struct statx* buf) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_statx()(dirfd, path, flags, mask, buf);
  int64_t size = r == 0 && (buf->stx_mask & STATX_SIZE) ? static_cast<int64_t>(buf->stx_size) : 0;
  RecordAtStat(call, kOpStatx, dirfd, path, flags, r, size);
  return r;
}

IOTAP_EXPORT int __xstat(int ver, const char* path, struct stat* buf) {
  TraceCall call(kLayerPosix);
  int r = real___xstat()(ver, path, buf);
  RecordPathStat(call, kOpStat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __xstat64(int ver, const char* path, struct stat64* buf) {
  TraceCall call(kLayerPosix);
  int r = real___xstat64()(ver, path, buf);
  RecordPathStat(call, kOpStat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __lxstat(int ver, const char* path, struct stat* buf) {
  TraceCall call(kLayerPosix);
  int r = real___lxstat()(ver, path, buf);
  RecordPathStat(call, kOpLstat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __lxstat64(int ver, const char* path, struct stat64* buf) {
  TraceCall call(kLayerPosix);
  int r = real___lxstat64()(ver, path, buf);
  RecordPathStat(call, kOpLstat, AT_FDCWD, path, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __fxstat(int ver, int fd, struct stat* buf) {
  TraceCall call(kLayerPosix);
  int r = real___fxstat()(ver, fd, buf);
  RecordFdStat(call, fd, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __fxstat64(int ver, int fd, struct stat64* buf) {
  TraceCall call(kLayerPosix);
  int r = real___fxstat64()(ver, fd, buf);
  RecordFdStat(call, fd, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __fxstatat(int ver, int dirfd, const char* path, struct stat* buf, int flags) {
  TraceCall call(kLayerPosix);
  int r = real___fxstatat()(ver, dirfd, path, buf, flags);
  RecordAtStat(call, kOpFstatat, dirfd, path, flags, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT int __fxstatat64(int ver, int dirfd, const char* path, struct stat64* buf,
                              int flags) {
  TraceCall call(kLayerPosix);
  int r = real___fxstatat64()(ver, dirfd, path, buf, flags);
  RecordAtStat(call, kOpFstatat, dirfd, path, flags, r, r == 0 ? buf->st_size : 0);
  return r;
}

IOTAP_EXPORT DIR* opendir(const char* path) {
  TraceCall call(kLayerPosix);
  DIR* d = real_opendir()(path);
  RecordOpendir(call, kOpOpendir, -1, path, d);
  return d;
}

IOTAP_EXPORT DIR* fdopendir(int fd) {
  TraceCall call(kLayerPosix);
  DIR* d = real_fdopendir()(fd);
  RecordOpendir(call, kOpOpendir, fd, nullptr, d);
  return d;
}

IOTAP_EXPORT struct dirent* readdir(DIR* d) { return TracedReaddir(real_readdir(), d); }

IOTAP_EXPORT struct dirent64* readdir64(DIR* d) { return TracedReaddir(real_readdir64(), d); }

IOTAP_EXPORT int closedir(DIR* d) {
  // The descriptor dies with the DIR; take it first.
  int fd = d != nullptr ? dirfd(d) : -1;
  TraceCall call(kLayerPosix);
  int r = real_closedir()(d);
  if (!call.active() || !InOwnProcess()) return r;
  if (RawEvent* e = call.Finish(kOpClosedir, r != 0)) {
    e->file = FileOf(FdPeek(fd));
    e->result = r;
  }
  if (fd >= 0) FdClosed(fd);
  return r;
}

IOTAP_EXPORT int unlink(const char* path) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_unlink()(path);
  RecordPathOp(call, kOpUnlink, AT_FDCWD, path, r);
  return r;
}

IOTAP_EXPORT int unlinkat(int dirfd, const char* path, int flags) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_unlinkat()(dirfd, path, flags);
  RecordPathOp(call, (flags & AT_REMOVEDIR) ? kOpRmdir : kOpUnlink, dirfd, path, r);
  return r;
}

IOTAP_EXPORT int rename(const char* oldpath, const char* newpath) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_rename()(oldpath, newpath);
  RecordRename(call, AT_FDCWD, oldpath, AT_FDCWD, newpath, r);
  return r;
}

IOTAP_EXPORT int renameat(int olddirfd, const char* oldpath, int newdirfd,
                          const char* newpath) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_renameat()(olddirfd, oldpath, newdirfd, newpath);
  RecordRename(call, olddirfd, oldpath, newdirfd, newpath, r);
  return r;
}

IOTAP_EXPORT int renameat2(int olddirfd, const char* oldpath, int newdirfd,
                           const char* newpath, unsigned int flags) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_renameat2()(olddirfd, oldpath, newdirfd, newpath, flags);
  RecordRename(call, olddirfd, oldpath, newdirfd, newpath, r);
  return r;
}

IOTAP_EXPORT int mkdir(const char* path, mode_t mode) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_mkdir()(path, mode);
  RecordPathOp(call, kOpMkdir, AT_FDCWD, path, r);
  return r;
}

IOTAP_EXPORT int mkdirat(int dirfd, const char* path, mode_t mode) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_mkdirat()(dirfd, path, mode);
  RecordPathOp(call, kOpMkdir, dirfd, path, r);
  return r;
}

IOTAP_EXPORT int rmdir(const char* path) noexcept {
  TraceCall call(kLayerPosix);
  int r = real_rmdir()(path);
  RecordPathOp(call, kOpRmdir, AT_FDCWD, path, r);
  return r;
}
