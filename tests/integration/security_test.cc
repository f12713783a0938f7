// What the shim and `iotap run` do to keep a traced job, and other users,
// safe: traces owner-only, output directories never reached through a
// planted symlink or taken from another user, the shim inert in set-uid and
// set-gid programs, no shell anywhere, and every name from the traced system
// escaped in every output. (A symlink planted at the trace file's own name,
// and a file swapped in mid-run: interpose/trace_file_test.cc.)

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/fault_support.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) names.push_back(e.path().string());
  return names;
}

mode_t ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

TEST(SecurityTest, TracesAndTheirDirectoryAreOwnerOnlyWhateverTheUmask) {
  TempDir dir;
  std::string data = dir.Sub("data.bin");
  WriteFile(data, "x");
  // umask 0 would leave group and others every right the shim asked for.
  std::string lifecycle = TestProgram("lifecycle");
  for (std::string how : {"preload", "iotap run"}) {
    SCOPED_TRACE(how);
    std::string trace = dir.Sub(how == "preload" ? "t1" : "t2");
    std::vector<std::string> argv = {"sh", "-c", "umask 0; exec \"$@\"", "sh"};
    if (how == "iotap run") argv.insert(argv.end(), {IotapBinary(), "run", "-o", trace, "--"});
    argv.insert(argv.end(), {lifecycle, "fork", dir.path()});
    WriteFile(dir.Sub("a.bin"), std::string(2000, 'a'));
    WriteFile(dir.Sub("b.bin"), std::string(2000, 'b'));
    RunResult r = how == "preload" ? RunPreloaded(argv, trace) : RunProgram(argv);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(ModeOf(trace), 0700u);
    std::vector<std::string> files = Entries(trace);
    ASSERT_GE(files.size(), 2u);  // the program and its child (and sh, preloaded)
    for (const std::string& f : files) EXPECT_EQ(ModeOf(f), 0600u) << f;
  }
}

// IOTAP_DIR or -o naming a symlink (to a directory an attacker reads) is
// refused; the job still runs, untraced, with one warning.
TEST(SecurityTest, OutputDirectoryPlantedAsASymlinkIsRefused) {
  TempDir dir;
  std::string victim = dir.Sub("elsewhere");
  ASSERT_EQ(mkdir(victim.c_str(), 0777), 0);
  std::string link = dir.Sub("trace");
  ASSERT_EQ(symlink(victim.c_str(), link.c_str()), 0);

  std::string data = dir.Sub("data.txt");
  WriteFile(data, "some text\n");
  RunResult plain = RunProgram({"cat", data});
  RunResult preloaded = RunPreloaded({"cat", data}, link);
  ExpectSameBehaviour(plain, preloaded, /*warnings=*/1);
  RunResult run = RunTraced({"cat", data}, link);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(run.err, "a symbolic link is refused")) << run.err;
  EXPECT_TRUE(run.out.empty());
  EXPECT_TRUE(Entries(victim).empty());
}

// A directory that belongs to someone else is never written into: they could
// read the traces, or have planted names in it.
TEST(SecurityTest, AnotherUsersDirectoryIsRefused) {
  TempDir dir;
  std::string theirs = dir.Sub("theirs");
  ASSERT_EQ(mkdir(theirs.c_str(), 0777), 0);
  ASSERT_EQ(chmod(theirs.c_str(), 0777), 0);
  if (geteuid() == 0) {
    ASSERT_EQ(chown(theirs.c_str(), kNobody, kNobody), 0);
  } else {
    theirs = "/tmp";  // root's, and writable by everyone
  }
  std::string data = dir.Sub("data.txt");
  WriteFile(data, "some text\n");
  RunResult plain = RunProgram({"cat", data});
  RunResult preloaded = RunPreloaded({"cat", data}, theirs);
  ExpectSameBehaviour(plain, preloaded, /*warnings=*/1);
  RunResult run = RunTraced({"cat", data}, theirs);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(run.err, "belongs to another user")) << run.err;
  if (geteuid() == 0) {
    EXPECT_TRUE(Entries(theirs).empty());
  }
}

// The probe (programs/setuid_probe.c), made set-uid to another user or
// set-gid to another group, is run with the shim preloaded and loads it
// itself: the loader must not preload it, and loaded, it must record nothing
// and say nothing.
class SetuidTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_FAIL() << "making a program set-uid to another user needs root";
    }
    // Everything the probe touches must be reachable by the user it becomes.
    ASSERT_EQ(chmod(dir_.path().c_str(), 0755), 0);
    shim_ = dir_.Sub("libiotap.so");
    fs::copy_file(ShimLibrary(), shim_);
    ASSERT_EQ(chmod(shim_.c_str(), 0755), 0);
    data_ = dir_.Sub("data.txt");
    WriteFile(data_, "twelve bytes");
    ASSERT_EQ(chmod(data_.c_str(), 0644), 0);
    probe_ = dir_.Sub("probe");
    fs::copy_file(TestProgram("setuid_probe"), probe_);
  }

  // Runs the probe with the shim (the copy it loads) preloaded, tracing into
  // `trace`.
  RunResult Probe(const std::string& trace) {
    RunOptions options;
    options.env["LD_PRELOAD"] = shim_;
    options.env["IOTAP_DIR"] = trace;
    return RunProgram({probe_, shim_, data_}, options);
  }

  TempDir dir_;
  std::string shim_, data_, probe_;
};

TEST_F(SetuidTest, ControlRunWithoutSetuidIsTraced) {
  // Without the set-uid bit the same probe is traced: the test can see it.
  std::string trace = dir_.Sub("trace");
  RunResult r = Probe(trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "secure 0 preloaded 1\nread 12\n");
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.On(data_, OP_READ).size(), 1u);
}

void ExpectInert(const RunResult& r, const std::string& trace) {
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(absl::StartsWith(r.out, "secure 0"))
      << "the set-uid bit had no effect: is $TMPDIR on a nosuid file system?";
  EXPECT_EQ(r.out, "secure 1 preloaded 0\nread 12\n");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(Entries(trace).empty());
}

TEST_F(SetuidTest, SetuidProgramLeavesTheShimInert) {
  ASSERT_EQ(chown(probe_.c_str(), kNobody, 0), 0);
  ASSERT_EQ(chmod(probe_.c_str(), 04755), 0);
  // A directory the probe's user could write traces into, were the shim on.
  std::string trace = dir_.Sub("trace");
  ASSERT_EQ(mkdir(trace.c_str(), 0700), 0);
  ASSERT_EQ(chown(trace.c_str(), kNobody, kNobody), 0);
  ExpectInert(Probe(trace), trace);
}

TEST_F(SetuidTest, SetgidProgramLeavesTheShimInert) {
  ASSERT_EQ(chown(probe_.c_str(), 0, kNobody), 0);
  ASSERT_EQ(chmod(probe_.c_str(), 02755), 0);
  std::string trace = dir_.Sub("trace");
  ASSERT_EQ(mkdir(trace.c_str(), 0700), 0);
  ExpectInert(Probe(trace), trace);
}

}  // namespace
}  // namespace iotap::testing
