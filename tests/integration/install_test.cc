// iotap installed with `cmake --install`: the files it installs, a moved
// prefix tracing a `cat` and a Python job from a clean environment exactly as
// the build tree does, the modulefiles under Lmod, and `iotap --version`.

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/install_support.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;

// Installs the build tree into `prefix`.
void Install(const std::string& prefix) {
  RunResult r = RunProgram({"cmake", "--install", IOTAP_BINARY_DIR, "--prefix", prefix});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
}

// Installs into DIR/first and moves the tree to DIR/elsewhere/moved, which
// nothing was configured or installed for.
InstallTree InstallAndMove(const TempDir& dir) {
  Install(dir.Sub("first"));
  fs::create_directories(dir.Sub("elsewhere"));
  fs::rename(dir.Sub("first"), dir.Sub("elsewhere/moved"));
  return InstallTree::Layout(dir.Sub("elsewhere/moved"));
}

// What `git rev-parse --short HEAD` says of the source tree, or "" when the
// source tree is not the top of a git checkout.
std::string SourceCommit() {
  RunResult top = RunProgram({"git", "-C", IOTAP_SOURCE_DIR, "rev-parse", "--show-toplevel"});
  std::error_code ec;
  if (top.exit_code != 0 ||
      !fs::equivalent(std::string(absl::StripSuffix(top.out, "\n")), IOTAP_SOURCE_DIR, ec)) {
    return "";
  }
  RunResult head = RunProgram({"git", "-C", IOTAP_SOURCE_DIR, "rev-parse", "--short", "HEAD"});
  return std::string(absl::StripSuffix(head.out, "\n"));
}

TEST(InstallTest, InstallsTheToolAndNothingElse) {
  TempDir dir;
  ASSERT_NO_FATAL_FAILURE(Install(dir.Sub("p")));
  InstallTree tree = InstallTree::Layout(dir.Sub("p"));
  // Exactly these: no test program, benchmark, test double or fuzzer.
  EXPECT_EQ(FilesUnder(tree.prefix), ExpectedInstalledFiles());
  EXPECT_EQ(ReadFile(tree.prefix + "/" IOTAP_INSTALL_INCLUDEDIR "/iotap.h"),
            ReadFile(SourcePath("interpose/iotap.h")));
  EXPECT_EQ(ReadFile(tree.prefix + "/" IOTAP_INSTALL_DATADIR "/iotap/findings.textproto"),
            ReadFile(SourcePath("analyzer/findings/findings.textproto")));
  EXPECT_EQ(ReadFile(tree.prefix + "/" IOTAP_INSTALL_DATADIR "/iotap/proto/iotap/trace.proto"),
            ReadFile(SourcePath("proto/iotap/trace.proto")));
  EXPECT_EQ(ReadFile(tree.prefix + "/" IOTAP_INSTALL_DOCDIR "/README.md"),
            ReadFile(SourcePath("README.md")));
  struct stat st;
  ASSERT_EQ(stat(tree.iotap.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);

  // Relocatable: no run path of either binary names a directory, and the
  // shim needs libc alone.
  DynamicSection cli = ReadDynamic(tree.iotap);
  DynamicSection shim = ReadDynamic(tree.shim);
  EXPECT_EQ(cli.rpath, std::vector<std::string>{});
  EXPECT_EQ(shim.rpath, std::vector<std::string>{});
  EXPECT_EQ(shim.needed, std::set<std::string>{"libc.so.6"});
}

TEST(InstallTest, MovedPrefixTracesLikeTheBuildTree) {
  TempDir dir;
  InstallTree tree;
  ASSERT_NO_FATAL_FAILURE(tree = InstallAndMove(dir));
  const std::string build_iotap = IotapBinary();
  const std::string data = dir.Sub("data.bin");
  const int64_t kDataBytes = (1 << 20) + 4321;
  WriteFile(data, std::string(kDataBytes, 'x'));

  // The installed iotap preloads its own shim: the maps of what it runs name
  // the moved tree's libiotap.so and nothing of the build tree.
  RunResult maps = RunClean({tree.iotap, "run", "-o", dir.Sub("t-maps"), "--", "cat",
                             "/proc/self/maps"}, dir.path());
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  EXPECT_EQ(MappedShims(maps.out), std::set<std::string>{tree.shim});
  EXPECT_EQ(maps.out.find(IOTAP_BINARY_DIR), std::string::npos) << maps.out;

  // `cat`: the same counts from both trees, and the file's true size.
  for (const auto& [iotap, trace] : {std::pair{build_iotap, dir.Sub("t-cat-build")},
                                     std::pair{tree.iotap, dir.Sub("t-cat-installed")}}) {
    RunResult r = RunClean({iotap, "run", "-o", trace, "--", "cat", data}, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(static_cast<int64_t>(r.out.size()), kDataBytes);
  }
  auto cat_build = StatsFiles(build_iotap, dir.Sub("t-cat-build"), {});
  auto cat_installed = StatsFiles(tree.iotap, dir.Sub("t-cat-installed"), {});
  EXPECT_EQ(cat_installed, cat_build);
  ASSERT_EQ(cat_installed.count(data), 1u);
  EXPECT_EQ(cat_installed[data]["read_bytes"], kDataBytes);
  EXPECT_EQ(cat_installed[data]["opens"], 1);
  EXPECT_EQ(cat_installed[data]["writes"], 0);

  // A Python job with step markers, through the helper each tree finds
  // (--torch-steps puts it on PYTHONPATH). No bytecode is read or written,
  // so that both runs open the same files; the script's directory, which
  // Python lists, holds the script alone, as the traces go elsewhere.
  fs::create_directories(dir.Sub("job"));
  WriteFile(dir.Sub("job/job.py"),
            "import sys, iotap\n"
            "print(iotap.__file__)\n"
            "print(sys.modules['sitecustomize'].__file__)\n"
            "with open(sys.argv[1], 'rb', buffering=0) as f:\n"
            "    for step in range(4):\n"
            "        with iotap.step(step):\n"
            "            f.read(65536)\n");
  const std::vector<std::string> python_env = {"PYTHONDONTWRITEBYTECODE=1",
                                               "PYTHONPYCACHEPREFIX=" + dir.Sub("no-pycache")};
  std::vector<std::string> printed;
  for (const auto& [iotap, trace] : {std::pair{build_iotap, dir.Sub("t-py-build")},
                                     std::pair{tree.iotap, dir.Sub("t-py-installed")}}) {
    std::vector<std::string> argv = python_env;
    argv.insert(argv.end(), {iotap, "run", "--torch-steps", "-o", trace, "--", Python(),
                             dir.Sub("job/job.py"), data});
    RunResult r = RunClean(argv, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    printed.push_back(r.out);
  }
  const std::string build_helper = fs::canonical(std::string(IOTAP_BINARY_DIR) + "/lib/python");
  const std::string installed_helper = fs::canonical(tree.python_dir);
  EXPECT_EQ(printed[1], absl::StrCat(installed_helper, "/iotap/__init__.py\n", installed_helper,
                                     "/iotap/_site/sitecustomize.py\n"));
  EXPECT_EQ(printed[0], absl::StrCat(build_helper, "/iotap/__init__.py\n", build_helper,
                                     "/iotap/_site/sitecustomize.py\n"));
  auto py_build = StatsFiles(build_iotap, dir.Sub("t-py-build"), {{build_helper, "HELPER"}});
  auto py_installed =
      StatsFiles(tree.iotap, dir.Sub("t-py-installed"), {{installed_helper, "HELPER"}});
  EXPECT_EQ(py_installed, py_build);
  ASSERT_EQ(py_installed.count(data), 1u);
  EXPECT_EQ(py_installed[data]["reads"], 4);
  EXPECT_EQ(py_installed[data]["read_bytes"], 4 * 65536);
  EXPECT_EQ(py_installed[data]["opens"], 1);
  EXPECT_EQ(py_installed.count("HELPER/iotap/__init__.py"), 1u);

  LoadedRun run = LoadRun(dir.Sub("t-py-installed"));
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& python = run.processes[0];
  EXPECT_EQ(python.header.shim_version(), IOTAP_VERSION);
  int begins = 0, ends = 0;
  for (const LoadedEvent& e : python.events) {
    begins += e.op == OP_STEP_BEGIN;
    ends += e.op == OP_STEP_END;
  }
  EXPECT_EQ(begins, 4);
  EXPECT_EQ(ends, 4);
}

// Loads iotap with Lmod from the moved tree's modulefiles and prints the
// environment after; fails the test if Lmod fails.
std::string EnvironmentAfterModuleLoad(const InstallTree& tree, const std::string& home) {
  const std::string lmod = "/usr/share/lmod/lmod/libexec/lmod";
  EXPECT_TRUE(fs::exists(lmod)) << "Lmod is missing: .ci/install-deps installs it";
  RunResult r = RunClean(
      {"bash", "-c",
       absl::StrCat("set -e; eval \"$(", lmod, " bash load iotap)\"; command -v iotap; "
                    "iotap --version; env")},
      home, {"MODULEPATH=" + tree.modulepath});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST(InstallTest, ModulefilesPutIotapOnPathAndPreloadNothing) {
  TempDir dir;
  InstallTree tree;
  ASSERT_NO_FATAL_FAILURE(tree = InstallAndMove(dir));
  const std::string lua = absl::StrCat(tree.modulepath, "/iotap/", IOTAP_VERSION, ".lua");
  // Lmod takes the Lua modulefile; without it, the Tcl one.
  for (bool with_lua : {true, false}) {
    SCOPED_TRACE(with_lua ? "Lua modulefile" : "Tcl modulefile");
    if (!with_lua) fs::remove(lua);
    std::vector<std::string> lines = absl::StrSplit(EnvironmentAfterModuleLoad(tree, dir.path()),
                                                    '\n', absl::SkipEmpty());
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[0], tree.iotap);
    EXPECT_THAT(lines[1], ::testing::StartsWith(absl::StrCat("iotap ", IOTAP_VERSION, " (commit ")));
    for (size_t i = 2; i < lines.size(); ++i) {
      const std::string& var = lines[i];
      if (var.starts_with("PATH=")) {
        EXPECT_EQ(var, absl::StrCat("PATH=", tree.prefix, "/", IOTAP_INSTALL_BINDIR, ":/usr/bin:/bin"));
      }
      // Nothing that would trace or change the jobs of whoever loads it.
      for (const char* forbidden : {"LD_PRELOAD=", "LD_LIBRARY_PATH=", "PYTHONPATH=", "IOTAP_"}) {
        EXPECT_FALSE(var.starts_with(forbidden)) << var;
      }
    }
  }
}

TEST(InstallTest, VersionNamesTheProjectAndTheCommit) {
  RunResult r = RunProgram({IotapBinary(), "--version"});
  ASSERT_EQ(r.exit_code, 0);
  std::string commit = IOTAP_CONFIGURED_COMMIT;
  if (commit.empty()) commit = SourceCommit();
  if (commit.empty()) commit = "unknown";
  // "-dirty" when tracked files had changes at build time.
  EXPECT_THAT(r.out, ::testing::MatchesRegex(absl::StrCat("iotap ", IOTAP_VERSION,
                                                          " \\(commit ", commit, "(-dirty)?\\)\n")));
}

}  // namespace
}  // namespace iotap::testing
