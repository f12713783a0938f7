#include "analyzer/output/saved_report.h"

#include <string>

#include "analyzer/output/report_output.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::TempDirectory;
using testing::WriteTemp;

// `name` in this test's temporary directory.
std::string Temp(const std::string& name) { return TempDirectory() + "/" + name; }
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
  report::Report r = SampleReport();
  std::string path = WriteTemp("report.json", ReportToJson(r));
  EXPECT_TRUE(LooksLikeSavedReport(path));
  absl::StatusOr<report::Report> back = ReadSavedReport(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*back, r));
}

TEST(SavedReportTest, TracesAndDirectoriesAreNotSavedReports) {
  SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3"}, 1'700'000'000'000'000'000);
  p.WriteTo(Temp("p.iotap"));
  EXPECT_FALSE(LooksLikeSavedReport(Temp("p.iotap")));
  EXPECT_FALSE(LooksLikeSavedReport(TempDirectory()));
  EXPECT_FALSE(LooksLikeSavedReport(Temp("missing.json")));
  WriteTemp("blank.json", " \n\t");
  EXPECT_FALSE(LooksLikeSavedReport(Temp("blank.json")));
  WriteTemp("indented.json", "\n  {}");
  EXPECT_TRUE(LooksLikeSavedReport(Temp("indented.json")));
}

TEST(SavedReportTest, CorruptJsonNamesTheFile) {
  std::string path = Temp("cut.json");
  std::string json = ReportToJson(SampleReport());
  WriteTemp("cut.json", json.substr(0, json.size() / 2));
  absl::StatusOr<report::Report> r = ReadSavedReport(path);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(path + ": not a report saved by `iotap report --format json` ("));
  // One line, for a terminal.
  EXPECT_EQ(r.status().message().find('\n'), absl::string_view::npos);
}

TEST(SavedReportTest, JsonThatIsNotAReportIsRefused) {
  WriteTemp("trace.json", R"({"traceEvents": [], "displayTimeUnit": "ms"})");
  absl::StatusOr<report::Report> r = ReadSavedReport(Temp("trace.json"));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(),
              HasSubstr(Temp("trace.json") + ": JSON, but not an iotap report"));
  // A wrongly typed field of the schema is an error, not a zero.
  WriteTemp("typed.json", R"({"schema_version": 1, "run": {"steps": "many"}})");
  EXPECT_FALSE(ReadSavedReport(Temp("typed.json")).ok());
}

TEST(SavedReportTest, FieldsOfANewerIotapAreIgnored) {
  WriteTemp("newer.json",
            R"({"schema_version": 1, "run": {"steps": 7, "wall_power_w": 300}, "step_buckets": []})");
  absl::StatusOr<report::Report> r = ReadSavedReport(Temp("newer.json"));
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
