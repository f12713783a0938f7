// version.cmake, the script every build runs to write the commit `iotap
// --version` prints: it follows HEAD from commit to commit, marks changed
// trees, rewrites nothing when nothing changed, and says "unknown" outside
// a git checkout of its own.

#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::cli {
namespace {

namespace fs = std::filesystem;
using ::iotap::testing::ReadFile;
using ::iotap::testing::RunProgram;
using ::iotap::testing::RunResult;
using ::iotap::testing::SourcePath;
using ::iotap::testing::TempDir;
using ::iotap::testing::WriteFile;

// Runs version.cmake for `source` into `output`; returns the kCommit it wrote.
std::string Commit(const std::string& source, const std::string& output,
                   const std::string& commit = "") {
  RunResult r = RunProgram({"cmake", "-DSOURCE_DIR=" + source, "-DOUTPUT=" + output,
                            "-DVERSION=9.8.7", "-DCOMMIT=" + commit, "-P",
                            SourcePath("analyzer/cli/version.cmake")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::string text = ReadFile(output);
  EXPECT_NE(text.find("const char kVersion[] = \"9.8.7\";"), std::string::npos) << text;
  const std::string key = "const char kCommit[] = \"";
  size_t at = text.find(key);
  if (at == std::string::npos) return "";
  at += key.size();
  return text.substr(at, text.find('"', at) - at);
}

// git in `repo`, as a user who commits.
RunResult Git(const std::string& repo, std::vector<std::string> args) {
  std::vector<std::string> argv = {"git", "-C", repo, "-c", "user.name=t", "-c",
                                   "user.email=t@example.invalid"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = RunProgram(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r;
}

std::string Head(const std::string& repo) {
  return std::string(absl::StripSuffix(Git(repo, {"rev-parse", "--short", "HEAD"}).out, "\n"));
}

TEST(VersionScriptTest, FollowsHeadAndMarksChangedTrees) {
  TempDir dir;
  const std::string repo = dir.Sub("repo");
  const std::string out = dir.Sub("version.cc");
  fs::create_directories(repo);
  Git(repo, {"init", "-q"});
  WriteFile(repo + "/a.txt", "1\n");
  Git(repo, {"add", "a.txt"});
  Git(repo, {"commit", "-q", "-m", "first"});
  const std::string first = Head(repo);
  EXPECT_EQ(Commit(repo, out), first);

  // Nothing changed: the file is left alone, so nothing is recompiled.
  struct stat before, after;
  fs::last_write_time(out, fs::last_write_time(out) - std::chrono::hours(1));
  ASSERT_EQ(stat(out.c_str(), &before), 0);
  EXPECT_EQ(Commit(repo, out), first);
  ASSERT_EQ(stat(out.c_str(), &after), 0);
  EXPECT_EQ(after.st_mtim.tv_sec, before.st_mtim.tv_sec);

  // A tracked file changed, then committed; untracked files do not count.
  WriteFile(repo + "/a.txt", "2\n");
  WriteFile(repo + "/untracked.txt", "x\n");
  EXPECT_EQ(Commit(repo, out), first + "-dirty");
  Git(repo, {"commit", "-q", "-a", "-m", "second"});
  const std::string second = Head(repo);
  ASSERT_NE(second, first);
  EXPECT_EQ(Commit(repo, out), second);
}

TEST(VersionScriptTest, UnknownOutsideItsOwnCheckout) {
  TempDir dir;
  const std::string out = dir.Sub("version.cc");
  EXPECT_EQ(Commit(dir.path(), out), "unknown");
  // A source tree unpacked inside another repository is not that commit.
  const std::string repo = dir.Sub("repo");
  fs::create_directories(repo + "/iotap-0.2.0");
  Git(repo, {"init", "-q"});
  WriteFile(repo + "/a.txt", "1\n");
  Git(repo, {"add", "a.txt"});
  Git(repo, {"commit", "-q", "-m", "first"});
  EXPECT_EQ(Commit(repo + "/iotap-0.2.0", out), "unknown");
  // IOTAP_COMMIT, given at configure time, wins.
  EXPECT_EQ(Commit(repo + "/iotap-0.2.0", out, "1a2b3c4"), "1a2b3c4");
}

}  // namespace
}  // namespace iotap::cli
