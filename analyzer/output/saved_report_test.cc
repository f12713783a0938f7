#include "analyzer/saved_report.h"

#include <string>

#include "analyzer/report_output.h"
#include "analyzer/synthetic_trace.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::analyzer {
namespace {

using iotap::testing::TempDir;
using iotap::testing::WriteFile;
using ::testing::HasSubstr;

report::Report SampleReport() {
  report::Report r;
  r.set_schema_version(1);
  r.mutable_run()->add_command("python3");
  r.mutable_run()->set_steps(12);
  r.mutable_run()->set_data_stall_share(-1);
  report::Finding* f = r.add_findings();
  f->set_id("storage_slow");
  f->set_severity(report::Finding::WARNING);
  report::Evidence* e = f->add_evidence();
  e->set_name("mean read latency");
  e->set_value(0.002);
  return r;
}

TEST(SavedReportTest, ReadsBackWhatReportWrote) {
  TempDir dir;
  std::string path = dir.Sub("report.json");
  report::Report r = SampleReport();
  WriteFile(path, ReportToJson(r));
  EXPECT_TRUE(LooksLikeSavedReport(path));
  absl::StatusOr<report::Report> back = ReadSavedReport(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*back, r));
}

TEST(SavedReportTest, TracesAndDirectoriesAreNotSavedReports) {
  TempDir dir;
  SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3"}, 1'700'000'000'000'000'000);
  p.WriteTo(dir.Sub("p.iotap"));
  EXPECT_FALSE(LooksLikeSavedReport(dir.Sub("p.iotap")));
  EXPECT_FALSE(LooksLikeSavedReport(dir.path()));
  EXPECT_FALSE(LooksLikeSavedReport(dir.Sub("missing.json")));
  WriteFile(dir.Sub("blank.json"), " \n\t");
  EXPECT_FALSE(LooksLikeSavedReport(dir.Sub("blank.json")));
  WriteFile(dir.Sub("indented.json"), "\n  {}");
  EXPECT_TRUE(LooksLikeSavedReport(dir.Sub("indented.json")));
}

TEST(SavedReportTest, CorruptJsonNamesTheFile) {
  TempDir dir;
  std::string path = dir.Sub("cut.json");
  std::string json = ReportToJson(SampleReport());
  WriteFile(path, json.substr(0, json.size() / 2));
  absl::StatusOr<report::Report> r = ReadSavedReport(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(path + ": not a report saved by `iotap report --format json` ("));
  // One line, for a terminal.
  EXPECT_EQ(r.status().message().find('\n'), absl::string_view::npos);
}

TEST(SavedReportTest, JsonThatIsNotAReportIsRefused) {
  TempDir dir;
  WriteFile(dir.Sub("trace.json"), R"({"traceEvents": [], "displayTimeUnit": "ms"})");
  absl::StatusOr<report::Report> r = ReadSavedReport(dir.Sub("trace.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(dir.Sub("trace.json") + ": JSON, but not an iotap report"));
  // A wrongly typed field of the schema is an error, not a zero.
  WriteFile(dir.Sub("typed.json"), R"({"schema_version": 1, "run": {"steps": "many"}})");
  EXPECT_FALSE(ReadSavedReport(dir.Sub("typed.json")).ok());
}

TEST(SavedReportTest, FieldsOfANewerIotapAreIgnored) {
  TempDir dir;
  WriteFile(
      dir.Sub("newer.json"),
      R"({"schema_version": 1, "run": {"steps": 7, "wall_power_w": 300}, "step_buckets": []})");
  absl::StatusOr<report::Report> r = ReadSavedReport(dir.Sub("newer.json"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->run().steps(), 7);
}

TEST(SavedReportTest, MissingFile) {
  absl::StatusOr<report::Report> r = ReadSavedReport("/nonexistent/iotap/report.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "/nonexistent/iotap/report.json: cannot open");
}

}  // namespace
}  // namespace iotap::analyzer
