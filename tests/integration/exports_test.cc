// libiotap.so exports exactly what interpose/libiotap.map lists and depends on
// nothing but glibc, as the binutils see the built library:
//   - every defined dynamic symbol is a function named in the map, and every
//     name in the map is defined (nm -D --defined-only);
//   - every undefined symbol is a versioned glibc one (@GLIBC_x.y, from libc,
//     libdl, libpthread or ld.so) or one of the toolchain's weak hooks
//     (nm -D --undefined-only, readelf -V);
//   - the only libraries it needs are libc.so.6 and the dynamic loader: no
//     libstdc++, libzstd or libprotobuf (readelf -d).

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

// The output of a binutils command on the shim, split into lines.
std::vector<std::string> Lines(const std::vector<std::string>& argv) {
  RunResult r = RunProgram(argv);
  EXPECT_EQ(r.exit_code, 0) << argv[0] << ": " << r.err;
  std::vector<std::string> lines;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) lines.push_back(line);
  }
  return lines;
}

struct Symbol {
  char type;
  std::string name;  // with its @VERSION, if any
};

// `nm -D` lines: "ADDRESS TYPE NAME" for defined symbols, "TYPE NAME" for
// undefined ones.
std::vector<Symbol> Nm(const std::string& which) {
  std::vector<Symbol> symbols;
  for (const std::string& line : Lines({"nm", "-D", which, ShimLibrary()})) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string word; fields >> word;) f.push_back(word);
    if (f.size() < 2 || f[f.size() - 2].size() != 1) {
      ADD_FAILURE() << "unexpected nm line: " << line;
      continue;
    }
    symbols.push_back({f[f.size() - 2][0], f.back()});
  }
  return symbols;
}

// The dynamic loader, ld-linux-x86-64.so.2 or its kin on other machines.
bool IsLoader(const std::string& file) { return file.rfind("ld-linux", 0) == 0; }

// Weak references every shared object built by GCC carries; nothing binds
// them unless a profiler or transactional-memory runtime is present.
const std::set<std::string> kToolchainWeak = {"__gmon_start__", "_ITM_deregisterTMCloneTable",
                                              "_ITM_registerTMCloneTable", "__cxa_finalize",
                                              "__cxa_finalize@GLIBC_2.2.5"};

// The core section of the map is always exported whole; a layer's section
// (CUDA, built only with its toolkit) is exported whole or not at all.
TEST(ExportsTest, DefinesExactlyTheMap) {
  std::map<std::string, std::vector<std::string>> sections = MapSections();
  ASSERT_FALSE(sections[""].empty()) << "cannot read interpose/libiotap.map";
  std::set<std::string> map;
  for (const auto& [layer, names] : sections) map.insert(names.begin(), names.end());
  std::set<std::string> defined;
  for (const Symbol& s : Nm("--defined-only")) {
    EXPECT_EQ(s.type, 'T') << s.name << " is exported but is not a function";
    EXPECT_EQ(map.count(s.name), 1u) << s.name << " is exported but not in libiotap.map";
    defined.insert(s.name);
  }
  for (const auto& [layer, names] : sections) {
    size_t exported = 0;
    for (const std::string& name : names) exported += defined.count(name);
    if (layer.empty()) {
      EXPECT_EQ(exported, names.size()) << "core symbols in libiotap.map but not exported";
    } else {
      EXPECT_TRUE(exported == 0 || exported == names.size())
          << "the " << layer << " layer exports " << exported << " of its " << names.size()
          << " symbols";
    }
  }
}

TEST(ExportsTest, NeedsOnlyVersionedGlibcSymbols) {
  static const std::regex kGlibc(R"([A-Za-z_][A-Za-z0-9_]*@GLIBC_[0-9]+(\.[0-9]+)+)");
  std::vector<Symbol> undefined = Nm("--undefined-only");
  ASSERT_FALSE(undefined.empty());
  for (const Symbol& s : undefined) {
    if (kToolchainWeak.count(s.name) != 0) {
      EXPECT_EQ(s.type, 'w') << s.name << " must stay a weak reference";
      continue;
    }
    EXPECT_TRUE(std::regex_match(s.name, kGlibc))
        << s.name << " (" << s.type << ") is not a versioned glibc symbol";
  }
}

// The versions above are glibc's only if the files that define them are:
// readelf -V lists, per needed file, the versions required of it.
TEST(ExportsTest, VersionsComeFromGlibcLibraries) {
  static const std::regex kFile(R"(File: (\S+))");
  const std::set<std::string> glibc = {"libc.so.6", "libdl.so.2", "libpthread.so.0"};
  std::set<std::string> files;
  for (const std::string& line : Lines({"readelf", "-V", "--wide", ShimLibrary()})) {
    std::smatch m;
    if (std::regex_search(line, m, kFile)) files.insert(m[1]);
  }
  EXPECT_FALSE(files.empty()) << "no version needs: the glibc symbols are unversioned";
  for (const std::string& file : files) {
    EXPECT_TRUE(glibc.count(file) == 1 || IsLoader(file)) << "symbols versioned by " << file;
  }
}

TEST(ExportsTest, NeedsOnlyLibc) {
  static const std::regex kNeeded(R"(\(NEEDED\)\s+Shared library: \[(\S+)\])");
  std::set<std::string> needed;
  for (const std::string& line : Lines({"readelf", "-d", "--wide", ShimLibrary()})) {
    std::smatch m;
    if (std::regex_search(line, m, kNeeded) && !IsLoader(m[1])) needed.insert(m[1]);
  }
  EXPECT_EQ(needed, std::set<std::string>{"libc.so.6"});
}

}  // namespace
}  // namespace iotap::testing
