// The Debian package `cpack -G DEB` builds in the build tree: its files, its
// control fields, its dependencies against what the packaged binaries really
// link, and a working `iotap run` from the package unpacked anywhere.

#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>

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

std::string Field(const std::string& deb, const std::string& name) {
  RunResult r = RunProgram({"dpkg-deb", "--field", deb, name});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return std::string(absl::StripSuffix(r.out, "\n"));
}

// The regular files of `dpkg-deb --contents`, without the leading "./":
// -rwxr-xr-x root/root  1234 2026-01-01 00:00 ./usr/bin/iotap
std::set<std::string> PackagedFiles(const std::string& deb) {
  RunResult r = RunProgram({"dpkg-deb", "--contents", deb});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> files;
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    size_t path = line.find(" ./");
    if (line.empty() || line[0] != '-' || path == std::string::npos) continue;
    files.insert(line.substr(path + 3));
  }
  return files;
}

TEST(PackageTest, DebianPackageHoldsAWorkingIotap) {
  TempDir dir;
  // cpack installs what the build made into its own staging directory under
  // -B; with Ninja it builds nothing.
  RunResult cpack = RunProgram({"cpack", "-G", "DEB", "--config",
                                std::string(IOTAP_BINARY_DIR) + "/CPackConfig.cmake", "-B",
                                dir.Sub("package")});
  ASSERT_EQ(cpack.exit_code, 0) << cpack.out << cpack.err;
  RunResult arch = RunProgram({"dpkg", "--print-architecture"});
  ASSERT_EQ(arch.exit_code, 0);
  const std::string architecture(absl::StripSuffix(arch.out, "\n"));
  const std::string deb =
      dir.Sub(absl::StrCat("package/iotap_", IOTAP_VERSION, "_", architecture, ".deb"));
  ASSERT_TRUE(fs::exists(deb)) << cpack.out;

  // Under /usr, the files of an installed tree, no more.
  std::set<std::string> expected;
  for (const std::string& f : ExpectedInstalledFiles()) expected.insert("usr/" + f);
  EXPECT_EQ(PackagedFiles(deb), expected);

  EXPECT_EQ(Field(deb, "Package"), "iotap");
  EXPECT_EQ(Field(deb, "Version"), IOTAP_VERSION);
  EXPECT_EQ(Field(deb, "Architecture"), architecture);
  EXPECT_EQ(Field(deb, "Section"), "devel");
  EXPECT_THAT(Field(deb, "Maintainer"), ::testing::MatchesRegex(".+ <.+@.+>"));
  EXPECT_THAT(Field(deb, "Description"),
              ::testing::StartsWith("I/O tracer for machine-learning training jobs"));
  // Python only serves --torch-steps and the marker helper.
  EXPECT_EQ(Field(deb, "Recommends"), "python3");

  // Unpacked anywhere, without installing.
  const std::string root = dir.Sub("root");
  RunResult x = RunProgram({"dpkg", "-x", deb, root});
  ASSERT_EQ(x.exit_code, 0) << x.err;
  InstallTree tree = InstallTree::Layout(root + "/usr");

  // Depends: one package per library the binaries link (NEEDED), each the
  // package that holds the library the loader finds; every one versioned.
  std::set<std::string> linked;
  for (const std::string& elf : {tree.iotap, tree.shim}) {
    DynamicSection d = ReadDynamic(elf);
    EXPECT_EQ(d.rpath, std::vector<std::string>{}) << elf;
    for (const std::string& soname : d.needed) {
      std::string package = PackageOfLibrary(elf, soname);
      EXPECT_NE(package, "") << elf << " links " << soname << ", which no package holds";
      linked.insert(package);
    }
  }
  EXPECT_EQ(ReadDynamic(tree.shim).needed, std::set<std::string>{"libc.so.6"});
  const std::string depends = Field(deb, "Depends");
  EXPECT_EQ(PackageNames(depends), linked) << depends;
  EXPECT_THAT(depends, ::testing::Not(::testing::HasSubstr("python")));
  std::regex versioned(R"(^[a-z0-9.+-]+ \(>= [^)]+\)$)");
  for (absl::string_view item : absl::StrSplit(depends, ", ")) {
    EXPECT_TRUE(std::regex_match(std::string(item), versioned)) << item;
  }

  // The unpacked iotap traces with its own shim, from a clean environment.
  const std::string data = dir.Sub("data.bin");
  WriteFile(data, std::string(300000, 'y'));
  RunResult maps = RunClean({tree.iotap, "run", "-o", dir.Sub("t-maps"), "--", "cat",
                             "/proc/self/maps"}, dir.path());
  ASSERT_EQ(maps.exit_code, 0) << maps.err;
  EXPECT_EQ(MappedShims(maps.out), std::set<std::string>{tree.shim});
  RunResult cat =
      RunClean({tree.iotap, "run", "-o", dir.Sub("t-cat"), "--", "cat", data}, dir.path());
  ASSERT_EQ(cat.exit_code, 0) << cat.err;
  EXPECT_EQ(cat.out.size(), 300000u);
  auto files = StatsFiles(tree.iotap, dir.Sub("t-cat"), {});
  ASSERT_EQ(files.count(data), 1u);
  EXPECT_EQ(files[data]["read_bytes"], 300000);
  EXPECT_EQ(files[data]["opens"], 1);
  RunResult version = RunProgram({tree.iotap, "--version"});
  EXPECT_THAT(version.out, ::testing::StartsWith(absl::StrCat("iotap ", IOTAP_VERSION, " (commit ")));
}

}  // namespace
}  // namespace iotap::testing
