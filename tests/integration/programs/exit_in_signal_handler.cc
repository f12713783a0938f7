// Forks children and ends each with SIGTERM, which the child's handler turns
// into _exit(0): what torch's DataLoader workers do when their parent
// terminates them.
//
// usage: exit_in_signal_handler busy CHILDREN
//        exit_in_signal_handler idle CHILDREN FILE
//
// busy: each child opens new paths as fast as it can, so the signal lands
//       wherever it is, often inside the shim with one of its locks held.
// idle: each child reads FILE whole (read(2) of 4096 bytes until it returns
//       0), closes it, and waits for the signal, as a worker that finished
//       its batches does.
//
// Prints "N of CHILDREN children hung" and exits 1 if any child failed to end
// within 2 s of its SIGTERM (it is then killed); exits 2 on a usage or
// system error.

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace {

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

void SayReady(int ready) {
  char byte = 1;
  if (write(ready, &byte, 1) != 1) _exit(3);
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

[[noreturn]] void IdleChild(const char* file, int ready) {
  InstallHandler();
  int fd = open(file, O_RDONLY);
  if (fd < 0) _exit(3);
  char buf[4096];
  while (read(fd, buf, sizeof(buf)) > 0) {
  }
  close(fd);
  SayReady(ready);
  for (;;) pause();
}

// Waits up to `limit_ms` for `pid`; returns false if it is still running.
bool Reap(pid_t pid, int limit_ms) {
  int status = 0;
  for (int waited = 0; waited < limit_ms; ++waited) {
    if (waitpid(pid, &status, WNOHANG) == pid) return true;
    SleepMicros(1000);
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  bool busy = argc == 3 && strcmp(argv[1], "busy") == 0;
  bool idle = argc == 4 && strcmp(argv[1], "idle") == 0;
  if (!busy && !idle) return 2;
  int children = atoi(argv[2]);
  int hung = 0;
  for (int i = 0; i < children; ++i) {
    int ready[2];
    if (pipe(ready) != 0) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) {
      if (busy) BusyChild(i, ready[1]);
      IdleChild(argv[3], ready[1]);
    }
    // Only a child that has its handler may be signalled: the default action
    // would kill it, which is not what this program tests.
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 2;
    close(ready[0]);
    close(ready[1]);
    // A busy child works between 2 and 7 ms, varied so the signal lands in
    // many places; an idle one is signalled when it is done.
    if (busy) SleepMicros(2000 + (i * 7919) % 5000);
    kill(pid, SIGTERM);
    if (!Reap(pid, 2000)) {
      ++hung;
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
  printf("%d of %d children hung\n", hung, children);
  return hung == 0 ? 0 : 1;
}
