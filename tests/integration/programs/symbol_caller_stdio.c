/* symbol_caller cases for STDIO streams (interpose/posix/stdio.cc). A stream's
 * descriptor is printed from its FILE (no fileno call inside a case). */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/integration/programs/symbol_caller.h"

typedef FILE* (*fopen_fn)(const char*, const char*);
typedef FILE* (*freopen_fn)(const char*, const char*, FILE*);
typedef size_t (*fread_fn)(void*, size_t, size_t, FILE*);
typedef size_t (*fwrite_fn)(const void*, size_t, size_t, FILE*);
typedef char* (*fgets_fn)(char*, int, FILE*);
typedef int (*getc_fn)(FILE*);
typedef int (*putc_fn)(int, FILE*);
typedef int (*fseek_fn)(FILE*, long, int);
typedef long (*ftell_fn)(FILE*);

static long stream_fd(FILE* f) { return f != NULL ? f->_fileno : -1; }

static void print_file(const char* path) {
  char buf[256];
  FILE* f = fopen(path, "r");
  size_t n = f != NULL ? fread(buf, 1, sizeof(buf), f) : 0;
  if (f != NULL) fclose(f);
  note("%s: %.*s", path, (int)n, buf);
}

static void run_fopen(const char* name, void* fn) {
  fopen_fn call = fn;
  const char* labels[] = {"read", "write", "append", "enoent"};
  const char* paths[] = {"data.bin", "out.txt", "out.txt", "missing"};
  const char* modes[] = {"r", "w", "a+e", "r"};
  for (int i = 0; i < 4; ++i) {
    begin(labels[i]);
    FILE* f = call(paths[i], modes[i]);
    end(stream_fd(f), errno);
    if (f != NULL) fclose(f);
  }
}

static void run_fdopen(const char* name, void* fn) {
  char buf[16];
  open_at("data.bin", O_RDONLY, 20, 100);
  open_at("data.bin", O_RDONLY, 21, 0);
  begin("ok");
  FILE* f = fdopen(20, "r");
  end(stream_fd(f), errno);
  begin("fread");
  end(fread(buf, 1, 10, f), errno);
  begin("einval");
  end(stream_fd(fdopen(21, "w")), errno);
  begin("ebadf");
  end(stream_fd(fdopen(999, "r")), errno);
}

static void run_freopen(const char* name, void* fn) {
  freopen_fn call = fn;
  char buf[128];
  FILE* f = fopen("data.bin", "r");
  begin("ok");
  FILE* g = call("text.txt", "r", f);
  end(stream_fd(g), errno);
  begin("fgets");
  end(fgets(buf, 100, g) != NULL ? (long)strlen(buf) : -1, errno);
  /* Without a path, the stream's own file is opened again, from its start. */
  begin("same-file");
  g = call(NULL, "r", g);
  end(stream_fd(g), errno);
  begin("fgets-again");
  end(fgets(buf, 100, g) != NULL ? (long)strlen(buf) : -1, errno);
  note("line %s", buf);
  begin("enoent");
  end(stream_fd(call("missing", "r", g)), errno);
}

static void run_fclose(const char* name, void* fn) {
  char buf[8];
  FILE* f = fopen("data.bin", "r");
  int fd = (int)stream_fd(f);
  begin("ok");
  end(fclose(f), errno);
  raw_open_at("text.txt", O_RDONLY, fd);
  begin("reuse");
  end(read(fd, buf, 5), errno);
}

/* The fortified forms with the buffer size a fortified caller would pass. */
static size_t fread_chk(void* p, size_t size, size_t n, FILE* f) {
  return __fread_chk(p, 64, size, n, f);
}
static size_t fread_unlocked_chk(void* p, size_t size, size_t n, FILE* f) {
  return __fread_unlocked_chk(p, 64, size, n, f);
}
static char* fgets_chk(char* buf, int n, FILE* f) { return __fgets_chk(buf, 128, n, f); }
static char* fgets_unlocked_chk(char* buf, int n, FILE* f) {
  return __fgets_unlocked_chk(buf, 128, n, f);
}

static void run_fread(const char* name, void* fn) {
  fread_fn call = fn;
  char buf[64];
  FILE* f = fopen("data.bin", "r");
  FILE* w = fopen("out.txt", "w");
  fseek(f, 100, SEEK_SET);
  begin("ok");
  end(call(buf, 10, 5, f), errno);
  note("sum %u", checksum(buf, 50));
  begin("next");
  end(call(buf, 10, 5, f), errno);
  fseek(f, 4090, SEEK_SET);
  begin("eof");
  end(call(buf, 1, 50, f), errno);
  begin("ebadf");
  end(call(buf, 1, 10, w), errno);
  /* A stream on a descriptor the shim never saw opened, as `prog < file`
   * gives: glibc fills its buffer before the shim first looks. */
  raw_open_at("data.bin", O_RDONLY, 0);
  begin("stdin");
  end(call(buf, 1, 10, stdin), errno);
  begin("stdin-next");
  end(call(buf, 1, 10, stdin), errno);
}

static void run_fwrite(const char* name, void* fn) {
  fwrite_fn call = fn;
  FILE* w = fopen("out.txt", "w");
  FILE* r = fopen("data.bin", "r");
  FILE* a = fopen("app.txt", "a");
  begin("ok");
  end(call("hello", 1, 5, w), errno);
  begin("next");
  end(call("abc", 1, 3, w), errno);
  begin("ebadf");
  end(call("x", 1, 1, r), errno);
  begin("append");
  end(call("xy", 1, 2, a), errno);
  fclose(w);
  fclose(a);
  print_file("out.txt");
  print_file("app.txt");
}

static void run_fgets(const char* name, void* fn) {
  fgets_fn call = fn;
  const char* labels[] = {"first", "second", "eof"};
  char buf[128];
  FILE* f = fopen("text.txt", "r");
  for (int i = 0; i < 3; ++i) {
    begin(labels[i]);
    end(call(buf, 100, f) != NULL ? (long)strlen(buf) : -1, errno);
  }
}

static void run_fgetc(const char* name, void* fn) {
  getc_fn call = fn;
  FILE* f = fopen("text.txt", "r");
  begin("first");
  end(call(f), errno);
  begin("second");
  end(call(f), errno);
  fseek(f, 0, SEEK_END);
  begin("eof");
  end(call(f), errno);
}

static void run_fputc(const char* name, void* fn) {
  putc_fn call = fn;
  FILE* w = fopen("out.txt", "w");
  FILE* r = fopen("data.bin", "r");
  begin("ok");
  end(call('A', w), errno);
  begin("next");
  end(call('B', w), errno);
  begin("ebadf");
  end(call('x', r), errno);
  fclose(w);
  print_file("out.txt");
}

static int call_vfprintf(FILE* f, const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  int r = vfprintf(f, format, ap);
  va_end(ap);
  return r;
}

/* fputs, fprintf and vfprintf. */
static void run_fputs(const char* name, void* fn) {
  FILE* w = fopen("out.txt", "w");
  FILE* r = fopen("data.bin", "r");
  FILE* streams[] = {w, r};
  const char* labels[] = {"ok", "ebadf"};
  for (int i = 0; i < 2; ++i) {
    begin(labels[i]);
    if (strcmp(name, "fputs") == 0) {
      end(fputs("hello", streams[i]), errno);
    } else if (strcmp(name, "fprintf") == 0) {
      end(fprintf(streams[i], "x=%d;", 42), errno);
    } else {
      end(call_vfprintf(streams[i], "x=%d;", 42), errno);
    }
  }
  fclose(w);
  print_file("out.txt");
}

/* fseek, fseeko, fseeko64, rewind, fsetpos, fsetpos64: each case is a seek,
 * then a read that shows where the stream went. */
static void run_fseek(const char* name, void* fn) {
  fseek_fn call = fn;
  char buf[16];
  FILE* f = fopen("data.bin", "r");
  if (call == NULL) {
    fpos_t pos;
    fpos64_t pos64;
    fseek(f, 100, SEEK_SET);
    fgetpos(f, &pos);
    fgetpos64(f, &pos64);
    int is_rewind = strcmp(name, "rewind") == 0;
    if (!is_rewind) fseek(f, 0, SEEK_SET);
    begin("ok");
    if (is_rewind) {
      rewind(f);
      end(0, errno);
    } else if (strcmp(name, "fsetpos") == 0) {
      end(fsetpos(f, &pos), errno);
    } else {
      end(fsetpos64(f, &pos64), errno);
    }
    begin("fread");
    end(fread(buf, 1, 10, f), errno);
    return;
  }
  begin("set");
  end(call(f, 100, SEEK_SET), errno);
  begin("fread");
  end(fread(buf, 1, 10, f), errno);
  begin("cur");
  end(call(f, 10, SEEK_CUR), errno);
  begin("end");
  end(call(f, -10, SEEK_END), errno);
  begin("einval");
  end(call(f, -1, SEEK_SET), errno);
}

/* ftell, ftello, ftello64, fgetpos, fgetpos64. */
static void run_ftell(const char* name, void* fn) {
  ftell_fn call = fn;
  char buf[16];
  fpos_t pos;
  fpos64_t pos64;
  FILE* f = fopen("data.bin", "r");
  fseek(f, 100, SEEK_SET);
  const char* labels[] = {"ok", "after-read"};
  for (int i = 0; i < 2; ++i) {
    if (i == 1) fread(buf, 1, 10, f);
    begin(labels[i]);
    if (call != NULL) {
      end(call(f), errno);
    } else if (strcmp(name, "fgetpos") == 0) {
      end(fgetpos(f, &pos), errno);
    } else {
      end(fgetpos64(f, &pos64), errno);
    }
  }
}

static void run_fflush(const char* name, void* fn) {
  FILE* w = fopen("out.txt", "w");
  fwrite("hello", 1, 5, w);
  begin("ok");
  end(fflush(w), errno);
  begin("all");
  end(fflush(NULL), errno);
  print_file("out.txt");
}

static void run_fileno(const char* name, void* fn) {
  FILE* f = fopen("data.bin", "r");
  begin("ok");
  end(fileno(f), errno);
}

const struct symbol_case kStdioCases[] = {
    {"fopen", run_fopen, fopen},
    {"fopen64", run_fopen, fopen64},
    {"fdopen", run_fdopen, NULL},
    {"freopen", run_freopen, freopen},
    {"freopen64", run_freopen, freopen64},
    {"fclose", run_fclose, NULL},
    {"fread", run_fread, fread},
    {"fread_unlocked", run_fread, fread_unlocked},
    {"__fread_chk", run_fread, fread_chk},
    {"__fread_unlocked_chk", run_fread, fread_unlocked_chk},
    {"fwrite", run_fwrite, fwrite},
    {"fwrite_unlocked", run_fwrite, fwrite_unlocked},
    {"fgets", run_fgets, fgets},
    {"fgets_unlocked", run_fgets, fgets_unlocked},
    {"__fgets_chk", run_fgets, fgets_chk},
    {"__fgets_unlocked_chk", run_fgets, fgets_unlocked_chk},
    {"fgetc", run_fgetc, fgetc},
    {"getc", run_fgetc, getc},
    {"_IO_getc", run_fgetc, _IO_getc},
    {"fputc", run_fputc, fputc},
    {"putc", run_fputc, putc},
    {"_IO_putc", run_fputc, _IO_putc},
    {"fputs", run_fputs, NULL},
    {"fprintf", run_fputs, NULL},
    {"vfprintf", run_fputs, NULL},
    {"fseek", run_fseek, fseek},
    {"fseeko", run_fseek, fseeko},
    {"fseeko64", run_fseek, fseeko64},
    {"rewind", run_fseek, NULL},
    {"fsetpos", run_fseek, NULL},
    {"fsetpos64", run_fseek, NULL},
    {"ftell", run_ftell, ftell},
    {"ftello", run_ftell, ftello},
    {"ftello64", run_ftell, ftello64},
    {"fgetpos", run_ftell, NULL},
    {"fgetpos64", run_ftell, NULL},
    {"fflush", run_fflush, NULL},
    {"fileno", run_fileno, NULL},
    {NULL, NULL, NULL},
};
