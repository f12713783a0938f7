// The commands of inspect_commands.cc as a user runs them: `iotap stats
// --json` on a crafted trace whose sums pass their types' limits (stats
// counts with the report's accumulators, so its figures saturate as the
// report's do: RunAnalysisTest.SumsOfHostileValuesSaturate); `iotap dump`
// writes are checked with the other commands' in output_test.cc.

#include <filesystem>
#include <string>

#include "analyzer/read/event.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::analyzer {
namespace {

using iotap::testing::IotapBinary;
using iotap::testing::RunProgram;
using iotap::testing::RunResult;
using testing::Occurrences;
using testing::TempDirectory;

TEST(StatsCommandTest, SumsOfHostileValuesSaturate) {
  // Eight reads of 2^62 bytes, each lasting from 1 s to 2^61 ns: 2^65 bytes
  // (0 once wrapped) and about 1.8e19 ns (past INT64_MAX).
  constexpr int64_t kStart = 1'000'000'000;
  const std::string dir = TempDirectory() + "/hostile-sums";
  std::filesystem::create_directories(dir);
  SyntheticProcess p(300, 1, "/usr/bin/python3", {"python3", "crafted.py"}, kStart);
  uint32_t f = p.Path("/data/crafted.bin");
  for (uint32_t k = 0; k < 8; ++k) {
    p.Read(OP_PREAD, kStart, kMaxMonotonicNs, f, /*offset=*/0, uint64_t{1} << 62, 300 + k);
  }
  p.End(EndOfTrace::REASON_EXIT, 0, kMaxMonotonicNs);
  p.WriteTo(dir + "/crafted.iotap");

  RunResult r = RunProgram({IotapBinary(), "stats", "--json", dir});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Integers exactly: 2^64 - 1 for the file's and the process's bytes read.
  EXPECT_EQ(Occurrences(r.out, "\"read_bytes\": 18446744073709551615"), 2) << r.out;

  google::protobuf::Struct stats;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &stats).ok()) << r.out;
  const auto& files = stats.fields().at("files").list_value().values();
  ASSERT_EQ(files.size(), 1);
  const auto& file = files[0].struct_value().fields();
  EXPECT_EQ(file.at("path").string_value(), "/data/crafted.bin");
  EXPECT_EQ(file.at("reads").number_value(), 8);
  EXPECT_EQ(file.at("posix_reads").number_value(), 8);
  // INT64_MAX ns, as printed with six significant digits.
  EXPECT_EQ(file.at("read_seconds").number_value(), 9.22337e9);
  const auto& processes = stats.fields().at("process_list").list_value().values();
  ASSERT_EQ(processes.size(), 1);
  EXPECT_EQ(processes[0].struct_value().fields().at("reads").number_value(), 8);
}

// The files' rows are made one at a time as they are printed
// (RunCounts::FillFileRow): the text's first rows and its totals, and the
// JSON's every row, in the same order, most bytes first and then by path.
TEST(StatsCommandTest, TextAndJsonListTheFilesInOneOrder) {
  constexpr int64_t kStart = 1'000'000'000;
  const std::string dir = TempDirectory() + "/stats-rows";
  std::filesystem::create_directories(dir);
  SyntheticProcess p(301, 1, "/usr/bin/python3", {"python3", "rows.py"}, kStart);
  const char* paths[] = {"/data/train/b.jpg", "/data/train/c.jpg", "/data/train/a.jpg"};
  const uint64_t bytes[] = {1000, 5000, 1000};
  for (int k = 0; k < 3; ++k) {
    const uint32_t f = p.Path(paths[k]);
    const int64_t t = kStart + (k + 1) * 1'000'000;
    p.Read(OP_PREAD, t, t + 1000, f, /*offset=*/0, bytes[k]);
  }
  p.End(EndOfTrace::REASON_EXIT, 0, kStart + 10'000'000);
  p.WriteTo(dir + "/rows.iotap");

  RunResult text = RunProgram({IotapBinary(), "stats", dir});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("files: 3, opens 0, reads 3 (6.84 KiB), writes 0 (0 B)\n"),
            std::string::npos)
      << text.out;
  const size_t c = text.out.find("/data/train/c.jpg");
  const size_t a = text.out.find("/data/train/a.jpg");
  const size_t b = text.out.find("/data/train/b.jpg");
  ASSERT_NE(c, std::string::npos) << text.out;
  EXPECT_LT(c, a);
  EXPECT_LT(a, b);

  RunResult json = RunProgram({IotapBinary(), "stats", "--json", dir});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  google::protobuf::Struct stats;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json.out, &stats).ok()) << json.out;
  const auto& files = stats.fields().at("files").list_value().values();
  ASSERT_EQ(files.size(), 3);
  const char* want[] = {"/data/train/c.jpg", "/data/train/a.jpg", "/data/train/b.jpg"};
  const double want_bytes[] = {5000, 1000, 1000};
  for (int k = 0; k < 3; ++k) {
    const auto& f = files[k].struct_value().fields();
    EXPECT_EQ(f.at("path").string_value(), want[k]);
    EXPECT_EQ(f.at("read_bytes").number_value(), want_bytes[k]);
    EXPECT_EQ(f.at("kind").string_value(), "file");
    EXPECT_EQ(f.at("processes").number_value(), 1);
  }
}

}  // namespace
}  // namespace iotap::analyzer
