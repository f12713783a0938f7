// `iotap report` as a user runs it, on the sample run whose names are meant
// to break whatever shows them (sample_runs.h): the page it writes keeps
// every name inside the report's JSON, as the analysis wrote it.

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/base/text.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "iotap/report.pb.h"
#include "tests/integration/testing.h"

namespace iotap::analyzer {
namespace {

using iotap::testing::IotapBinary;
using iotap::testing::RunProgram;
using iotap::testing::RunResult;
using testing::HostileRunDirectory;
using testing::Occurrences;
using testing::ReadBytes;
using testing::TempDirectory;
using ::testing::Contains;
using ::testing::HasSubstr;

TEST(ReportCommandTest, HtmlOfTheHostileRunKeepsEveryNameInsideItsJson) {
  const std::string html = TempDirectory() + "/r.html", json_path = TempDirectory() + "/r.json";
  RunResult r = RunProgram({IotapBinary(), "report", HostileRunDirectory(), "--html", html,
                            "--format", "json", "-o", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string page = ReadBytes(html);

  const std::string lower = absl::AsciiStrToLower(page);
  EXPECT_EQ(Occurrences(lower, "<script"), 2);  // the page's data and code
  EXPECT_EQ(Occurrences(lower, "</script"), 2);
  EXPECT_EQ(Occurrences(lower, "<img"), 0);
  const std::string open = "<script type=\"application/json\" id=\"iotap-report\">";
  const size_t begin = page.find(open) + open.size();
  const std::string json = page.substr(begin, page.find("</script>", begin) - begin);
  std::string outside = page;
  outside.erase(begin, json.size());
  EXPECT_THAT(outside, ::testing::Not(HasSubstr("alert(")));

  // The names come back as the analysis wrote them: valid UTF-8, each
  // invalid byte as the text \xNN; the same as in the JSON report.
  report::Report back, saved;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadBytes(json_path), &saved).ok());
  std::vector<std::string> paths;
  for (const report::File& f : back.files()) paths.push_back(f.path());
  for (const std::string& name : HostileNames()) {
    EXPECT_THAT(paths, Contains(ValidUtf8("/data/" + name)));
  }
  EXPECT_THAT(paths, Contains("/data/bad-\\xff\\xfe-utf8.bin"));
  EXPECT_EQ(back.run().command(2), "--tag=</script><img src=x onerror=alert(3)>");
  EXPECT_EQ(back.run().events(), saved.run().events());
  EXPECT_EQ(back.steps_size(), 20);
  EXPECT_EQ(back.condensed().steps_left_out(), 0);
}

// --from and --to give the analysis of that part of the run, exactly as the
// library computes it.
TEST(ReportCommandTest, FromAndToAnalyseThatPartOfTheRun) {
  const std::string json_path = TempDirectory() + "/part.json";
  RunResult r = RunProgram({IotapBinary(), "report", HostileRunDirectory(), "--from", "0.05",
                            "--to", "0.125", "--format", "json", "-o", json_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  report::Report part;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(ReadBytes(json_path), &part).ok());
  AnalysisOptions options;
  options.range = TimeRange{.from_ns = 50'000'000, .to_ns = 125'000'000};
  absl::StatusOr<report::Report> expected = AnalyzeRun(HostileRunDirectory(), options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_DOUBLE_EQ(part.run().range_from_s(), 0.05);
  EXPECT_DOUBLE_EQ(part.run().range_to_s(), 0.125);
  EXPECT_EQ(part.run().bytes_read(), expected->run().bytes_read());
  EXPECT_EQ(part.run().events(), expected->run().events());
  EXPECT_EQ(part.steps_size(), expected->steps_size());
  EXPECT_LT(part.steps_size(), 20);
  EXPECT_EQ(part.step_statistics().data_stall_share(),
            expected->step_statistics().data_stall_share());

  RunResult text = RunProgram({IotapBinary(), "report", HostileRunDirectory(), "--to", "0.125"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("figures for 0.00 s to 125.0 ms after the run's start only"));

  RunResult bad = RunProgram({IotapBinary(), "report", HostileRunDirectory(), "--from", "2",
                              "--to", "1"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.err, HasSubstr("--to must be later than --from"));
  RunResult negative = RunProgram({IotapBinary(), "report", HostileRunDirectory(), "--from", "-1"});
  EXPECT_EQ(negative.exit_code, 1);
  EXPECT_THAT(negative.err, HasSubstr("--from takes seconds"));
}

}  // namespace
}  // namespace iotap::analyzer
