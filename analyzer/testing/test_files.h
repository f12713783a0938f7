// Files for the analyzer's unit tests: the shared third-party fixtures (the
// step-log tests read them), temporary files, and gzip streams (whole, or
// laid out so that a cut falls at a known byte of the uncompressed data).
//
//   std::string path = WriteTemp("steps.jsonl", R"({"step": 1, "start": 1, "end": 2})");
//   std::string bytes = ReadBytes(path);
//   std::string fixture = SharedFixture("README.md");    // ../shared/fixtures/README.md

#ifndef IOTAP_ANALYZER_TESTING_TEST_FILES_H_
#define IOTAP_ANALYZER_TESTING_TEST_FILES_H_

#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "analyzer/testing/sample_runs.h"
#include "gtest/gtest.h"

namespace iotap::analyzer::testing {

// A file under ../shared/fixtures (next to the repository), read-only. A
// missing fixture fails the test: these tests hold the readers against files
// other people's software wrote, and must not pass without them.
inline std::string SharedFixture(const std::string& relative) {
  std::string path = std::string(IOTAP_SOURCE_DIR) + "/../shared/fixtures/" + relative;
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "missing shared fixture " << path
                  << ": the step-log tests read the third-party files in ../shared/fixtures "
                     "(see its README.md); restore them";
  }
  return path;
}

// The one file in fixture directory `dir` whose name starts with `prefix`.
inline std::string SharedFixtureIn(const std::string& dir, const std::string& prefix) {
  std::string full = SharedFixture(dir);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(full, ec)) {
    if (entry.path().filename().string().rfind(prefix, 0) == 0) return entry.path().string();
  }
  ADD_FAILURE() << "no file " << prefix << "* in shared fixture directory " << full;
  return full + "/" + prefix + "-missing";
}

// Data committed next to the tests (analyzer/steps/testdata).
inline std::string TestData(const std::string& name) {
  return std::string(IOTAP_SOURCE_DIR) + "/analyzer/steps/testdata/" + name;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A directory of this test process's own, removed when it exits.
inline const std::string& TempDirectory() {
  static const struct Directory {
    std::string path = ::testing::TempDir() + "iotap-test-" + std::to_string(getpid());
    Directory() { std::filesystem::create_directories(path); }
    ~Directory() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } directory;
  return directory.path;
}

// A directory of its own under TempDirectory(), emptied when made:
// FreshDirectory dir("exchanges"); dir.Sub("a.txt") is a path in it.
class FreshDirectory {
 public:
  explicit FreshDirectory(const std::string& name) : path_(TempDirectory() + "/" + name) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// How many times `needle` occurs in `haystack` (overlaps counted).
inline int Occurrences(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The directory `name` in TempDirectory(), filled by Write the first time
// it is asked for (each Write's instantiation keeps its own).
template <void (*Write)(const std::string&)>
const std::string& WrittenOnce(const char* name) {
  static const std::string dir = [name] {
    std::string d = TempDirectory() + "/" + name;
    std::filesystem::create_directories(d);
    Write(d);
    return d;
  }();
  return dir;
}

// The sample run of hostile names (sample_runs.h), written once into
// TempDirectory().
inline const std::string& HostileRunDirectory() {
  return WrittenOnce<WriteHostileRun>("hostile-run");
}

// Writes `bytes` to a fresh file called `name` and returns its path.
inline std::string WriteTemp(const std::string& name, const std::string& bytes) {
  std::string path = TempDirectory() + "/" + name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  return path;
}

// `data` as a gzip file, compressed at `level` (1-9).
inline std::string Gzip(const std::string& data, int level = 6) {
  z_stream z = {};
  deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// `data` (at most 65535 bytes) as a gzip file holding one stored (not
// compressed) block: a 10-byte gzip header, a 5-byte block header, the data,
// then CRC32 and length. Cut at 15 + N, it yields exactly N bytes of data.
inline std::string GzipStored(const std::string& data) {
  std::string out("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10);
  uint16_t len = static_cast<uint16_t>(data.size());
  uint16_t nlen = static_cast<uint16_t>(~len);
  out += '\x01';  // final block, stored
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  out += static_cast<char>(nlen & 0xff);
  out += static_cast<char>(nlen >> 8);
  out += data;
  uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
  uint32_t size = static_cast<uint32_t>(data.size());
  for (uint32_t v : {crc, size}) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  return out;
}

}  // namespace iotap::analyzer::testing

#endif  // IOTAP_ANALYZER_TESTING_TEST_FILES_H_
