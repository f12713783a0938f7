// Process lifecycles that catch a multi-threaded traced process at a bad
// moment, as DataLoader workers meet them: forked from a process whose other
// threads are busy, terminated by their parent.
//
// usage: lifecycle_hazards sigterm-busy CHILDREN
//        lifecycle_hazards sigterm-idle CHILDREN FILE
//        lifecycle_hazards fork-while-mapping CHILDREN FILE
//
// sigterm-*: each child installs a SIGTERM handler that calls _exit(0) (as
//   torch's worker handler does) and is then sent SIGTERM.
//   busy: the child opens new paths as fast as it can, so the signal lands
//     wherever it is, often inside the shim with one of its locks held.
//   idle: the child reads FILE whole (read(2) of 4096 bytes until it returns
//     0), closes it, and waits for the signal, as a worker done with its
//     batches does.
// fork-while-mapping: a second thread keeps 4000 mappings of FILE and maps
//   and unmaps one more page in a loop, so it is often inside the shim's
//   mapping table when the main thread forks; each child opens FILE, maps
//   and unmaps a page, closes it and leaves through _exit(0).
//
// Prints "N of CHILDREN children hung" and exits 1 if any child failed to end
// within 30 s (it is then killed; the program stops after 3 such children);
// exits 2 on a usage or system error. A child that deadlocks never ends; one
// that is only short of CPU time (it writes its trace as it ends, and a
// loaded machine may give it little of a core) has been seen to take 2.6 s,
// so the limit is far above that.

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace {

const char* g_file = nullptr;

void OnTerm(int) { _exit(0); }

void SleepMicros(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

void InstallHandler() {
  struct sigaction sa = {};
  sa.sa_handler = OnTerm;
  sigaction(SIGTERM, &sa, nullptr);
}

// Tells the parent the child may be signalled. A raw system call, which the
// shim does not see: through write(), the parent could wake and signal while
// the shim still records that write, and the signal would not find the child
// idle.
void SayReady(int ready) {
  char byte = 1;
  if (syscall(SYS_write, ready, &byte, 1) != 1) _exit(3);
}

[[noreturn]] void BusyChild(int index, int ready) {
  InstallHandler();
  SayReady(ready);
  // Every path is new, so each open interns a string, and the thread's event
  // buffer fills faster than the writer thread empties it.
  char path[64];
  for (long k = 0;; ++k) {
    snprintf(path, sizeof(path), "/nonexistent/%d/%ld", index, k);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) close(fd);
  }
}

[[noreturn]] void IdleChild(int ready) {
  InstallHandler();
  int fd = open(g_file, O_RDONLY);
  if (fd < 0) _exit(3);
  char buf[4096];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
  close(fd);
  SayReady(ready);
  for (;;) pause();
}

[[noreturn]] void MappingChild(int ready) {
  SayReady(ready);
  int fd = open(g_file, O_RDONLY);
  void* p = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  if (fd < 0 || p == MAP_FAILED) _exit(3);
  munmap(p, 4096);
  close(fd);
  _exit(0);
}

// Unmapping searches the shim's table, which the 4000 mappings make long.
void* Mapper(void* ready) {
  int fd = open(g_file, O_RDONLY);
  for (int i = 0; i < 4000; ++i) mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
  SayReady(*static_cast<int*>(ready));
  for (;;) munmap(mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0), 4096);
}

double NowSeconds() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Waits up to `limit_s` seconds for `pid`; returns false if it is still
// running.
bool Reap(pid_t pid, double limit_s) {
  int status = 0;
  for (double deadline = NowSeconds() + limit_s; NowSeconds() < deadline;) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    SleepMicros(1000);
  }
  return waitpid(pid, &status, WNOHANG) == pid;
}

constexpr double kHungAfterSeconds = 30;

bool WaitReady(int fd) {
  char byte;
  return read(fd, &byte, 1) == 1;
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 2 ? argv[1] : "";
  bool busy = strcmp(mode, "sigterm-busy") == 0 && argc == 3;
  bool idle = strcmp(mode, "sigterm-idle") == 0 && argc == 4;
  bool mapping = strcmp(mode, "fork-while-mapping") == 0 && argc == 4;
  if (!busy && !idle && !mapping) return 2;
  int children = atoi(argv[2]);
  g_file = argc == 4 ? argv[3] : nullptr;
  if (mapping) {
    int ready[2];
    pthread_t thread;
    if (pipe(ready) != 0 || pthread_create(&thread, nullptr, Mapper, &ready[1]) != 0 ||
        !WaitReady(ready[0])) {
      return 2;
    }
  }
  int hung = 0;
  for (int i = 0; i < children && hung < 3; ++i) {
    int ready[2];
    if (pipe(ready) != 0) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      if (busy) BusyChild(i, ready[1]);
      if (idle) IdleChild(ready[1]);
      MappingChild(ready[1]);
    }
    // Only a child that has its handler may be signalled: the default action
    // would kill it, which is not what this program tests.
    if (!WaitReady(ready[0])) return 2;
    close(ready[0]);
    close(ready[1]);
    // A busy child works between 2 and 7 ms, varied so the signal lands in
    // many places; an idle one is signalled when it is done.
    if (busy) SleepMicros(2000 + (i * 7919) % 5000);
    if (busy || idle) kill(pid, SIGTERM);
    if (!Reap(pid, kHungAfterSeconds)) {
      ++hung;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  printf("%d of %d children hung\n", hung, children);
  return hung == 0 ? 0 : 1;  // the mapping thread ends with the process
}
