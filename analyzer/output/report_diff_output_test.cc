// The comparison of two runs as text, Markdown and JSON, and how a figure
// and a change are written in each unit.

#include "analyzer/output/report_diff_output.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "analyzer/output/report_diff.h"
#include "analyzer/testing/sample_reports.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using report::Finding;
using report::Report;
using ::testing::HasSubstr;
using testing::AddFinding;
using testing::SampleReport;

TEST(ReportDiffOutputTest, FiguresAndChangesByUnit) {
  EXPECT_EQ(FormatFigure(0.0312, "s"), "31.2 ms");
  EXPECT_EQ(FormatFigure(1536, "bytes"), "1.50 KiB");
  EXPECT_EQ(FormatFigure(0.125, "share"), "12.5%");
  EXPECT_EQ(FormatFigure(1200, "calls"), "1200 calls");
  EXPECT_EQ(FormatFigure(1, "processes"), "1 process");
  EXPECT_EQ(FormatFigure(1, "cores"), "1 core");
  EXPECT_EQ(FormatFigure(12.5, "steps/s"), "12.50 steps/s");
  EXPECT_EQ(FormatChange(-0.0111, "s"), "-11.1 ms");
  EXPECT_EQ(FormatChange(0.05, "share"), "+5.0 pp");
  EXPECT_EQ(FormatChange(0, "share"), "0.0 pp");
  EXPECT_EQ(FormatChange(20, "calls"), "+20 calls");
  EXPECT_EQ(FormatChange(-1, "steps"), "-1 step");
  EXPECT_EQ(FormatChange(0, "bytes"), "0 B");
}

// The row of `name` in the text output, split into its cells.
std::vector<std::string> TextRow(const std::string& text, const std::string& name) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StartsWith(line, "    " + name + "  ")) {
      std::vector<std::string> cells = {name};
      for (absl::string_view c :
           absl::StrSplit(line.substr(4 + name.size()), "  ", absl::SkipWhitespace())) {
        cells.emplace_back(absl::StripAsciiWhitespace(c));
      }
      return cells;
    }
  }
  return {};
}

TEST(ReportDiffOutputTest, TextShowsEachFigureWithItsChange) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(0, 0, 0);
  b.mutable_step_statistics()->set_median_step_s(0);
  report::ReportDiff d = DiffReports(a, b);
  d.mutable_a()->set_path("runs/before");
  d.mutable_a()->set_source("traces");
  d.mutable_b()->set_path("after.json");
  d.mutable_b()->set_source("saved report");
  std::string text = DiffToText(d);
  EXPECT_THAT(text, HasSubstr("  A: runs/before (traces): python3 train.py\n"));
  EXPECT_THAT(text, HasSubstr("  B: after.json (saved report): python3 train.py\n"));
  EXPECT_EQ(TextRow(text, "median step time"),
            (std::vector<std::string>{"median step time", "500.0 ms", "n/a", "n/a", "n/a"}));
  EXPECT_EQ(TextRow(text, "steps"),
            (std::vector<std::string>{"steps", "9 steps", "0 steps", "-9 steps", "-100.0%"}));
  EXPECT_THAT(text, HasSubstr("B has no steps"));
}

TEST(ReportDiffOutputTest, MarkdownEscapesNamesFromTheUsersSystem) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(9, 0.25, 0.25);
  b.mutable_run()->set_command(1, "tr|ain_*x*.py");
  b.mutable_run()->add_command("--tag=a\nb");
  Finding* f = AddFinding(&b, "many_small_files", Finding::WARNING);
  f->set_summary("files like /data/<img>|1.png");
  report::ReportDiff d = DiffReports(a, b);
  d.mutable_b()->set_path("runs/[after]");
  std::string md = DiffToMarkdown(d);
  // Escaped once: the newline shows as \n (DisplayName), its backslash
  // escaped for Markdown.
  EXPECT_THAT(md, HasSubstr("| python3 tr\\|ain\\_\\*x\\*.py --tag=a\\\\nb |"));
  EXPECT_THAT(md, HasSubstr("runs/\\[after\\]"));
  EXPECT_THAT(md, HasSubstr("files like /data/&lt;img&gt;\\|1.png"));
  EXPECT_THAT(
      md, HasSubstr("| median step time | 500.0 ms | 250.0 ms | -250.0 ms | -50.0% | better |"));
  EXPECT_THAT(md, HasSubstr("- **New** (- → WARNING, worse): **title of many\\_small\\_files.**"));
}

TEST(ReportDiffOutputTest, JsonLeavesMissingFiguresOutAndReadsBack) {
  Report a = SampleReport(9, 0.5, 0.25);
  Report b = SampleReport(0, 0, 0);
  AddFinding(&a, "data_stall_fetch", Finding::CRITICAL);
  report::ReportDiff d = DiffReports(a, b);
  std::string json = DiffToJson(d);
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &root).ok());
  const google::protobuf::ListValue& metrics = root.fields().at("metrics").list_value();
  const google::protobuf::Struct* median = nullptr;
  for (const google::protobuf::Value& m : metrics.values()) {
    if (m.struct_value().fields().at("id").string_value() == "median_step_s")
      median = &m.struct_value();
  }
  ASSERT_NE(median, nullptr);
  EXPECT_EQ(median->fields().at("a").number_value(), 0.5);
  EXPECT_EQ(median->fields().count("b"), 0u);
  EXPECT_EQ(median->fields().count("change"), 0u);
  EXPECT_EQ(median->fields().at("verdict").string_value(), "NOT_JUDGED");
  EXPECT_EQ(median->fields().at("direction").string_value(), "LOWER_IS_BETTER");
  const google::protobuf::Struct& finding =
      root.fields().at("findings").list_value().values(0).struct_value();
  EXPECT_EQ(finding.fields().at("status").string_value(), "RESOLVED");
  EXPECT_EQ(finding.fields().at("severity_a").string_value(), "CRITICAL");

  report::ReportDiff back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, d));
}

}  // namespace
}  // namespace iotap::analyzer
