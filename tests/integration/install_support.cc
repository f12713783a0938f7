#include "tests/integration/install_support.h"

#include <filesystem>
#include <regex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace iotap::testing {

namespace fs = std::filesystem;

InstallTree InstallTree::Layout(const std::string& prefix) {
  InstallTree t;
  t.prefix = prefix;
  t.iotap = absl::StrCat(prefix, "/", IOTAP_INSTALL_BINDIR, "/iotap");
  t.shim = absl::StrCat(prefix, "/", IOTAP_INSTALL_LIBDIR, "/libiotap.so");
  t.python_dir = absl::StrCat(prefix, "/", IOTAP_INSTALL_LIBDIR, "/iotap/python");
  t.modulepath = absl::StrCat(prefix, "/", IOTAP_INSTALL_DATADIR, "/modulefiles");
  return t;
}

std::set<std::string> FilesUnder(const std::string& dir) {
  std::set<std::string> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file()) files.insert(fs::relative(it->path(), dir).string());
  }
  return files;
}

std::set<std::string> ExpectedInstalledFiles() {
  const std::string lib = IOTAP_INSTALL_LIBDIR;
  const std::string data = IOTAP_INSTALL_DATADIR;
  std::set<std::string> files = {
      absl::StrCat(IOTAP_INSTALL_BINDIR, "/iotap"),
      lib + "/libiotap.so",
      absl::StrCat(IOTAP_INSTALL_INCLUDEDIR, "/iotap.h"),
      data + "/iotap/findings.textproto",
      absl::StrCat(IOTAP_INSTALL_DOCDIR, "/README.md"),
      absl::StrCat(data, "/modulefiles/iotap/", IOTAP_VERSION),
      absl::StrCat(data, "/modulefiles/iotap/", IOTAP_VERSION, ".lua"),
  };
  for (const std::string& py : FilesUnder(SourcePath("interpose/python/iotap"))) {
    if (py.ends_with(".py")) files.insert(absl::StrCat(lib, "/iotap/python/iotap/", py));
  }
  for (const auto& entry : fs::directory_iterator(SourcePath("proto/iotap"))) {
    if (entry.path().extension() == ".proto") {
      files.insert(absl::StrCat(data, "/iotap/proto/iotap/", entry.path().filename().string()));
    }
  }
  return files;
}

RunResult RunClean(const std::vector<std::string>& argv, const std::string& home,
                   const std::vector<std::string>& env) {
  std::vector<std::string> full = {"/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "HOME=" + home,
                                   "LC_ALL=C"};
  full.insert(full.end(), env.begin(), env.end());
  full.insert(full.end(), argv.begin(), argv.end());
  return RunProgram(full);
}

DynamicSection ReadDynamic(const std::string& elf) {
  DynamicSection d;
  RunResult r = RunProgram({"readelf", "--dynamic", "--wide", elf});
  if (r.exit_code != 0) {
    ADD_FAILURE() << "readelf -d " << elf << ": " << r.err;
    return d;
  }
  // 0x0000000000000001 (NEEDED)             Shared library: [libc.so.6]
  // 0x000000000000001d (RUNPATH)            Library runpath: [$ORIGIN/../lib]
  static const std::regex kEntry(R"(\((NEEDED|RPATH|RUNPATH)\)\s+[^[]*\[([^\]]*)\])");
  std::istringstream lines(r.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, kEntry)) continue;
    if (m[1] == "NEEDED") {
      d.needed.insert(m[2]);
    } else {
      d.rpath.push_back(absl::StrCat(m[1].str(), "=", m[2].str()));
    }
  }
  return d;
}

std::string PackageOfLibrary(const std::string& elf, const std::string& soname) {
  RunResult ldd = RunProgram({"ldd", elf});
  std::string path;
  std::istringstream lines(ldd.out);
  std::string line;
  //         libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f...)
  //         /lib64/ld-linux-x86-64.so.2 (0x00007f...)
  while (std::getline(lines, line) && path.empty()) {
    std::string entry(absl::StripLeadingAsciiWhitespace(line));
    entry = entry.substr(0, entry.find(" ("));
    if (entry.starts_with(soname + " => ")) {
      path = entry.substr(soname.size() + 4);
    } else if (entry.starts_with("/") && fs::path(entry).filename() == soname) {
      path = entry;
    }
  }
  if (path.empty() || !fs::exists(path)) return "";
  // dpkg knows a file by the path its package installed it at: /lib/... or,
  // after the /usr merge, /usr/lib/...; try the path as found, then both.
  std::vector<std::string> tries = {path, fs::canonical(path).string()};
  if (path.starts_with("/lib/")) tries.push_back("/usr" + path);
  if (path.starts_with("/usr/lib/")) tries.push_back(path.substr(4));
  for (const std::string& p : tries) {
    RunResult owner = RunProgram({"dpkg", "-S", p});
    // libc6:amd64: /lib/x86_64-linux-gnu/libc.so.6
    if (owner.exit_code == 0) return owner.out.substr(0, owner.out.find_first_of(":,"));
  }
  return "";
}

std::set<std::string> MappedShims(const std::string& maps) {
  std::set<std::string> shims;
  std::istringstream lines(maps);
  std::string line;
  while (std::getline(lines, line)) {
    size_t path = line.find('/');
    if (path != std::string::npos && line.ends_with("/libiotap.so")) shims.insert(line.substr(path));
  }
  return shims;
}

std::map<std::string, std::map<std::string, int64_t>> StatsFiles(
    const std::string& iotap, const std::string& trace_dir,
    const std::map<std::string, std::string>& rename) {
  std::map<std::string, std::map<std::string, int64_t>> files;
  RunResult r = RunProgram({iotap, "stats", "--json", trace_dir});
  if (r.exit_code != 0) {
    ADD_FAILURE() << iotap << " stats failed: " << r.err;
    return files;
  }
  google::protobuf::Struct root;
  if (auto status = google::protobuf::util::JsonStringToMessage(r.out, &root); !status.ok()) {
    ADD_FAILURE() << iotap << " stats --json is not JSON: " << status.ToString();
    return files;
  }
  for (const auto& v : root.fields().at("files").list_value().values()) {
    std::string path = v.struct_value().fields().at("path").string_value();
    for (const auto& [from, to] : rename) path = absl::StrReplaceAll(path, {{from, to}});
    std::map<std::string, int64_t>& counts = files[path];
    for (const auto& [key, value] : v.struct_value().fields()) {
      if (value.has_number_value() && !key.ends_with("_seconds")) {
        counts[key] = static_cast<int64_t>(value.number_value());
      }
    }
  }
  return files;
}

std::set<std::string> PackageNames(const std::string& field) {
  std::set<std::string> names;
  for (absl::string_view item : absl::StrSplit(field, ',', absl::SkipWhitespace())) {
    item = absl::StripAsciiWhitespace(item);
    names.insert(std::string(item.substr(0, item.find_first_of(" (:"))));
  }
  return names;
}

}  // namespace iotap::testing
