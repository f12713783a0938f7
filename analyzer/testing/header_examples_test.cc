// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <filesystem>
#include <sstream>
#include <string>

#include "analyzer/testing/perfetto_check.h"
#include "analyzer/testing/sample_reports.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::ReadBytes;
using testing::SharedFixture;
using testing::TempDirectory;
using testing::WriteTemp;

// The .iotap files under `dir`.
int TraceFiles(const std::string& dir) {
  int n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    n += entry.path().extension() == ".iotap";
  }
  return n;
}

TEST(HeaderExamplesTest, SyntheticTrace) {
  const std::string dir = TempDirectory() + "/synthetic";
  std::filesystem::create_directories(dir);
  // synthetic_trace.h
  SyntheticProcess p(/*pid=*/100, /*ppid=*/1, "/usr/bin/python3", {"python3", "train.py"},
                     /*start_ns=*/1'000'000'000);
  uint32_t f = p.Path("/data/a.bin");
  p.Read(OP_PREAD, 1'000'010'000, 1'000'020'000, f, /*offset=*/0, /*bytes=*/4096);
  p.End(EndOfTrace::REASON_EXIT, 0);
  p.WriteTo(dir + "/p100.iotap");

  EXPECT_EQ(p.event_count(), 1u);
  EXPECT_EQ(ReadBytes(dir + "/p100.iotap").substr(0, 4), "\x28\xb5\x2f\xfd");  // zstd
}

TEST(HeaderExamplesTest, SampleRuns) {
  const std::string dir = TempDirectory() + "/sample";
  std::filesystem::create_directories(dir);
  int names = 0;
  // sample_runs.h
  WriteHostileRun(dir);            // then: iotap report DIR --html out.html
  for (const std::string& name : HostileNames()) names += !name.empty();   // what must stay inert

  EXPECT_EQ(TraceFiles(dir), 3);
  EXPECT_GT(names, 5);
}

TEST(HeaderExamplesTest, SampleReports) {
  using testing::AddFinding;
  using testing::SampleReport;
  // sample_reports.h
  report::Report a = SampleReport(/*steps=*/9, /*step_s=*/0.5, /*wait_s=*/0.25);
  AddFinding(&a, "data_stall_fetch", report::Finding::CRITICAL);

  EXPECT_EQ(a.step_statistics().steps(), 8);
  EXPECT_EQ(a.step_statistics().data_stall_share(), 0.5);
  EXPECT_EQ(a.findings(0).title(), "title of data_stall_fetch");
}

TEST(HeaderExamplesTest, PerfettoCheck) {
  const std::string bytes = "not a trace";
  std::ostringstream errors;
  // perfetto_check.h
  DecodedTrace t = DecodePerfettoTrace(bytes);
  for (const std::string& p : t.problems) errors << p << "\n";

  EXPECT_EQ(errors.str(), "the bytes are not a perfetto.protos.Trace\n");
}

TEST(HeaderExamplesTest, TestFiles) {
  // test_files.h
  std::string path = WriteTemp("steps.jsonl", R"({"step": 1, "start": 1, "end": 2})");
  std::string bytes = ReadBytes(path);
  std::string fixture = SharedFixture("README.md");    // ../shared/fixtures/README.md

  EXPECT_EQ(bytes, R"({"step": 1, "start": 1, "end": 2})");
  EXPECT_TRUE(std::filesystem::exists(fixture));
}

TEST(HeaderExamplesTest, FreshDirectory) {
  std::filesystem::create_directories(TempDirectory() + "/fresh/old");
  // test_files.h
  testing::FreshDirectory dir("fresh");

  EXPECT_EQ(dir.Sub("a.txt"), TempDirectory() + "/fresh/a.txt");
  EXPECT_FALSE(std::filesystem::exists(TempDirectory() + "/fresh/old"));  // emptied
  EXPECT_TRUE(std::filesystem::is_directory(dir.path()));
}

}  // namespace
}  // namespace iotap::analyzer
