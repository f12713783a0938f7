// `iotap report` as a user runs it, on the sample run whose names are meant
// to break whatever shows them (sample_runs.h): the page it writes keeps
// every name inside the report's JSON, as the analysis wrote it.

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
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

}  // namespace
}  // namespace iotap::analyzer
