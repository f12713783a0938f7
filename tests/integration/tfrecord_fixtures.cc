#include "tests/integration/tfrecord_fixtures.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "proto/wire/crc32c.h"
#include "proto/wire/little_endian.h"
#include "tests/integration/testing.h"

namespace iotap::testing {

namespace {

namespace fs = std::filesystem;

// Holds an exclusive lock on `path` while alive: tests run in parallel.
class FileLock {
 public:
  explicit FileLock(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_CREAT, 0644)) {
    if (fd_ >= 0) flock(fd_, LOCK_EX);
  }
  ~FileLock() {
    if (fd_ >= 0) close(fd_);
  }

 private:
  int fd_;
};

}  // namespace

std::vector<TrueRecord> RecordTable(const std::string& s) {
  std::vector<TrueRecord> records;
  size_t at = 0;
  while (at < s.size()) {
    if (s.size() - at < 16) {
      ADD_FAILURE() << "file ends inside a header at " << at;
      break;
    }
    const uint8_t* header = reinterpret_cast<const uint8_t*>(s.data()) + at;
    uint64_t len = wire::LoadLe64(header);
    if (wire::MaskCrc32c(wire::Crc32c(header, 8)) != wire::LoadLe32(header + 8) ||
        s.size() - at - 16 < len) {
      ADD_FAILURE() << "bad record header at " << at;
      break;
    }
    if (wire::MaskCrc32c(wire::Crc32c(header + 12, len)) != wire::LoadLe32(header + 12 + len)) {
      ADD_FAILURE() << "bad data CRC for the record at " << at;
      break;
    }
    records.push_back({static_cast<int64_t>(at), len});
    at += 16 + len;
  }
  return records;
}

std::string IndexFile(const std::vector<TrueRecord>& records) {
  std::string out;
  for (const TrueRecord& r : records) {
    out += std::to_string(r.offset) + " " + std::to_string(r.Next() - r.offset) + "\n";
  }
  return out;
}

std::string NpmTfRecordFile(int records, int seed, const std::string& compression,
                            std::string* why) {
  std::string dir = std::string(IOTAP_BINARY_DIR) + "/tfrecord_writer";
  std::error_code ec;
  fs::create_directories(dir + "/out", ec);
  FileLock lock(dir + "/.lock");
  for (const char* name : {"package.json", "package-lock.json", "write_tfrecords.js"}) {
    fs::copy_file(SourcePath(std::string("tests/integration/tfrecord_writer/") + name),
                  dir + "/" + name, fs::copy_options::overwrite_existing, ec);
  }
  if (!fs::exists(dir + "/node_modules/@roboflow/tfrecords/package.json")) {
    RunOptions o;
    o.cwd = dir;
    o.timeout_seconds = 300;
    RunResult r = RunProgram({"npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"}, o);
    if (r.exit_code != 0) {
      *why = "cannot install @roboflow/tfrecords with `npm ci` (exit " +
             std::to_string(r.exit_code) +
             (r.exit_code == 127 ? ": no npm on PATH" : ": is the npm registry reachable?") +
             "): " + r.err;
      return "";
    }
  }
  std::string name = "records-" + std::to_string(records) + "-seed-" + std::to_string(seed);
  std::string path = dir + "/out/" + name + (compression == "gzip" ? ".tfrecord.gz" : ".tfrecord");
  if (compression == "zlib") path = dir + "/out/" + name + "-zlib.tfrecord";
  if (!fs::exists(path)) {
    RunOptions o;
    o.cwd = dir;
    std::string tmp = path + ".tmp";
    RunResult r = RunProgram({"node", "write_tfrecords.js", tmp, std::to_string(records),
                              std::to_string(seed), compression},
                             o);
    if (r.exit_code != 0) {
      *why = "the npm TFRecord writer failed: " + r.err;
      return "";
    }
    fs::rename(tmp, path, ec);
  }
  return path;
}

}  // namespace iotap::testing
