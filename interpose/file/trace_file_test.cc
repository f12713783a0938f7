#include "interpose/file/trace_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <vector>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

namespace fs = std::filesystem;

constexpr int kPid = 4242;
constexpr uint64_t kTime = 1700000000123456789ull;  // 2023-11-14T22:13:20.123456789Z

// The name TraceFile::Create gives the trace of kPid started at kTime.
std::string ExpectedName(const std::string& suffix = "") {
  struct utsname uts;
  uname(&uts);
  std::string host = uts.nodename;
  for (char& c : host) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  return host + "." + std::to_string(kPid) + ".20231114T221320.123456789Z" + suffix + ".iotap";
}

std::string Contents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class TraceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/iotap-trace-file-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ + "/trace";
    victim_ = root_ + "/victim";
    std::ofstream(victim_) << "victim";
  }
  void TearDown() override { fs::remove_all(root_); }

  const uint8_t* Bytes(const char* s) { return reinterpret_cast<const uint8_t*>(s); }

  std::string root_, dir_, victim_;
};

TEST_F(TraceFileTest, CreatesAnOwnerOnlyDirectoryAndFileWhateverTheUmask) {
  mode_t old = umask(0);
  TraceFile f;
  int err = f.Create(dir_.c_str(), kPid, kTime);
  umask(old);
  ASSERT_EQ(err, 0);
  EXPECT_EQ(std::string(f.path()), dir_ + "/" + ExpectedName());
  struct stat st;
  ASSERT_EQ(stat(dir_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(stat(f.path(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  ASSERT_EQ(f.Append(Bytes("frame"), 5), 0);
  EXPECT_EQ(Contents(f.path()), "frame");
}

TEST_F(TraceFileTest, SymlinkPlantedAtTheNameIsNeverFollowed) {
  ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
  std::string planted = dir_ + "/" + ExpectedName();
  ASSERT_EQ(symlink(victim_.c_str(), planted.c_str()), 0);
  std::string dangling = dir_ + "/" + ExpectedName("-1");
  ASSERT_EQ(symlink((root_ + "/created-through-a-link").c_str(), dangling.c_str()), 0);
  TraceFile f;
  ASSERT_EQ(f.Create(dir_.c_str(), kPid, kTime), 0);
  // Both names taken, the file gets the next one.
  EXPECT_EQ(std::string(f.path()), dir_ + "/" + ExpectedName("-2"));
  ASSERT_EQ(f.Append(Bytes("frame"), 5), 0);
  EXPECT_EQ(Contents(victim_), "victim");
  EXPECT_FALSE(fs::exists(root_ + "/created-through-a-link"));
  EXPECT_TRUE(fs::is_symlink(planted));
}

TEST_F(TraceFileTest, FileSwappedMidRunIsNeverWritten) {
  TraceFile f;
  ASSERT_EQ(f.Create(dir_.c_str(), kPid, kTime), 0);
  ASSERT_EQ(f.Append(Bytes("one"), 3), 0);
  std::string path = f.path();
  // A symlink in its place: the kept descriptor still names our file, and
  // the symlink is not followed.
  ASSERT_EQ(rename(path.c_str(), (root_ + "/moved").c_str()), 0);
  ASSERT_EQ(symlink(victim_.c_str(), path.c_str()), 0);
  ASSERT_EQ(f.Append(Bytes("two"), 3), 0);
  // The program closes every descriptor: the file is reopened by name, and
  // the symlink is not followed.
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  EXPECT_EQ(f.Append(Bytes("three"), 5), ELOOP);
  EXPECT_EQ(Contents(victim_), "victim");
  // Another file in its place: not ours, not written.
  ASSERT_EQ(unlink(path.c_str()), 0);
  std::ofstream(path) << "other";
  EXPECT_EQ(f.Append(Bytes("four"), 4), ESTALE);
  EXPECT_EQ(Contents(path), "other");
  EXPECT_EQ(Contents(root_ + "/moved"), "onetwo");
}

TEST_F(TraceFileTest, AFailedWriteLeavesNeitherPartNorHole) {
  TraceFile f;
  ASSERT_EQ(f.Create(dir_.c_str(), kPid, kTime), 0);
  ASSERT_EQ(f.Append(Bytes("one"), 3), 0);
  // A file-size limit cuts the next write after two of its bytes.
  struct rlimit old;
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 5;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  int err = f.Append(Bytes("twotwo"), 6);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  EXPECT_EQ(err, EFBIG);
  EXPECT_EQ(Contents(f.path()), "one");
  ASSERT_EQ(f.Append(Bytes("three"), 5), 0);
  EXPECT_EQ(Contents(f.path()), "onethree");
  EXPECT_EQ(f.size(), 8u);
}

TEST_F(TraceFileTest, DirectoryPlantedAsASymlinkIsRefused) {
  std::string elsewhere = root_ + "/elsewhere";
  ASSERT_EQ(mkdir(elsewhere.c_str(), 0700), 0);
  ASSERT_EQ(symlink(elsewhere.c_str(), dir_.c_str()), 0);
  TraceFile f;
  EXPECT_EQ(f.Create(dir_.c_str(), kPid, kTime), ENOTDIR);
  EXPECT_TRUE(fs::is_empty(elsewhere));
}

TEST_F(TraceFileTest, AnotherUsersDirectoryIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a directory away";
  ASSERT_EQ(mkdir(dir_.c_str(), 0777), 0);
  ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
  TraceFile f;
  EXPECT_EQ(f.Create(dir_.c_str(), kPid, kTime), EPERM);
  EXPECT_TRUE(fs::is_empty(dir_));
}


// StopWritesForExit changes the whole process, so each case runs in a fork
// child, which reports through its exit code (0: as expected).
int RunInChild(int (*body)(const std::string& dir), const std::string& dir) {
  pid_t pid = fork();
  if (pid == 0) _exit(body(dir));
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

struct AppendJob {
  TraceFile* file;
  const uint8_t* data;
  size_t n;
  std::atomic<bool> returned{false};
};

void* AppendOnThread(void* arg) {
  auto* job = static_cast<AppendJob*>(arg);
  job->file->Append(job->data, job->n);
  job->returned.store(true);
  return nullptr;
}

void SleepMs(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
  nanosleep(&ts, nullptr);
}

TEST_F(TraceFileTest, AWriteAfterTheProcessBeganToEndNeverStarts) {
  int code = RunInChild(
      [](const std::string& dir) {
        TraceFile f;
        if (f.Create(dir.c_str(), kPid, kTime) != 0) return 2;
        if (f.Append(reinterpret_cast<const uint8_t*>("whole"), 5) != 0) return 3;
        TraceFile::StopWritesForExit(0);
        AppendJob job{&f, reinterpret_cast<const uint8_t*>("late"), 4};
        pthread_t thread;
        if (pthread_create(&thread, nullptr, AppendOnThread, &job) != 0) return 4;
        SleepMs(100);
        // The late write parked its thread rather than start.
        if (job.returned.load()) return 5;
        if (TraceFile::WritingFd() != -1) return 6;
        return Contents(f.path()) == "whole" ? 0 : 7;
      },
      dir_);
  EXPECT_EQ(code, 0);
}

// A write of 128 MiB, tens of milliseconds long, on another thread.
struct LongWrite {
  TraceFile file;
  std::vector<uint8_t> frame = std::vector<uint8_t>(128u << 20, 0x5a);
  AppendJob job{&file, frame.data(), frame.size()};

  // 0 once the write is under way; otherwise the child's exit code.
  int Start(const std::string& dir) {
    if (file.Create(dir.c_str(), kPid, kTime) != 0) return 2;
    pthread_t thread;
    if (pthread_create(&thread, nullptr, AppendOnThread, &job) != 0) return 4;
    // Under way once the file grows: a write published but not yet started
    // may still see the end coming and never start (Append), which would
    // leave nothing to wait for.
    struct stat st;
    while (!job.returned.load() &&
           (TraceFile::WritingFd() == -1 || stat(file.path(), &st) != 0 || st.st_size == 0)) {
    }
    return job.returned.load() ? 5 : 0;  // too fast to tell: the case proves nothing
  }
};

TEST_F(TraceFileTest, TheEndWaitsForAWriteInProgressOnAnotherThread) {
  int code = RunInChild(
      [](const std::string& dir) {
        LongWrite w;
        if (int started = w.Start(dir)) return started;
        TraceFile::StopWritesForExit(60ull * 1000000000);
        // Returned only once the write had ended, whole.
        if (TraceFile::WritingFd() != -1) return 6;
        struct stat st;
        if (stat(w.file.path(), &st) != 0) return 7;
        return static_cast<size_t>(st.st_size) == w.frame.size() ? 0 : 8;
      },
      dir_);
  EXPECT_EQ(code, 0);
}

TEST_F(TraceFileTest, TheEndGivesUpOnAWriteThatDoesNotEnd) {
  int code = RunInChild(
      [](const std::string& dir) {
        LongWrite w;
        if (int started = w.Start(dir)) return started;
        // A write that outlasts the wait (a hung file system) is not waited
        // for longer: the process must still end. 1 us is far shorter than
        // the write.
        TraceFile::StopWritesForExit(1000);
        return w.job.returned.load() ? 8 : 0;
      },
      dir_);
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace iotap::interpose
