// Ground truth for unmodified C programs: for dd, cat, cp and tar, the reads,
// bytes read and opens of every data file in `iotap stats --json` equal what
// strace -f sees in the same run, and the bytes equal the files' sizes.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

struct DataFile {
  std::string path;
  size_t size;
};

class CoreutilsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = dir_.Sub("data");
    ASSERT_EQ(RunProgram({"mkdir", data_dir_}).exit_code, 0);
    // Sizes chosen to end mid-buffer for every tool's block size.
    const size_t sizes[] = {1048576 + 123, 300 * 1024, 4097, 0};
    const char* names[] = {"a.bin", "b.bin", "c.txt", "empty"};
    for (int i = 0; i < 4; ++i) {
      std::string contents(sizes[i], '\0');
      for (size_t k = 0; k < contents.size(); ++k) contents[k] = static_cast<char>(k * 31 + i);
      std::string path = data_dir_ + "/" + names[i];
      WriteFile(path, contents);
      files_.push_back({path, sizes[i]});
    }
  }

  // Runs argv under strace and iotap and compares every data file.
  void ExpectMatchesStrace(const std::vector<std::string>& argv,
                           const std::vector<DataFile>& read_whole) {
    std::string trace = dir_.Sub("trace");
    std::string log = dir_.Sub("strace.log");
    RunResult r = RunTracedUnderStrace(argv, trace, log);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto strace = ParseStrace(log);
    StatsSummary stats = StatsOf(trace);
    EXPECT_EQ(stats.dropped_events, 0u);
    for (const DataFile& f : files_) {
      const StraceFileCounts& truth = strace[f.path];
      const StatsFileCounts& seen = stats.files[f.path];
      EXPECT_EQ(seen.reads, truth.reads + truth.copy_in) << f.path;
      EXPECT_EQ(seen.read_bytes, truth.read_bytes + truth.copy_in_bytes) << f.path;
      EXPECT_EQ(seen.opens, truth.opens) << f.path;
    }
    for (const DataFile& f : read_whole) {
      EXPECT_EQ(stats.files[f.path].read_bytes, f.size) << f.path;
      EXPECT_GE(stats.files[f.path].opens, 1) << f.path;
    }
  }

  TempDir dir_;
  std::string data_dir_;
  std::vector<DataFile> files_;
};

TEST_F(CoreutilsTest, Cat) {
  ExpectMatchesStrace({"cat", files_[0].path, files_[1].path, files_[2].path, files_[3].path},
                      files_);
}

TEST_F(CoreutilsTest, DdWholeFile) {
  ExpectMatchesStrace(
      {"dd", "if=" + files_[0].path, "of=" + dir_.Sub("copy.bin"), "bs=4096", "status=none"},
      {files_[0]});
}

TEST_F(CoreutilsTest, DdPartialWithSkip) {
  // 50 blocks of 1000 bytes after skipping 3: exactly 50,000 bytes read.
  ExpectMatchesStrace({"dd", "if=" + files_[0].path, "of=/dev/null", "bs=1000", "skip=3",
                       "count=50", "status=none"},
                      {});
  StatsSummary stats = StatsOf(dir_.Sub("trace"));
  EXPECT_EQ(stats.files[files_[0].path].read_bytes, 50000u);
}

TEST_F(CoreutilsTest, Cp) {
  ExpectMatchesStrace({"cp", files_[0].path, files_[1].path, dir_.Sub("")}, {files_[0], files_[1]});
  StatsSummary stats = StatsOf(dir_.Sub("trace"));
  EXPECT_EQ(stats.files[dir_.Sub("a.bin")].write_bytes, files_[0].size);
}

TEST_F(CoreutilsTest, Tar) {
  // tar learns an empty file's size from stat and never opens it (strace
  // agrees); the others it reads whole.
  ExpectMatchesStrace({"tar", "-cf", dir_.Sub("archive.tar"), "-C", data_dir_, "."},
                      {files_[0], files_[1], files_[2]});
  EXPECT_EQ(StatsOf(dir_.Sub("trace")).files[files_[3].path].opens, 0);
}

}  // namespace
}  // namespace iotap::testing
