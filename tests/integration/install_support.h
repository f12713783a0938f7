// Helpers for the tests of the installed tree and the Debian package
// (install_test.cc, package_test.cc): running a program in a clean
// environment, what an ELF file links, which shim a process mapped, and the
// per-file counts of `iotap stats --json` from a given iotap binary.
//
//   InstallTree tree = InstallTree::Layout(prefix);
//   RunResult r = RunClean({tree.iotap, "run", "-o", trace, "--", "cat", "/proc/self/maps"});
//   EXPECT_EQ(MappedShims(r.out), std::set<std::string>{tree.shim});

#ifndef IOTAP_TESTS_INTEGRATION_INSTALL_SUPPORT_H_
#define IOTAP_TESTS_INTEGRATION_INSTALL_SUPPORT_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/testing.h"

namespace iotap::testing {

// Where the files of an installed tree are (README.md, "Installing"), for a
// prefix and the library directory the build was configured with.
struct InstallTree {
  std::string prefix;
  std::string iotap;       // PREFIX/bin/iotap
  std::string shim;        // PREFIX/LIBDIR/libiotap.so
  std::string python_dir;  // PREFIX/LIBDIR/iotap/python
  std::string modulepath;  // PREFIX/share/modulefiles

  static InstallTree Layout(const std::string& prefix);
};

// The files an installed tree must hold, relative to its prefix ("bin/iotap",
// ...), from the build's configuration and the source tree (every .py file of
// the Python helper, every schema in proto/iotap).
std::set<std::string> ExpectedInstalledFiles();

// The regular files under `dir`, relative to it.
std::set<std::string> FilesUnder(const std::string& dir);

// Runs argv with nothing of the caller's environment: PATH=/usr/bin:/bin,
// HOME=`home`, LC_ALL=C and `env` (NAME=VALUE each).
RunResult RunClean(const std::vector<std::string>& argv, const std::string& home,
                   const std::vector<std::string>& env = {});

// The NEEDED, RPATH and RUNPATH entries of an ELF file's dynamic section
// (readelf -d). Fails the test if readelf fails.
struct DynamicSection {
  std::set<std::string> needed;
  std::vector<std::string> rpath;    // RPATH and RUNPATH values
};
DynamicSection ReadDynamic(const std::string& elf);

// The Debian package (name only, no architecture) that holds the library the
// dynamic loader loads for `soname` when it starts `elf` (ldd, then dpkg -S);
// "" if none.
std::string PackageOfLibrary(const std::string& elf, const std::string& soname);

// The paths of every libiotap.so in a /proc/PID/maps text.
std::set<std::string> MappedShims(const std::string& maps);

// `iotap stats --json trace_dir` run by `iotap` (an installed or the build
// tree's binary): per file, every count (reads, read_bytes, opens,
// metadata_ops, ...; not the times), with every occurrence of each key of
// `rename` in the paths replaced by its value, so that runs from different
// trees compare. Fails the test if the command fails.
std::map<std::string, std::map<std::string, int64_t>> StatsFiles(
    const std::string& iotap, const std::string& trace_dir,
    const std::map<std::string, std::string>& rename);

// The words of a Debian relationship field ("libc6 (>= 2.34), libzstd1")
// without their versions: {"libc6", "libzstd1"}.
std::set<std::string> PackageNames(const std::string& field);

}  // namespace iotap::testing

#endif  // IOTAP_TESTS_INTEGRATION_INSTALL_SUPPORT_H_
