// Helpers for the fault-injection and security tests (faults_test.cc,
// security_test.cc): a small file system of the test's own that can fill up
// or turn read-only under a running job, programs started in the background,
// and the comparison of a traced run with an untraced one.
//
//   std::string why;
//   std::unique_ptr<ScratchFs> fs = ScratchFs::Mount(dir.Sub("fs"), 64 * 1024, &why);
//   ASSERT_NE(fs, nullptr) << why;
//   ... start a job that traces into fs->path() ...
//   ASSERT_TRUE(fs->MakeReadOnly(&why)) << why;

#ifndef IOTAP_TESTS_INTEGRATION_FAULT_SUPPORT_H_
#define IOTAP_TESTS_INTEGRATION_FAULT_SUPPORT_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/integration/testing.h"

namespace iotap::testing {

// A tmpfs of a given size, mounted for this test process and its children
// only: in a private mount namespace when the test may mount (root with
// CAP_SYS_ADMIN), else in a new user and mount namespace (unprivileged user
// namespaces; the process is then single-threaded, as a test starting out
// is). Unmounted when destroyed.
class ScratchFs {
 public:
  // Mounts a tmpfs of `bytes` bytes at `dir` (created, mode 0700); null, with
  // the reasons each way failed in `why`, if no way works here.
  static std::unique_ptr<ScratchFs> Mount(const std::string& dir, size_t bytes, std::string* why);
  ~ScratchFs();
  ScratchFs(const ScratchFs&) = delete;
  ScratchFs& operator=(const ScratchFs&) = delete;

  const std::string& path() const { return path_; }
  // Remounts it read-only, retrying for up to 10 s while a file on it is
  // open for writing (EBUSY).
  bool MakeReadOnly(std::string* why);

 private:
  explicit ScratchFs(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

// A program started in the background with the shim preloaded (or not, with
// an empty trace_dir), its stdout and stderr going to files; with
// max_open_files > 0, under that RLIMIT_NOFILE.
struct Background {
  pid_t pid = -1;
  std::string out_file;
  std::string err_file;
};
Background StartProgram(const std::vector<std::string>& argv, const std::string& trace_dir,
                        const std::string& output_prefix, const RunOptions& options = {},
                        int max_open_files = 0);
// Waits for it; exit code, signal and output as RunProgram gives them.
RunResult WaitProgram(const Background& b);

// Waits (up to `timeout_ms`) until `path` holds `text`; false if it never did.
bool WaitForText(const std::string& path, const std::string& text, int timeout_ms);

// Whether a thread named `name` (its comm) of process `pid` is running or
// about to (state R in /proc).
bool ThreadRunning(pid_t pid, const std::string& name);

// Checks that a traced run behaved as the untraced one: the same exit code
// or signal, the same stdout, and the same stderr but for `warnings` lines
// starting "iotap: " (the one warning per process the shim may print when
// its output is unusable).
void ExpectSameBehaviour(const RunResult& untraced, const RunResult& traced, int warnings = 0);

// Every issue met reading `run` is the end of a file cut short (a process
// killed while writing), and each thread's events come in the order it made
// them, from its first: an unbroken sequence, or with `allow_gaps` (events
// lost to a full disk, written again once there was room) one that only
// moves forward. Fails the test otherwise.
void ExpectReadableUpToTheEnd(const LoadedRun& run, bool allow_gaps = false);

}  // namespace iotap::testing

#endif  // IOTAP_TESTS_INTEGRATION_FAULT_SUPPORT_H_
