// Forks children that open files as fast as they can, and ends each with
// SIGTERM, which the child's handler turns into _exit(0): what torch's
// DataLoader workers do when their parent terminates them. The signal lands
// wherever the child is, often inside the shim with one of its locks held.
//
// usage: exit_in_signal_handler CHILDREN
// Prints "N of CHILDREN children hung" and exits 1 if any child failed to end
// within 2 s of its SIGTERM (it is then killed); exits 2 if the system fails.

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

namespace {

void OnTerm(int) { _exit(0); }

void SleepMicros(long us) {
  struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
  nanosleep(&ts, nullptr);
}

// Installs the handler, says so on `ready`, then opens files for ever.
[[noreturn]] void Child(int index, int ready) {
  struct sigaction sa = {};
  sa.sa_handler = OnTerm;
  sigaction(SIGTERM, &sa, nullptr);
  char byte = 1;
  if (write(ready, &byte, 1) != 1) _exit(3);
  // Every path is new, so each open interns a string and fills the thread's
  // event buffer faster than the writer thread empties it.
  char path[64];
  for (long k = 0;; ++k) {
    snprintf(path, sizeof(path), "/nonexistent/%d/%ld", index, k);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) close(fd);
  }
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
  int children = argc > 1 ? atoi(argv[1]) : 100;
  int hung = 0;
  for (int i = 0; i < children; ++i) {
    int ready[2];
    if (pipe(ready) != 0) return 2;
    pid_t pid = fork();
    if (pid < 0) return 2;
    if (pid == 0) Child(i, ready[1]);
    // Only a child that has its handler may be signalled: the default action
    // would kill it, which is not what this program tests.
    char byte;
    if (read(ready[0], &byte, 1) != 1) return 2;
    close(ready[0]);
    close(ready[1]);
    // Between 2 and 7 ms of work, varied so the signal lands in many places.
    SleepMicros(2000 + (i * 7919) % 5000);
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
