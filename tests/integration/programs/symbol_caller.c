/* symbol_caller: calls one intercepted symbol the way a program would. See
 * symbol_caller.h for the protocol; the cases live in symbol_caller_*.c, one
 * file per family, and the marker API's cases here. */

#define _GNU_SOURCE
#include "tests/integration/programs/symbol_caller.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/iotap.h"

const char* g_self;
const char* g_workdir;

static const char* g_label = "";

void begin(const char* label) {
  g_label = label;
  if (iotap_mark) {
    char name[128];
    snprintf(name, sizeof(name), "case:%s", label);
    iotap_mark(name);
  }
  /* A value no successful call sets, so that a shim which changed errno
   * behind a successful call shows in the output. */
  errno = EDOM;
}

void end(long ret, int err) {
  if (iotap_mark) iotap_mark("end");
  printf("%s ret=%ld errno=%d\n", g_label, ret, err);
}

void note(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  printf("  ");
  vprintf(format, ap);
  printf("\n");
  va_end(ap);
}

unsigned checksum(const void* data, size_t n) {
  const unsigned char* p = data;
  unsigned sum = 0;
  for (size_t i = 0; i < n; ++i) sum = sum * 31 + p[i];
  return sum;
}

static void die(const char* what) {
  fprintf(stderr, "symbol_caller: %s: %s\n", what, strerror(errno));
  exit(100);
}

int open_at(const char* path, int flags, int target, off_t offset) {
  int fd = open(path, flags, 0644);
  if (fd < 0) die(path);
  if (fd != target) {
    if (dup2(fd, target) != target) die("dup2");
    close(fd);
  }
  if (offset != 0 && lseek(target, offset, SEEK_SET) != offset) die("lseek");
  return target;
}

int raw_open_at(const char* path, int flags, int target) {
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, flags, 0644);
  if (fd < 0) die(path);
  if (fd != target) {
    if (syscall(SYS_dup2, fd, target) != target) die("dup2");
    syscall(SYS_close, fd);
  }
  return target;
}

/* The fixture, written with raw system calls so that the shim sees none of
 * it. */
static void raw_write_file(const char* path, const void* data, size_t n) {
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || (n != 0 && syscall(SYS_write, fd, data, n) != (long)n)) die(path);
  syscall(SYS_close, fd);
}

void raw_touch(const char* path) { raw_write_file(path, "", 0); }

void raw_mkdir(const char* path) {
  if (syscall(SYS_mkdirat, AT_FDCWD, path, 0755) != 0) die(path);
}

static void set_up(void) {
  unsigned char data[4096];
  for (size_t i = 0; i < sizeof(data); ++i) data[i] = (unsigned char)((i * 7 + 3) & 0xff);
  raw_write_file("data.bin", data, sizeof(data));
  raw_write_file("text.txt", "line one\nline two\n", 18);
  raw_mkdir("dir");
  raw_write_file("dir/a", "abc", 3);
  if (syscall(SYS_symlinkat, "data.bin", AT_FDCWD, "link") != 0) die("link");
}

/* --- The marker API ----------------------------------------------------------
 * Untraced, the weak references are null and the calls are skipped. */

static void run_step_begin(const char* name, void* fn) {
  begin("ok");
  if (iotap_step_begin) iotap_step_begin(7);
  end(0, errno);
}

static void run_step_end(const char* name, void* fn) {
  begin("ok");
  if (iotap_step_end) iotap_step_end(7);
  end(0, errno);
}

static void run_mark(const char* name, void* fn) {
  begin("ok");
  if (iotap_mark) iotap_mark("hello");
  end(0, errno);
}

/* A span the caller timed: a data wait of step 7, 1 ms long. Its result is
 * not printed (untraced it is skipped, traced it returns 0). */
static void run_span(const char* name, void* fn) {
  begin("ok");
  if (iotap_span) iotap_span(IOTAP_SPAN_DATA_WAIT, 7, 1000000000, 1001000000);
  end(0, errno);
}

/* The Python sampler's entry points, called as the helper calls them: a
 * function and a stack interned, then one sample of thread 4242 (any tid is
 * taken as given) that used 1.5 ms of CPU in a 10 ms window. Interning
 * records no event. Untraced, the calls are skipped. */
static void run_py_intern(const char* name, void* fn) {
  begin("ok");
  static const char kFunction[] = "Worker.load\0/srv/job/worker.py\0" "12";
  if (iotap_py_intern) iotap_py_intern(IOTAP_PY_FUNCTION, kFunction, sizeof(kFunction) - 1);
  end(0, errno);
}

static void run_py_sample(const char* name, void* fn) {
  begin("ok");
  if (iotap_py_intern && iotap_py_sample) {
    /* One frame: function id 5 at line 11 (ids are not checked here). */
    static const char kStack[] = {5, 11};
    long long stack = iotap_py_intern(IOTAP_PY_STACK, kStack, sizeof(kStack));
    iotap_py_sample(4242, (unsigned)stack, 1500000, 1000000000, 1010000000,
                    (unsigned)(stack >> 32));
  }
  end(0, errno);
}

static void run_py_sampler(const char* name, void* fn) {
  begin("ok");
  if (iotap_py_sampler) iotap_py_sampler(IOTAP_PY_SAMPLER_STARTED, 100, "CPython 3.11");
  end(0, errno);
}

/* Outside a Python interpreter the stack reader finds none of CPython's
 * functions: -1, and nothing recorded (untraced, the weak symbol is null). */
static void run_py_stacks(const char* name, void* fn) {
  begin("outside-python");
  unsigned long idents[1] = {1};
  long long stacks[1] = {7};
  int r = iotap_py_stacks ? iotap_py_stacks(idents, 1, stacks) : -1;
  end(r, errno);
}

/* Nor does the sampler's loop: -1 at once, nothing recorded. */
static void run_py_run_sampler(const char* name, void* fn) {
  begin("outside-python");
  int r = iotap_py_run_sampler ? iotap_py_run_sampler(10000000) : -1;
  end(r, errno);
}

/* Stopping a sampler that does not run records nothing. */
static void run_py_stop_sampler(const char* name, void* fn) {
  begin("outside-python");
  if (iotap_py_stop_sampler) iotap_py_stop_sampler();
  end(0, errno);
}

static const struct symbol_case kMarkerCases[] = {
    {"iotap_step_begin", run_step_begin, NULL},
    {"iotap_step_end", run_step_end, NULL},
    {"iotap_mark", run_mark, NULL},
    {"iotap_span", run_span, NULL},
    {"iotap_py_intern", run_py_intern, NULL},
    {"iotap_py_sample", run_py_sample, NULL},
    {"iotap_py_sampler", run_py_sampler, NULL},
    {"iotap_py_stacks", run_py_stacks, NULL},
    {"iotap_py_run_sampler", run_py_run_sampler, NULL},
    {"iotap_py_stop_sampler", run_py_stop_sampler, NULL},
    {NULL, NULL, NULL},
};

static const struct symbol_case* find_case(const char* name) {
  const struct symbol_case* tables[] = {kMarkerCases, kIoCases,      kOpenCases, kMetaCases,
                                        kStdioCases,  kProcessCases, kWaitCases};
  for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); ++t) {
    for (const struct symbol_case* c = tables[t]; c->name != NULL; ++c) {
      if (strcmp(c->name, name) == 0) return c;
    }
  }
  return NULL;
}

/* What an exec'd or spawned image of this program does: one traced call the
 * test can find, and a distinctive exit code. */
static int child_main(const char* role) {
  struct stat st;
  int r = stat("data.bin", &st);
  printf("%s stat=%d size=%lld\n", role, r, (long long)st.st_size);
  return 4;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: symbol_caller SYMBOL WORKDIR\n");
    return 2;
  }
  static char self[4096];
  long n = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0) die("/proc/self/exe");
  self[n] = '\0';
  g_self = self;
  g_workdir = argv[2];
  if (strcmp(argv[1], "exec-child") == 0 || strcmp(argv[1], "spawn-child") == 0) {
    return child_main(argv[1]);
  }
  const struct symbol_case* c = find_case(argv[1]);
  if (c == NULL) {
    fprintf(stderr, "symbol_caller: no case for %s\n", argv[1]);
    return 2;
  }
  set_up();
  c->run(c->name, c->fn);
  /* __libc_start_main's case: the code main returns must reach the trace. */
  return strcmp(argv[1], "__libc_start_main") == 0 ? 3 : 0;
}
