// `iotap stats --json` as a user runs it, on a crafted trace whose sums pass
// their types' limits: stats counts with the report's accumulators, so its
// figures saturate as the report's do (RunAnalysisTest.SumsOfHostileValuesSaturate).

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

}  // namespace
}  // namespace iotap::analyzer
