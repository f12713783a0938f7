// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/read/path_table.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::TempDirectory;

// A run of one process with two reads, in its own directory.
std::string WriteRun(const std::string& name) {
  const std::string dir = TempDirectory() + "/" + name;
  std::filesystem::create_directories(dir);
  SyntheticProcess p(42, 1, "/usr/bin/python3", {"python3"}, 1'000'000'000);
  uint32_t f = p.Path("/data/a.bin");
  p.Read(OP_PREAD, 1'000'010'000, 1'000'020'000, f, 0, 4096);
  p.Read(OP_PREAD, 1'000'030'000, 1'000'040'000, f, 4096, 4096);
  p.End(EndOfTrace::REASON_EXIT, 0);
  p.WriteTo(dir + "/host.42.iotap");
  return dir;
}

TEST(HeaderExamplesTest, PathTable) {
  // path_table.h
  PathTable paths;
  PathTable::Entry e = paths.Intern("/data/train/00001.jpg");
  // e.id: the same for this path in every process; e.category: "data"
  EXPECT_EQ(paths.Intern("/data/train/00001.jpg").id, e.id);
  EXPECT_STREQ(e.category, "data");
  EXPECT_EQ(paths.path(e.id), "/data/train/00001.jpg");
}

// trace_reader.h
struct Counter : public TraceVisitor {
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    events += b.size();
  }
  uint64_t events = 0;
};

TEST(HeaderExamplesTest, TraceReader) {
  const std::string run = WriteRun("trace-reader");
  // trace_reader.h
  Counter c;
  std::vector<ReadIssue> issues;
  absl::Status s = ReadTraceFile(run + "/host.42.iotap", &c, &issues);

  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(c.events, 2u);
  EXPECT_TRUE(issues.empty());
}

TEST(HeaderExamplesTest, TraceSet) {
  const std::string run = WriteRun("trace-set");
  Counter visitor;
  std::ostringstream errors;
  // trace_set.h
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(run);
  TraceSetResult r = ReadTraceSet(*files, &visitor);
  for (const ReadIssue& i : r.issues) errors << i.ToString() << "\n";

  EXPECT_EQ(files->size(), 1u);
  EXPECT_EQ(r.files_read, 1);
  EXPECT_EQ(visitor.events, 2u);
  EXPECT_EQ(errors.str(), "");
}

}  // namespace
}  // namespace iotap::analyzer
