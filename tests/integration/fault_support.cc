#include "tests/integration/fault_support.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

extern char** environ;

namespace iotap::testing {

namespace {

bool WriteProc(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// Mounts the tmpfs in the current mount namespace, made private first so
// nothing propagates out of it.
bool MountTmpfs(const std::string& dir, size_t bytes, std::string* why) {
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    absl::StrAppend(why, "making / private: ", std::strerror(errno), "; ");
    return false;
  }
  std::string options = absl::StrCat("size=", bytes, ",mode=0700");
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    absl::StrAppend(why, "mount -t tmpfs: ", std::strerror(errno), "; ");
    return false;
  }
  return true;
}

}  // namespace

std::unique_ptr<ScratchFs> ScratchFs::Mount(const std::string& dir, size_t bytes,
                                            std::string* why) {
  why->clear();
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    *why = absl::StrCat("mkdir ", dir, ": ", std::strerror(errno));
    return nullptr;
  }
  // 1. A mount namespace of our own (root with CAP_SYS_ADMIN).
  if (unshare(CLONE_NEWNS) == 0) {
    if (MountTmpfs(dir, bytes, why)) return std::unique_ptr<ScratchFs>(new ScratchFs(dir));
  } else {
    absl::StrAppend(why, "unshare(CLONE_NEWNS): ", std::strerror(errno), "; ");
  }
  // 2. A user namespace in which we are root, and a mount namespace in it.
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
    absl::StrAppend(why, "unshare(CLONE_NEWUSER|CLONE_NEWNS): ", std::strerror(errno),
                    " (are unprivileged user namespaces disabled?)");
    return nullptr;
  }
  WriteProc("/proc/self/setgroups", "deny");
  if (!WriteProc("/proc/self/uid_map", absl::StrCat("0 ", uid, " 1")) ||
      !WriteProc("/proc/self/gid_map", absl::StrCat("0 ", gid, " 1"))) {
    absl::StrAppend(why, "writing the user namespace's id maps: ", std::strerror(errno));
    return nullptr;
  }
  if (MountTmpfs(dir, bytes, why)) return std::unique_ptr<ScratchFs>(new ScratchFs(dir));
  return nullptr;
}

ScratchFs::~ScratchFs() { umount2(path_.c_str(), MNT_DETACH); }

bool ScratchFs::MakeReadOnly(std::string* why) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (mount(nullptr, path_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV,
               nullptr) != 0) {
    if (errno != EBUSY || std::chrono::steady_clock::now() > deadline) {
      *why = absl::StrCat("remounting ", path_, " read-only: ", std::strerror(errno));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  return true;
}

Background StartProgram(const std::vector<std::string>& argv, const std::string& trace_dir,
                        const std::string& output_prefix, const RunOptions& options,
                        int max_open_files) {
  Background b;
  b.out_file = output_prefix + ".out";
  b.err_file = output_prefix + ".err";
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.push_back(*e);
  if (!trace_dir.empty()) {
    env.push_back("LD_PRELOAD=" + ShimLibrary());
    env.push_back("IOTAP_DIR=" + trace_dir);
  }
  for (const auto& [name, value] : options.env) env.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> copy = argv;
  for (std::string& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  b.pid = fork();
  if (b.pid == 0) {
    int out = open(b.out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int err = open(b.err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    setpgid(0, 0);
    if (max_open_files > 0) {
      struct rlimit limit = {static_cast<rlim_t>(max_open_files),
                             static_cast<rlim_t>(max_open_files)};
      if (setrlimit(RLIMIT_NOFILE, &limit) != 0) _exit(126);
    }
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  return b;
}

RunResult WaitProgram(const Background& b) {
  RunResult r;
  int status = 0;
  while (waitpid(b.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.out = ReadFile(b.out_file);
  r.err = ReadFile(b.err_file);
  return r;
}

bool WaitForText(const std::string& path, const std::string& text, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (!absl::StrContains(ReadFile(path), text)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

bool ThreadRunning(pid_t pid, const std::string& name) {
  std::string tasks = absl::StrCat("/proc/", pid, "/task");
  DIR* d = opendir(tasks.c_str());
  if (d == nullptr) return false;
  bool running = false;
  while (struct dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    std::string base = absl::StrCat(tasks, "/", e->d_name);
    std::string comm(absl::StripTrailingAsciiWhitespace(ReadFile(base + "/comm")));
    if (comm != name) continue;
    // "TID (COMM) STATE ...": the state follows the last ')'.
    std::string stat = ReadFile(base + "/stat");
    size_t paren = stat.rfind(')');
    running = paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'R';
  }
  closedir(d);
  return running;
}

void ExpectSameBehaviour(const RunResult& untraced, const RunResult& traced, int warnings) {
  EXPECT_EQ(traced.exit_code, untraced.exit_code) << traced.err;
  EXPECT_EQ(traced.signal, untraced.signal);
  EXPECT_EQ(traced.out, untraced.out);
  std::string rest;
  int seen = 0;
  for (absl::string_view line : absl::StrSplit(traced.err, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "iotap: ") && seen < warnings) {
      ++seen;
    } else {
      absl::StrAppend(&rest, line, "\n");
    }
  }
  EXPECT_EQ(seen, warnings) << traced.err;
  EXPECT_EQ(rest, untraced.err);
}

void ExpectReadableUpToTheEnd(const LoadedRun& run, bool allow_gaps) {
  for (const analyzer::ReadIssue& issue : run.issues) {
    EXPECT_TRUE(issue.truncated) << issue.ToString();
  }
  for (const LoadedProcess& p : run.processes) {
    std::map<uint32_t, uint64_t> next;  // tid -> the seq expected next
    for (const LoadedEvent& e : p.events) {
      auto [it, first] = next.emplace(e.tid, 0);
      if (allow_gaps) {
        ASSERT_GE(e.seq, it->second) << p.trace_file << " thread " << e.tid;
      } else {
        ASSERT_EQ(e.seq, it->second) << p.trace_file << " thread " << e.tid;
      }
      it->second = e.seq + 1;
    }
  }
}

}  // namespace iotap::testing
