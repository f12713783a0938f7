// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/merge/partial_wire.h"
#include "analyzer/merge/shared_run.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::TempDirectory;

TEST(HeaderExamplesTest, PartialWire) {
  // partial_wire.h
  std::string bytes;
  WireWriter out([&](std::string_view piece) { bytes += piece; });
  out.U(42);
  out.Str("/data/a.jpg");
  out.Finish();
  bool given = false;  // one piece, then the end (an empty one)
  WireReader in([&] { return std::exchange(given, true) ? std::string() : bytes; });
  uint64_t n = in.U();        // 42
  std::string path = in.Str();
  EXPECT_TRUE(in.ok());
  EXPECT_EQ(n, 42u);
  EXPECT_EQ(path, "/data/a.jpg");
}

TEST(HeaderExamplesTest, SharedRun) {
  const std::string dir = TempDirectory() + "/two-trainers";
  std::filesystem::create_directories(dir);
  WriteManyStepRun(dir, 2, 2, 20);
  std::vector<std::string> files = *ListTraceFiles(dir);
  AnalysisOptions options;
  // shared_run.h, two runs in one process: one reads the first file's
  // trainer group, the other the rest and merges the first's partial.
  SharedRun first, run;
  ASSERT_TRUE(first.Prepare(files, options).ok());
  absl::Status ok = run.Prepare(files, options);
  ASSERT_TRUE(ok.ok());
  std::vector<int> first_indices, my_indices;
  for (int i = 0; i < static_cast<int>(run.file_count()); ++i) {
    (run.group(i) == run.group(0) ? first_indices : my_indices).push_back(i);
  }
  ASSERT_FALSE(my_indices.empty());
  first.Read(first_indices, options.threads, nullptr);
  run.Read(my_indices, options.threads, nullptr);
  int64_t end = std::max(first.end_ns(), run.end_ns());
  ASSERT_TRUE(first.AnalyzeGroups(end, options, options.threads).ok());
  ok = run.AnalyzeGroups(end, options, options.threads);
  ASSERT_TRUE(ok.ok());
  std::string bytes;
  WireWriter out([&](std::string_view piece) { bytes += piece; });
  first.WritePartial(out);
  bool given = false;
  WireReader in([&] { return std::exchange(given, true) ? std::string() : bytes; });
  absl::Status merged = run.MergePartial(in);
  ASSERT_TRUE(merged.ok()) << merged;
  absl::StatusOr<report::Report> r = run.FinishReport(options);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->SerializeAsString(), AnalyzeTraceFiles(files, options)->SerializeAsString());
}

}  // namespace
}  // namespace iotap::analyzer
