// Nothing from the traced system reaches a shell or goes out unescaped:
// `iotap run` starts the command itself (no shell, arguments passed as they
// are), no product source builds a shell command, and hostile file names and
// arguments come out of `iotap stats`, `dump`, `report` (text, Markdown,
// JSON, HTML), `diff` (text, Markdown, JSON) and `export` (Chrome JSON) as
// inert, well-formed text.

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/text.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;

TEST(OutputSafetyTest, NoProductSourceStartsAShell) {
  // A call of system() or popen(), a shell's path or name as an argument,
  // wordexp(), Python's shell=True or os.system.
  const std::regex kShell(
      R"(\bsystem\(|\bpopen\(|/bin/sh|"sh"|'sh'|\bwordexp\b|shell\s*=\s*True|\bos\.system\b)");
  int scanned = 0;
  for (const char* top : {"analyzer", "interpose"}) {
    for (const auto& e : fs::recursive_directory_iterator(SourcePath(top))) {
      std::string path = e.path().string();
      std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || absl::EndsWith(path, "_test.cc") ||
          absl::EndsWith(path, "_fuzzer.cc") || absl::StrContains(path, "/testdata/") ||
          (ext != ".cc" && ext != ".h" && ext != ".c" && ext != ".inc" && ext != ".py")) {
        continue;
      }
      ++scanned;
      std::ifstream in(path);
      std::string line;
      for (int n = 1; std::getline(in, line); ++n) {
        EXPECT_FALSE(std::regex_search(line, kShell)) << path << ":" << n << ": " << line;
      }
    }
  }
  EXPECT_GT(scanned, 100);
}

TEST(OutputSafetyTest, IotapRunPassesShellMetacharactersVerbatim) {
  TempDir dir;
  std::vector<std::string> args = {"a;b",
                                   "$(touch pwned1)",
                                   "`touch pwned2`",
                                   "*",
                                   "\"q\" 's'",
                                   "x|touch pwned3",
                                   "&& touch pwned4",
                                   "$HOME",
                                   "line\nbreak",
                                   "",
                                   "-o",
                                   "--"};
  std::vector<std::string> argv = {"printf", "[%s]\\n"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunOptions options;
  options.cwd = dir.path();
  RunResult r = RunTraced(argv, dir.Sub("trace"), options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string expected;
  for (const std::string& a : args) absl::StrAppend(&expected, "[", a, "]\n");
  EXPECT_EQ(r.out, expected);
  for (const char* name : {"pwned1", "pwned2", "pwned3", "pwned4"}) {
    EXPECT_FALSE(fs::exists(dir.Sub(name))) << name;
  }
}

// Valid UTF-8 and no control character but line breaks.
void ExpectInertText(const std::string& what, const std::string& text) {
  SCOPED_TRACE(what);
  EXPECT_EQ(analyzer::ValidUtf8(text), text);
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    bool c1 = c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
              static_cast<unsigned char>(text[i + 1]) <= 0x9F;
    ASSERT_FALSE((c < 0x20 && c != '\n') || c == 0x7F || c1)
        << "control character " << static_cast<int>(c) << " at byte " << i;
  }
}

google::protobuf::Struct ParseJson(const std::string& text) {
  google::protobuf::Struct root;
  auto status = google::protobuf::util::JsonStringToMessage(text, &root);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << text;
  return root;
}

// Markdown whose only raw HTML is the output's own <sub> footer (command
// lines in headings are code spans, shown literally) and where every row of
// a table has as many cells as its header.
void ExpectWellFormedMarkdown(const std::string& what, const std::string& md) {
  SCOPED_TRACE(what);
  ExpectInertText(what, md);
  EXPECT_EQ(md.find('<', md.find('\n')), md.rfind("<sub>")) << md;
  int header_cells = -1;
  for (absl::string_view line : absl::StrSplit(md, '\n')) {
    if (!absl::StartsWith(line, "|")) {
      header_cells = -1;
      continue;
    }
    int cells = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\')
        ++i;
      else
        cells += line[i] == '|';
    }
    if (header_cells < 0) header_cells = cells;
    EXPECT_EQ(cells, header_cells) << line;
  }
}

// File names that would break out of, or drive, each output.
std::vector<std::string> HostileNames() {
  return {
      "<img src=x onerror=alert(1)>",
      "a|b|c *bold* _it_ [link](javascript:alert(1)) `code` # ~ !",
      "new\nline",
      "tab\tcr\r",
      "esc\x1b[31mred\x1b[0m",
      "c1 \xc2\x9b"
      "31m",
      "latin-1 caf\xe9",
      "quote\" back\\slash &amp;",
      // A directory "<" and in it a file, for the "/" a file name cannot hold.
      "</script><script>alert(1)",
  };
}

// Traces `cat` reading a file of each hostile name in `dir`; returns the
// trace directory.
std::string TraceHostileRun(const TempDir& dir) {
  std::vector<std::string> argv = {"cat"};
  for (const std::string& n : HostileNames()) {
    if (n.find('/') != std::string::npos)
      fs::create_directories(dir.Sub(n.substr(0, n.rfind('/'))));
    WriteFile(dir.Sub(n), "data of " + n);
    argv.push_back(dir.Sub(n));
  }
  std::string trace = dir.Sub("trace");
  RunResult job = RunTraced(argv, trace);
  EXPECT_EQ(job.exit_code, 0) << job.err;
  return trace;
}

TEST(OutputSafetyTest, HostileNamesComeOutEscapedEverywhere) {
  const std::vector<std::string> names = HostileNames();
  TempDir dir;
  std::string trace = TraceHostileRun(dir);
  ASSERT_FALSE(::testing::Test::HasFailure());

  RunResult stats_json = RunProgram({IotapBinary(), "stats", "--json", trace});
  ASSERT_EQ(stats_json.exit_code, 0) << stats_json.err;
  ExpectInertText("stats --json", stats_json.out);
  EXPECT_EQ(stats_json.out.find_first_of("<>&"), std::string::npos);
  google::protobuf::Struct stats = ParseJson(stats_json.out);
  std::set<std::string> paths;
  for (const auto& f : stats.fields().at("files").list_value().values()) {
    paths.insert(f.struct_value().fields().at("path").string_value());
  }
  for (const std::string& n : names) {
    EXPECT_TRUE(paths.count(analyzer::ValidUtf8(dir.Sub(n)))) << n;
  }

  for (const std::vector<std::string>& command :
       {std::vector<std::string>{"stats", trace}, {"dump", trace}, {"report", trace}}) {
    RunResult r = RunProgram({IotapBinary(), command[0], command[1]});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ExpectInertText(command[0], r.out);
    // Each name whole, as DisplayName shows it: none was split. The report
    // holds names made valid UTF-8 first (\xNN for a stray byte).
    for (const std::string& n : names) {
      std::string name = command[0] == "report" ? analyzer::ValidUtf8(dir.Sub(n)) : dir.Sub(n);
      EXPECT_TRUE(absl::StrContains(r.out, analyzer::DisplayName(name))) << command[0] << ": " << n;
    }
  }

  RunResult md = RunProgram({IotapBinary(), "report", "--format", "markdown", trace});
  ASSERT_EQ(md.exit_code, 0) << md.err;
  ExpectWellFormedMarkdown("markdown", md.out);
  for (const std::string& n : names) {
    EXPECT_TRUE(absl::StrContains(md.out, analyzer::MarkdownText(analyzer::ValidUtf8(dir.Sub(n)))))
        << n;
  }

  RunResult json = RunProgram({IotapBinary(), "report", "--format", "json", trace});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  ExpectInertText("report json", json.out);
  EXPECT_EQ(json.out.find_first_of("<>"), std::string::npos);
  google::protobuf::Struct report = ParseJson(json.out);
  std::set<std::string> report_paths;
  for (const auto& f : report.fields().at("files").list_value().values()) {
    report_paths.insert(f.struct_value().fields().at("path").string_value());
  }
  for (const std::string& n : names) {
    EXPECT_TRUE(report_paths.count(analyzer::ValidUtf8(dir.Sub(n)))) << n;
  }
}

TEST(OutputSafetyTest, HostileNamesComeOutEscapedInHtmlDiffAndExport) {
  TempDir dir;
  std::string trace = TraceHostileRun(dir);
  ASSERT_FALSE(::testing::Test::HasFailure());

  // The HTML page: every name only inside the embedded JSON, where <, > and
  // & are \u escapes, so no name can end the script element or start markup.
  std::string html = dir.Sub("report.html");
  RunResult report = RunProgram({IotapBinary(), "report", trace, "--html", html});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  std::string page = ReadFile(html);
  ExpectInertText("html", page);
  EXPECT_FALSE(absl::StrContains(page, "<img")) << "raw markup from a file name";
  EXPECT_FALSE(absl::StrContains(page, "</script><script>alert"));
  EXPECT_TRUE(absl::StrContains(page, "\\u003cimg src=x onerror=alert(1)\\u003e"));
  EXPECT_TRUE(absl::StrContains(page, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)"));

  // `iotap diff` of the run with itself: the command line (every hostile
  // name) and the paths in each output.
  for (const char* format : {"text", "markdown", "json"}) {
    RunResult diff = RunProgram({IotapBinary(), "diff", trace, trace, "--format", format});
    ASSERT_EQ(diff.exit_code, 0) << format << ": " << diff.err;
    std::string f = format;
    if (f == "markdown") {
      ExpectWellFormedMarkdown("diff markdown", diff.out);
      for (const std::string& n : HostileNames()) {
        EXPECT_TRUE(
            absl::StrContains(diff.out, analyzer::MarkdownText(analyzer::ValidUtf8(dir.Sub(n)))))
            << n;
      }
    } else if (f == "text") {
      ExpectInertText("diff text", diff.out);
      for (const std::string& n : HostileNames()) {
        EXPECT_TRUE(
            absl::StrContains(diff.out, analyzer::DisplayName(analyzer::ValidUtf8(dir.Sub(n)))))
            << n;
      }
    } else {
      ExpectInertText("diff json", diff.out);
      EXPECT_EQ(diff.out.find_first_of("<>"), std::string::npos);
      google::protobuf::Struct root = ParseJson(diff.out);
      std::string command;
      for (const auto& a :
           root.fields().at("a").struct_value().fields().at("command").list_value().values()) {
        absl::StrAppend(&command, a.string_value(), "\n");
      }
      for (const std::string& n : HostileNames()) {
        EXPECT_TRUE(absl::StrContains(command, analyzer::ValidUtf8(dir.Sub(n)) + "\n")) << n;
      }
    }
  }

  // Chrome's trace-event JSON: well-formed, inert, and the names intact.
  std::string chrome = dir.Sub("trace.json");
  RunResult exported = RunProgram({IotapBinary(), "export", trace, "--chrome-json", chrome});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  ExpectInertText("export stderr", exported.err);
  std::string json = ReadFile(chrome);
  ExpectInertText("chrome json", json);
  EXPECT_EQ(json.find_first_of("<>"), std::string::npos);
  ParseJson(json);
  for (const std::string& n : HostileNames()) {
    std::string escaped = analyzer::JsonEscape(analyzer::ValidUtf8(dir.Sub(n)));
    EXPECT_TRUE(absl::StrContains(json, escaped)) << n;
  }
}

}  // namespace
}  // namespace iotap::testing
