// STDIO streams. glibc's streams reach the kernel through internal calls that
// no wrapper sees, so every stream operation is recorded at this level, on the
// file of the stream's descriptor (fileno), with the stream's own position.

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/strings.h"
#include "interpose/core/trace_call.h"
#include "interpose/file/writer.h"
#include "interpose/posix/glibc_symbols.h"
#include "interpose/tfrecord/tfrecord.h"

extern "C" {
// glibc exports these old names for getc and putc; no header declares them.
int _IO_getc(FILE* stream);
int _IO_putc(int c, FILE* stream);
}

namespace iotap::interpose {
namespace {

IOTAP_REAL(fopen);
IOTAP_REAL(fopen64);
IOTAP_REAL(fdopen);
IOTAP_REAL(freopen);
IOTAP_REAL(freopen64);
IOTAP_REAL(fclose);
IOTAP_REAL(fread);
IOTAP_REAL(fread_unlocked);
IOTAP_REAL(__fread_chk);
IOTAP_REAL(__fread_unlocked_chk);
IOTAP_REAL(fwrite);
IOTAP_REAL(fwrite_unlocked);
IOTAP_REAL(fgets);
IOTAP_REAL(fgets_unlocked);
IOTAP_REAL(__fgets_chk);
IOTAP_REAL(__fgets_unlocked_chk);
IOTAP_REAL(fgetc);
IOTAP_REAL(getc);
IOTAP_REAL(_IO_getc);
IOTAP_REAL(fputc);
IOTAP_REAL(putc);
IOTAP_REAL(_IO_putc);
IOTAP_REAL(fputs);
IOTAP_REAL(vfprintf);
IOTAP_REAL(fseek);
IOTAP_REAL(fseeko);
IOTAP_REAL(fseeko64);
IOTAP_REAL(rewind);
IOTAP_REAL(fsetpos);
IOTAP_REAL(fsetpos64);
IOTAP_REAL(ftell);
IOTAP_REAL(ftello);
IOTAP_REAL(ftello64);
IOTAP_REAL(fgetpos);
IOTAP_REAL(fgetpos64);
IOTAP_REAL(fflush);
IOTAP_REAL(fileno);

// The stream's descriptor entry, or null for memory streams. A descriptor met
// here for the first time (a standard stream, an inherited one) has its
// kernel position past glibc's buffer, so the stream's position is asked
// from glibc, as it was before the call being recorded moved it by `moved`.
FdEntry* StreamEntry(FILE* stream, int64_t moved = 0) {
  if (stream == nullptr) return nullptr;
  int fd = real_fileno()(stream);
  if (fd < 0) return nullptr;
  FdEntry* seen = FdPeek(fd);
  bool known = seen != nullptr && (seen->bits.load(std::memory_order_acquire) & kFdKnown);
  FdEntry* f = FdLookup(fd);
  if (!known && f != nullptr) {
    int64_t position = real_ftello64()(stream);
    StreamSetPosition(f, position < 0 ? -1 : position - (moved > 0 ? moved : 0));
  }
  return f;
}

// O_* flags equivalent to an fopen mode string.
int ModeFlags(const char* mode) {
  if (mode == nullptr) return -1;
  int flags = 0;
  switch (mode[0]) {
    case 'r': flags = O_RDONLY; break;
    case 'w': flags = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': flags = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return -1;
  }
  for (const char* m = mode + 1; *m != '\0' && *m != ','; ++m) {
    if (*m == '+') flags = (flags & ~(O_RDONLY | O_WRONLY)) | O_RDWR;
    if (*m == 'x') flags |= O_EXCL;
    if (*m == 'e') flags |= O_CLOEXEC;
  }
  return flags;
}

// fopen, fopen64 and freopen: the stream's descriptor becomes the path's.
// freopen without a path opens the stream's own file again, from its start.
void RecordStreamOpen(TraceCall& call, Op op, const char* path, const char* mode, FILE* r) {
  RawEvent* e = call.Finish(op, r == nullptr);
  if (!call.active()) return;
  if (r == nullptr && call.saved_errno() == EFAULT) return;
  int fd = r != nullptr ? real_fileno()(r) : -1;
  uint32_t file = path != nullptr ? InternPath(AT_FDCWD, path) : FileOf(fd);
  int flags = ModeFlags(mode);
  if (fd >= 0) {
    FdOpened(fd, file, flags, 0, path);
    StreamSetPosition(FdPeek(fd), (flags >= 0 && (flags & O_APPEND)) ? -1 : 0);
  }
  if (e == nullptr) return;
  e->file = file;
  e->result = fd;
  e->aux = static_cast<uint32_t>(flags);
}

// A transfer of `bytes` at the stream's position (`requested` asked for).
// Returns the event (null if none is recorded) and its descriptor's entry.
RawEvent* RecordStreamIo(TraceCall& call, Op op, FILE* stream, uint64_t requested, int64_t bytes,
                         bool failed, bool is_write, uint64_t aux, FdEntry** entry = nullptr) {
  RawEvent* e = call.Finish(op, failed);
  if (e == nullptr) return nullptr;
  FdEntry* f = StreamEntry(stream, bytes);
  if (entry != nullptr) *entry = f;
  e->file = FileOf(f);
  e->requested = requested;
  e->result = bytes;
  e->aux = aux;
  bool append = is_write && f != nullptr &&
                (f->bits.load(std::memory_order_relaxed) & kFdAppend) != 0;
  int64_t offset = append ? -1 : StreamAdvance(f, bytes);
  if (offset >= 0) {
    e->offset = offset;
    e->flags |= kFlagHasOffset | kFlagOffsetTracked;
  }
  return e;
}

// fread and its variants return items; events count bytes. What they
// returned goes to the TFRecord layer.
size_t RecordFread(TraceCall& call, FILE* stream, void* buf, size_t size, size_t n, size_t r) {
  bool failed = r < n && stream != nullptr && ferror_unlocked(stream);
  FdEntry* f = nullptr;
  RawEvent* e = RecordStreamIo(call, kOpFread, stream, size * n, static_cast<int64_t>(size * r),
                               failed, false, 0, &f);
  if (e != nullptr) TfRecordAfterRead(call, f, e, buf);
  return r;
}

size_t RecordFwrite(TraceCall& call, FILE* stream, size_t size, size_t n, size_t r) {
  RecordStreamIo(call, kOpFwrite, stream, size * n, static_cast<int64_t>(size * r), r < n,
                 true, 0);
  return r;
}

char* RecordFgets(TraceCall& call, FILE* stream, char* buf, int n, char* r) {
  bool failed = r == nullptr && stream != nullptr && ferror_unlocked(stream);
  int64_t bytes = r != nullptr ? static_cast<int64_t>(strlen(r)) : 0;
  RecordStreamIo(call, kOpFgets, stream, n > 0 ? static_cast<uint64_t>(n) : 0, bytes, failed,
                 false, 0);
  return r;
}

int RecordFgetc(TraceCall& call, FILE* stream, int c) {
  bool failed = c == EOF && stream != nullptr && ferror_unlocked(stream);
  RecordStreamIo(call, kOpFgetc, stream, 1, c == EOF ? -1 : 1, failed, false,
                 c == EOF ? 0 : static_cast<uint64_t>(c));
  return c;
}

int RecordFputc(TraceCall& call, FILE* stream, int c, int r) {
  RecordStreamIo(call, kOpFputc, stream, 1, r == EOF ? -1 : 1, r == EOF, true,
                 static_cast<unsigned char>(c));
  return r;
}

// After a successful seek the stream's position is asked from glibc, which
// knows it without a system call right after a seek.
void RecordSeek(TraceCall& call, FILE* stream, int64_t offset, int whence, int r) {
  RawEvent* e = call.Finish(kOpFseek, r != 0);
  if (!call.active()) return;
  FdEntry* f = StreamEntry(stream);
  int64_t position = r == 0 ? real_ftello64()(stream) : -1;
  if (position >= 0) StreamSetPosition(f, position);
  if (e == nullptr) return;
  e->file = FileOf(f);
  e->requested = static_cast<uint64_t>(offset);
  e->result = r;
  e->aux = static_cast<uint64_t>(whence);
  if (position >= 0) {
    e->offset = position;
    e->flags |= kFlagHasOffset;
  }
}

int64_t RecordTell(TraceCall& call, FILE* stream, int64_t r) {
  RawEvent* e = call.Finish(kOpFtell, r < 0);
  if (!call.active()) return r;
  FdEntry* f = StreamEntry(stream);
  if (r >= 0) StreamSetPosition(f, r);
  if (e != nullptr) {
    e->file = FileOf(f);
    e->result = r;
  }
  return r;
}

int RecordGetpos(TraceCall& call, FILE* stream, int r) {
  RawEvent* e = call.Finish(kOpFtell, r != 0);
  if (!call.active()) return r;
  FdEntry* f = StreamEntry(stream);
  int64_t position = r == 0 ? real_ftello64()(stream) : -1;
  if (position >= 0) StreamSetPosition(f, position);
  if (e != nullptr) {
    e->file = FileOf(f);
    e->result = position;
  }
  return r;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT FILE* fopen(const char* path, const char* mode) {
  TraceCall call(kLayerStdio);
  FILE* r = real_fopen()(path, mode);
  RecordStreamOpen(call, kOpFopen, path, mode, r);
  return r;
}

IOTAP_EXPORT FILE* fopen64(const char* path, const char* mode) {
  TraceCall call(kLayerStdio);
  FILE* r = real_fopen64()(path, mode);
  RecordStreamOpen(call, kOpFopen, path, mode, r);
  return r;
}

IOTAP_EXPORT FILE* fdopen(int fd, const char* mode) noexcept {
  TraceCall call(kLayerStdio);
  FILE* r = real_fdopen()(fd, mode);
  RawEvent* e = call.Finish(kOpFdopen, r == nullptr);
  if (call.active()) {
    FdEntry* f = FdLookup(fd);
    // The stream starts where the descriptor is.
    if (r != nullptr) StreamSetPosition(f, PositionOf(f));
    if (e != nullptr) {
      e->file = FileOf(f);
      e->result = r != nullptr ? fd : -1;
      e->aux = static_cast<uint64_t>(fd);
    }
  }
  return r;
}

IOTAP_EXPORT FILE* freopen(const char* path, const char* mode, FILE* stream) {
  int old_fd = stream != nullptr ? real_fileno()(stream) : -1;
  TraceCall call(kLayerStdio);
  FILE* r = real_freopen()(path, mode, stream);
  if (call.active() && path != nullptr && old_fd >= 0 && InOwnProcess()) {
    tls_thread.busy = true;
    FdClosed(old_fd);
    tls_thread.busy = false;
  }
  RecordStreamOpen(call, kOpFreopen, path, mode, r);
  return r;
}

IOTAP_EXPORT FILE* freopen64(const char* path, const char* mode, FILE* stream) {
  int old_fd = stream != nullptr ? real_fileno()(stream) : -1;
  TraceCall call(kLayerStdio);
  FILE* r = real_freopen64()(path, mode, stream);
  if (call.active() && path != nullptr && old_fd >= 0 && InOwnProcess()) {
    tls_thread.busy = true;
    FdClosed(old_fd);
    tls_thread.busy = false;
  }
  RecordStreamOpen(call, kOpFreopen, path, mode, r);
  return r;
}

IOTAP_EXPORT int fclose(FILE* stream) {
  // The stream and its descriptor are gone after the call.
  int fd = stream != nullptr ? real_fileno()(stream) : -1;
  TraceCall call(kLayerStdio);
  uint32_t file = 0;
  if (call.active() && fd >= 0) file = FileOf(FdPeek(fd));
  int r = real_fclose()(stream);
  if (!call.active() || !InOwnProcess()) return r;
  if (RawEvent* e = call.Finish(kOpFclose, r != 0)) {
    e->file = file;
    e->result = r;
  }
  if (fd >= 0) FdClosed(fd);
  return r;
}

IOTAP_EXPORT size_t fread(void* ptr, size_t size, size_t n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFread(call, stream, ptr, size, n, real_fread()(ptr, size, n, stream));
}

IOTAP_EXPORT size_t fread_unlocked(void* ptr, size_t size, size_t n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFread(call, stream, ptr, size, n, real_fread_unlocked()(ptr, size, n, stream));
}

IOTAP_EXPORT size_t __fread_chk(void* ptr, size_t ptrlen, size_t size, size_t n,
                                FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFread(call, stream, ptr, size, n, real___fread_chk()(ptr, ptrlen, size, n, stream));
}

IOTAP_EXPORT size_t __fread_unlocked_chk(void* ptr, size_t ptrlen, size_t size, size_t n,
                                         FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFread(call, stream, ptr, size, n,
                     real___fread_unlocked_chk()(ptr, ptrlen, size, n, stream));
}

IOTAP_EXPORT size_t fwrite(const void* ptr, size_t size, size_t n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFwrite(call, stream, size, n, real_fwrite()(ptr, size, n, stream));
}

IOTAP_EXPORT size_t fwrite_unlocked(const void* ptr, size_t size, size_t n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFwrite(call, stream, size, n, real_fwrite_unlocked()(ptr, size, n, stream));
}

IOTAP_EXPORT char* fgets(char* buf, int n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgets(call, stream, buf, n, real_fgets()(buf, n, stream));
}

IOTAP_EXPORT char* fgets_unlocked(char* buf, int n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgets(call, stream, buf, n, real_fgets_unlocked()(buf, n, stream));
}

IOTAP_EXPORT char* __fgets_chk(char* buf, size_t size, int n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgets(call, stream, buf, n, real___fgets_chk()(buf, size, n, stream));
}

IOTAP_EXPORT char* __fgets_unlocked_chk(char* buf, size_t size, int n, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgets(call, stream, buf, n, real___fgets_unlocked_chk()(buf, size, n, stream));
}

IOTAP_EXPORT int fgetc(FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgetc(call, stream, real_fgetc()(stream));
}

IOTAP_EXPORT int getc(FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgetc(call, stream, real_getc()(stream));
}

IOTAP_EXPORT int _IO_getc(FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFgetc(call, stream, real__IO_getc()(stream));
}

IOTAP_EXPORT int fputc(int c, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFputc(call, stream, c, real_fputc()(c, stream));
}

IOTAP_EXPORT int putc(int c, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFputc(call, stream, c, real_putc()(c, stream));
}

IOTAP_EXPORT int _IO_putc(int c, FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordFputc(call, stream, c, real__IO_putc()(c, stream));
}

IOTAP_EXPORT int fputs(const char* s, FILE* stream) {
  TraceCall call(kLayerStdio);
  int r = real_fputs()(s, stream);
  if (call.active()) {
    uint64_t n = r == EOF && call.saved_errno() == EFAULT ? 0 : strlen(s);
    RecordStreamIo(call, kOpFputs, stream, n, r == EOF ? -1 : static_cast<int64_t>(n),
                   r == EOF, true, 0);
  }
  return r;
}

IOTAP_EXPORT int vfprintf(FILE* stream, const char* format, va_list ap) {
  TraceCall call(kLayerStdio);
  int r = real_vfprintf()(stream, format, ap);
  RecordStreamIo(call, kOpFprintf, stream, r < 0 ? 0 : static_cast<uint64_t>(r), r, r < 0,
                 true, 0);
  return r;
}

IOTAP_EXPORT int fprintf(FILE* stream, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  TraceCall call(kLayerStdio);
  int r = real_vfprintf()(stream, format, ap);
  va_end(ap);
  RecordStreamIo(call, kOpFprintf, stream, r < 0 ? 0 : static_cast<uint64_t>(r), r, r < 0,
                 true, 0);
  return r;
}

IOTAP_EXPORT int fseek(FILE* stream, long offset, int whence) {
  TraceCall call(kLayerStdio);
  int r = real_fseek()(stream, offset, whence);
  RecordSeek(call, stream, offset, whence, r);
  return r;
}

IOTAP_EXPORT int fseeko(FILE* stream, off_t offset, int whence) {
  TraceCall call(kLayerStdio);
  int r = real_fseeko()(stream, offset, whence);
  RecordSeek(call, stream, offset, whence, r);
  return r;
}

IOTAP_EXPORT int fseeko64(FILE* stream, off64_t offset, int whence) {
  TraceCall call(kLayerStdio);
  int r = real_fseeko64()(stream, offset, whence);
  RecordSeek(call, stream, offset, whence, r);
  return r;
}

IOTAP_EXPORT void rewind(FILE* stream) {
  TraceCall call(kLayerStdio);
  real_rewind()(stream);
  RecordSeek(call, stream, 0, SEEK_SET, 0);
}

IOTAP_EXPORT int fsetpos(FILE* stream, const fpos_t* pos) {
  TraceCall call(kLayerStdio);
  int r = real_fsetpos()(stream, pos);
  RecordSeek(call, stream, 0, SEEK_SET, r);
  return r;
}

IOTAP_EXPORT int fsetpos64(FILE* stream, const fpos64_t* pos) {
  TraceCall call(kLayerStdio);
  int r = real_fsetpos64()(stream, pos);
  RecordSeek(call, stream, 0, SEEK_SET, r);
  return r;
}

IOTAP_EXPORT long ftell(FILE* stream) {
  TraceCall call(kLayerStdio);
  return static_cast<long>(RecordTell(call, stream, real_ftell()(stream)));
}

IOTAP_EXPORT off_t ftello(FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordTell(call, stream, real_ftello()(stream));
}

IOTAP_EXPORT off64_t ftello64(FILE* stream) {
  TraceCall call(kLayerStdio);
  return RecordTell(call, stream, real_ftello64()(stream));
}

IOTAP_EXPORT int fgetpos(FILE* stream, fpos_t* pos) {
  TraceCall call(kLayerStdio);
  return RecordGetpos(call, stream, real_fgetpos()(stream, pos));
}

IOTAP_EXPORT int fgetpos64(FILE* stream, fpos64_t* pos) {
  TraceCall call(kLayerStdio);
  return RecordGetpos(call, stream, real_fgetpos64()(stream, pos));
}

IOTAP_EXPORT int fflush(FILE* stream) {
  TraceCall call(kLayerStdio);
  int r = real_fflush()(stream);
  if (RawEvent* e = call.Finish(kOpFflush, r != 0)) {
    e->file = FileOf(StreamEntry(stream));
    e->result = r;
  }
  return r;
}

IOTAP_EXPORT int fileno(FILE* stream) noexcept {
  TraceCall call(kLayerStdio);
  int r = real_fileno()(stream);
  if (RawEvent* e = call.Finish(kOpFileno, r < 0)) {
    e->file = r >= 0 ? FileOf(r) : 0;
    e->result = r;
  }
  return r;
}
