#include "analyzer/report_html.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "analyzer/run_analysis.h"
#include "analyzer/sample_runs.h"
#include "analyzer/text.h"
#include "analyzer/viewer_assets.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1))
    ++n;
  return n;
}

// The text between the report's <script type="application/json"> and its end.
std::string EmbeddedJson(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"iotap-report\">";
  size_t begin = page.find(open);
  if (begin == std::string::npos) return "";
  begin += open.size();
  return page.substr(begin, page.find("</script>", begin) - begin);
}

TEST(EmbeddableJsonTest, EscapesWhatCouldEndTheElementOrStartMarkup) {
  EXPECT_EQ(EmbeddableJson(R"({"p":"</script><!--&x"})"),
            R"({"p":"\u003c/script\u003e\u003c!--\u0026x"})");
  EXPECT_EQ(EmbeddableJson("{\"p\":\"a\xe2\x80\xa8"
                           "b\xe2\x80\xa9\"}"),
            R"({"p":"a\u2028b\u2029"})");
  // Other characters, multi-byte ones included, pass unchanged.
  EXPECT_EQ(EmbeddableJson("{\"p\":\"caf\xc3\xa9 \xe2\x80\xa7 \\\"\"}"),
            "{\"p\":\"caf\xc3\xa9 \xe2\x80\xa7 \\\"\"}");
}

TEST(EmbeddableJsonTest, ParsesToTheSameValue) {
  report::Report r;
  r.mutable_run()->add_command("</script><img src=x onerror=alert(1)> & \xe2\x80\xa8");
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(r, &json).ok());
  report::Report back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(EmbeddableJson(json), &back).ok());
  EXPECT_EQ(back.run().command(0), r.run().command(0));
}

class ReportHtmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("iotap-html-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    WriteHostileRun(dir_.string());
    absl::StatusOr<report::Report> r = AnalyzeRun(dir_.string(), AnalysisOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    report_ = *r;
    page_ = ReportToHtml(report_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  report::Report report_;
  std::string page_;
};

TEST_F(ReportHtmlTest, HostileNamesStayInsideTheJsonAsEscapedText) {
  const std::string lower = absl::AsciiStrToLower(page_);
  // The page's own two scripts (the data and the code), and nothing else.
  EXPECT_EQ(Count(lower, "<script"), 2);
  EXPECT_EQ(Count(lower, "</script"), 2);
  EXPECT_EQ(Count(lower, "<img"), 0);
  const std::string json = EmbeddedJson(page_);
  ASSERT_FALSE(json.empty());
  // Outside the JSON string literals, no trace of the names at all.
  std::string outside = page_;
  outside.erase(outside.find(json), json.size());
  EXPECT_THAT(outside, Not(HasSubstr("alert(")));
  for (char c : {'<', '>', '&'}) EXPECT_EQ(json.find(c), std::string::npos) << c;
  EXPECT_THAT(json, Not(HasSubstr("\xe2\x80\xa8")));
  EXPECT_THAT(json, Not(HasSubstr("\xe2\x80\xa9")));

  // The same names come back from the JSON, as the analysis wrote them: valid
  // UTF-8, each invalid byte as the text \xNN.
  report::Report back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  std::vector<std::string> paths;
  for (const report::File& f : back.files()) paths.push_back(f.path());
  for (const std::string& name : HostileNames()) {
    EXPECT_THAT(paths, Contains(ValidUtf8("/data/" + name)));
  }
  EXPECT_THAT(paths, Contains("/data/bad-\\xff\\xfe-utf8.bin"));
  EXPECT_EQ(back.run().command(2), "--tag=</script><img src=x onerror=alert(3)>");
}

TEST_F(ReportHtmlTest, ThePageNamesItsOwnScriptAndStyleAndNothingElse) {
  EXPECT_THAT(page_, HasSubstr("default-src 'none'"));
  EXPECT_THAT(page_, HasSubstr(std::string("script-src 'sha256-") +
                               std::string(internal::kViewerScriptSha256) + "'"));
  EXPECT_THAT(page_, HasSubstr(std::string("style-src 'sha256-") +
                               std::string(internal::kViewerStyleSha256) + "'"));
  EXPECT_EQ(internal::kViewerScriptSha256.size(), 44u);  // 32 bytes in base64
  // The page itself (the report's JSON aside: its strings are data) names no
  // resource; the one URL in it is SVG's namespace, an identifier.
  std::string page = page_;
  page.erase(page.find(EmbeddedJson(page_)), EmbeddedJson(page_).size());
  EXPECT_EQ(Count(page, "'http://www.w3.org/2000/svg'"), 1);
  page.erase(page.find("'http://www.w3.org/2000/svg'"), 28);
  const std::string lower = absl::AsciiStrToLower(page);
  for (const char* remote : {"http:", "https:", "ftp:", "//fonts.", " src=", "@import", "url(",
                             "fetch(", "xmlhttprequest", "websocket", "sendbeacon"}) {
    EXPECT_EQ(lower.find(remote), std::string::npos) << remote;
  }
  EXPECT_TRUE(absl::StartsWith(page_, "<!DOCTYPE html>"));
  EXPECT_TRUE(absl::EndsWith(page_, "</html>\n"));
}

TEST_F(ReportHtmlTest, EmbedsTheCondensedReport) {
  report::Report back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(EmbeddedJson(page_), &back).ok());
  EXPECT_EQ(back.run().events(), report_.run().events());
  EXPECT_EQ(back.steps_size(), 20);
  EXPECT_EQ(back.condensed().significant_digits(), 4);
  EXPECT_EQ(back.condensed().steps_left_out(), 0);
}

}  // namespace
}  // namespace iotap::analyzer
