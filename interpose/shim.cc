// libiotap.so as a whole: what runs when it is loaded, when the process
// forks, and when it is unloaded. The one file that knows every layer: it
// joins them where a lower layer must reach a higher one (the recorder's
// writer hooks, the descriptor table's TFRecord hooks) and orders their fork
// handlers; nothing else calls upward (interpose/README.md).

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/config.h"
#include "interpose/core/direct_io.h"
#include "interpose/core/fd_table.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/file/packets.h"
#include "interpose/file/writer.h"
#include "interpose/hdf5/hdf5_objects.h"
#include "interpose/mapped/fault_sampler.h"
#include "interpose/mapped/mappings.h"
#include "interpose/pystacks/py_signal.h"
#include "interpose/tfrecord/tfrecord.h"
#include "interpose/uring/uring_requests.h"
#include "interpose/uring/uring_rings.h"

namespace iotap::interpose {

namespace {

constinit bool g_constructed = false;

// Every lock of the shim is held across fork, so that the child never
// inherits one taken by a thread that does not exist there (it would wait for
// it for ever). They go in the shim's lock order: the writer's; the io_uring
// table's (held while paths are interned and descriptors looked up); the
// page-fault sampler's (the writer holds it while interning the paths of
// mappings found in /proc/self/maps); the string table's and the rings'.
// The descriptor pool's and the mapping table's are leaves (nothing is taken
// while holding them), so they can come last.
void ForkPrepare() {
  if (!g_constructed) return;
  LockWriterForFork();
  LockRingsTableForFork();
  LockFaultsForFork();
  LockStringsForFork();
  LockRingsForFork();
  LockFdTableForFork();
  LockMappingsForFork();
}

void ForkParent() {
  if (!g_constructed) return;
  UnlockMappingsAfterFork(false);
  UnlockFdTableAfterFork(false);
  UnlockRingsAfterFork(false);
  UnlockStringsAfterFork(false);
  UnlockFaultsAfterFork(false);
  UnlockRingsTableAfterFork(false);
  UnlockWriterAfterFork(false);
}

void ForkChild() {
  if (!g_constructed) return;
  UnlockMappingsAfterFork(true);
  UnlockFdTableAfterFork(true);
  UnlockRingsAfterFork(true);
  UnlockStringsAfterFork(true);
  UnlockFaultsAfterFork(true);
  UnlockRingsTableAfterFork(true);
  UnlockWriterAfterFork(true);
  DirectIoAfterForkChild();
  TfRecordAfterForkChild();
  Hdf5AfterForkChild();
  ResolveAfterForkChild();
  PySignalsAfterForkChild();
  if (!Recording()) return;
  tls_thread.busy = true;
  int err = OpenTrace(/*forked=*/true);
  tls_thread.busy = false;
  if (err != 0) {
    g_active_layers.store(0, std::memory_order_release);
    WarnOnce("cannot create the trace file of a forked process; not tracing it", err);
    return;
  }
  tls_thread.busy = true;
  FaultsAfterForkChild();
  tls_thread.busy = false;
}

// Where a lower layer reaches a higher one.
void JoinLayers() {
  SetWriterHooks({.ring_taken = StartWriterThread,
                  .ring_full = DrainFullRing,
                  .strings_full = FlushStringsAndReset});
  SetFdHooks({.open_bits = TfRecordOpenBits, .released = TfRecordRelease});
  SetPolledSources({.drain = DrainFaults,
                    .sample = SampleFaults,
                    .poll_interval_ns = FaultPollIntervalNs,
                    .before_end = UringEndOfTrace});
}

// Whether the parent process was started with the same iotap settings as
// this one (SameIotapSettings), by its /proc/PID/environ: the environment
// it was started with, which is what its shim read its settings from.
// False where that cannot be read whole (another user's process, a block
// over 1 MiB).
bool ParentHadTheseSettings() {
  char path[40];
  snprintf(path, sizeof(path), "/proc/%ld/environ", RawSyscall(SYS_getppid));
  const int fd = static_cast<int>(RawSyscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC));
  if (fd < 0) return false;
  constexpr size_t kMost = 1 << 20;
  const long mapped = RawSyscall(SYS_mmap, nullptr, kMost, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  bool same = false;
  if (mapped != -1) {
    char* block = reinterpret_cast<char*>(mapped);
    size_t size = 0;
    long n = 0;
    while (size < kMost &&
           (n = RawSyscall(SYS_read, fd, block + size, kMost - size)) > 0) {
      size += static_cast<size_t>(n);
    }
    same = n == 0 && size < kMost && SameIotapSettings(environ, block, size);
    RawSyscall(SYS_munmap, block, kMost);
  }
  RawSyscall(SYS_close, fd);
  return same;
}

// Says which settings the shim could not take, and what it does instead, a
// line each (`iotap run` refuses such values; a job preloaded by hand gets
// these lines), once per job: not where the parent was started with the same
// settings (a shell script's commands, a program's subprocesses), which it
// or an ancestor said already. Forked children never say them.
// Not a WarnOnce: that one warning a process prints is kept for what goes
// wrong while tracing.
void WarnOfBadSettings(const Config& config) {
  if (config.quiet || config.bad_settings[0] == '\0' || ParentHadTheseSettings()) return;
  RawSyscall(SYS_write, 2, config.bad_settings, strlen(config.bad_settings));
}

__attribute__((constructor)) void IotapInit(int argc, char** argv, char**) {
  if (getauxval(AT_SECURE) != 0) return;  // set-uid/set-gid: stay inert
  tls_thread.busy = true;
  JoinLayers();
  SetArgv(argc, argv);
  char cwd[PATH_MAX];
  if (RawSyscall(SYS_getcwd, cwd, sizeof(cwd)) <= 0) strcpy(cwd, "/");
  const char* why = nullptr;
  if (!ReadConfig(&g_config, cwd, &why)) {
    if (getenv("IOTAP_DISABLE") == nullptr) WarnOnce(why, 0);
    tls_thread.busy = false;
    return;
  }
  WarnOfBadSettings(g_config);
  if (!AllocateWriter() || !PrepareRings()) {
    WarnOnce("cannot allocate the trace buffers; not tracing", ENOMEM);
    tls_thread.busy = false;
    return;
  }
  int err = OpenTrace(/*forked=*/false);
  if (err != 0) {
    WarnOnce("cannot create the trace file; not tracing", err);
    tls_thread.busy = false;
    return;
  }
  CheckDirectIo();
  pthread_atfork(ForkPrepare, ForkParent, ForkChild);
  g_constructed = true;
  g_active_layers.store(g_config.layers, std::memory_order_release);
  tls_thread.busy = false;
}

__attribute__((destructor)) void IotapFini() { FinishTraceAtExit(); }

}  // namespace

}  // namespace iotap::interpose
