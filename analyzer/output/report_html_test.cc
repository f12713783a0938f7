#include "analyzer/output/report_html.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "analyzer/base/text.h"
#include "analyzer/output/viewer_assets.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::Occurrences;
using ::testing::HasSubstr;
using ::testing::Not;

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

// A report with the sample runs' hostile names where names from the traced
// system go, made valid UTF-8 as the analysis makes them (ValidUtf8), and 20
// steps. (cli/report_command_test.cc checks the page `iotap report` writes
// for the hostile run itself.)
report::Report HostileReport() {
  report::Report r;
  r.set_schema_version(1);
  for (const char* arg : {"python3", "train.py", "--tag=</script><img src=x onerror=alert(3)>"}) {
    r.mutable_run()->add_command(ValidUtf8(arg));
  }
  r.mutable_run()->set_events(321);
  r.mutable_run()->set_steps(20);
  for (const std::string& name : HostileNames()) {
    report::File* f = r.add_files();
    f->set_path(ValidUtf8("/data/" + name));
    f->set_category("data");
    f->set_read_bytes(4096);
  }
  report::Process* p = r.add_processes();
  p->set_pid(100);
  p->set_role(report::TRAINER);
  p->add_argv(ValidUtf8("--name=\"q'\n\xff"));
  for (int i = 0; i < 20; ++i) {
    report::Step* s = r.add_steps();
    s->set_pid(100);
    s->set_step(i);
    s->set_start_s(0.05 * i);
    s->set_end_s(0.05 * (i + 1));
    s->set_duration_s(0.05);
  }
  return r;
}

class ReportHtmlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    report_ = HostileReport();
    page_ = ReportToHtml(report_);
  }

  report::Report report_;
  std::string page_;
};

TEST_F(ReportHtmlTest, HostileNamesStayInsideTheJsonAsEscapedText) {
  const std::string lower = absl::AsciiStrToLower(page_);
  // The page's own two scripts (the data and the code), and nothing else.
  EXPECT_EQ(Occurrences(lower, "<script"), 2);
  EXPECT_EQ(Occurrences(lower, "</script"), 2);
  EXPECT_EQ(Occurrences(lower, "<img"), 0);
  const std::string json = EmbeddedJson(page_);
  ASSERT_FALSE(json.empty());
  // Outside the JSON string literals, no trace of the names at all.
  std::string outside = page_;
  outside.erase(outside.find(json), json.size());
  EXPECT_THAT(outside, Not(HasSubstr("alert(")));
  for (char c : {'<', '>', '&'}) EXPECT_EQ(json.find(c), std::string::npos) << c;
  EXPECT_THAT(json, Not(HasSubstr("\xe2\x80\xa8")));
  EXPECT_THAT(json, Not(HasSubstr("\xe2\x80\xa9")));

  // The names come back from the JSON as the report holds them: valid
  // UTF-8, each invalid byte as the text \xNN.
  report::Report back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  ASSERT_EQ(back.files_size(), report_.files_size());
  for (int i = 0; i < back.files_size(); ++i) {
    EXPECT_EQ(back.files(i).path(), report_.files(i).path());
  }
  EXPECT_EQ(back.files(4).path(), "/data/bad-\\xff\\xfe-utf8.bin");
  EXPECT_EQ(back.run().command(2), "--tag=</script><img src=x onerror=alert(3)>");
  EXPECT_EQ(back.processes(0).argv(0), "--name=\"q'\n\\xff");
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
  EXPECT_EQ(Occurrences(page, "'http://www.w3.org/2000/svg'"), 1);
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
