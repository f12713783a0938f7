// Fuzzes the escaping of strings that come from the traced system (file
// names, command lines, host names) on their way into every output, and
// checks that what comes out is well-formed and inert:
//
// - DisplayName (terminal, `iotap dump`, text reports): valid UTF-8, no
//   control character (C0, DEL or C1), and reversible;
// - MarkdownText (Markdown reports): DisplayName's text with every character
//   Markdown or HTML would act on escaped, no raw '<' or '>', no '&' but in
//   the entities it writes, and reversible;
// - JsonEscape and JsonWriter (JSON outputs, and the HTML report's data):
//   valid JSON that decodes to ValidUtf8 of the input, valid UTF-8, no raw
//   '<', '>' or '&' (so a "</script>" in a name cannot end a script block);
// - a whole Markdown report with the input in every user-controlled field:
//   the same lines and table cells as with empty fields.
// Seeds: tests/fuzz/corpus/text_fuzzer (names with markup, controls,
// invalid UTF-8).

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/text.h"
#include "analyzer/output/report_output.h"
#include "analyzer/steps/json_tokenizer.h"
#include "tests/fuzz/fuzz_support.h"

namespace iotap::analyzer {
namespace {

using fuzz::HasControl;
using fuzz::IsValidUtf8;

int Hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The inverse of DisplayName; FUZZ_CHECK fails on anything it never writes.
std::string UndoDisplayName(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      out += s[i];
      continue;
    }
    FUZZ_CHECK(i + 1 < s.size());
    char c = s[++i];
    if (c == '\\') {
      out += '\\';
    } else if (c == 'n') {
      out += '\n';
    } else if (c == 't') {
      out += '\t';
    } else if (c == 'r') {
      out += '\r';
    } else {
      FUZZ_CHECK(c == 'x' && i + 2 < s.size() && Hex(s[i + 1]) >= 0 && Hex(s[i + 2]) >= 0);
      out += static_cast<char>(Hex(s[i + 1]) * 16 + Hex(s[i + 2]));
      i += 2;
    }
  }
  return out;
}

// The inverse of MarkdownText's escaping (backslashes before ASCII
// punctuation, three entities), failing on anything Markdown would act on.
std::string UndoMarkdown(std::string_view s) {
  constexpr std::string_view kActive = "\\`*_[]#|~!<>&";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\\') {
      FUZZ_CHECK(i + 1 < s.size() && kActive.find(s[i + 1]) != std::string_view::npos);
      out += s[++i];
    } else if (c == '&') {
      std::string_view rest = s.substr(i);
      if (rest.starts_with("&lt;")) {
        out += '<';
      } else if (rest.starts_with("&gt;")) {
        out += '>';
      } else {
        FUZZ_CHECK(rest.starts_with("&amp;"));
        out += '&';
      }
      i = s.find(';', i);
    } else {
      FUZZ_CHECK(kActive.find(c) == std::string_view::npos);
      out += c;
    }
  }
  return out;
}

// The one JSON string `text` holds, decoded.
std::string DecodeJsonString(const std::string& text) {
  JsonTokenizer json(text);
  JsonToken t, end;
  FUZZ_CHECK(json.Next(&t).ok() && t.type == JsonToken::kString);
  FUZZ_CHECK(json.Next(&end).ok() && end.type == JsonToken::kEnd);
  return t.text;
}

void CheckJsonText(const std::string& text) {
  FUZZ_CHECK(IsValidUtf8(text));
  FUZZ_CHECK(!HasControl(text, "\n"));
  FUZZ_CHECK(text.find_first_of("<>&") == std::string::npos);
}

void CheckEscapers(std::string_view s) {
  std::string shown = DisplayName(s);
  FUZZ_CHECK(IsValidUtf8(shown));
  FUZZ_CHECK(!HasControl(shown));
  FUZZ_CHECK(UndoDisplayName(shown) == s);

  std::string markdown = MarkdownText(s);
  FUZZ_CHECK(IsValidUtf8(markdown));
  FUZZ_CHECK(!HasControl(markdown));
  FUZZ_CHECK(UndoMarkdown(markdown) == shown);

  std::string valid = ValidUtf8(s);
  FUZZ_CHECK(IsValidUtf8(valid));
  if (IsValidUtf8(s)) FUZZ_CHECK(valid == s);

  std::string quoted = "\"" + JsonEscape(s) + "\"";
  CheckJsonText(quoted);
  FUZZ_CHECK(DecodeJsonString(quoted) == valid);

  JsonWriter writer;
  writer.BeginObject();
  writer.Key(s);
  writer.BeginArray();
  writer.String(s);
  writer.EndArray();
  writer.EndObject();
  std::string document = writer.Take();
  CheckJsonText(document);
  JsonTokenizer json(document);
  JsonToken t;
  int strings = 0;
  do {
    FUZZ_CHECK(json.Next(&t).ok());
    if (t.type == JsonToken::kKey || t.type == JsonToken::kString) {
      FUZZ_CHECK(t.text == valid);
      ++strings;
    }
  } while (t.type != JsonToken::kEnd);
  FUZZ_CHECK(strings == 2);
}

// A report with `s` (made valid UTF-8, as the analysis does) in every field
// that comes from the traced system.
report::Report ReportWith(const std::string& s) {
  report::Report r;
  r.mutable_run()->add_command(s);
  r.mutable_run()->add_command(s);
  r.mutable_run()->add_hosts(s);
  report::Finding* f = r.add_findings();
  // Summaries and recommendations name files and datasets ({dataset}).
  f->set_title("Small reads");
  f->set_summary(s);
  f->set_recommendation(s);
  f->add_objects(s);
  report::Evidence* e = f->add_evidence();
  e->set_name("file");
  e->set_text(s);
  for (int i = 0; i < 2; ++i) {
    report::File* file = r.add_files();
    file->set_path(s);
    file->set_category("data");
    file->set_read_bytes(100);
  }
  report::Dataset* d = r.add_datasets();
  d->set_file(s);
  d->set_name(s);
  report::Process* p = r.add_processes();
  p->add_argv(s);
  r.add_notes()->set_message(s);
  return r;
}

// Lines of `markdown`, and the table cell separators ('|' not escaped by a
// backslash) on each table row.
std::vector<int> CellSeparators(const std::string& markdown) {
  std::vector<int> counts;
  for (absl::string_view line : absl::StrSplit(markdown, '\n')) {
    int n = 0;
    if (!absl::StartsWith(line, "|")) {
      counts.push_back(-1);
      continue;
    }
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
      } else if (line[i] == '|') {
        ++n;
      }
    }
    counts.push_back(n);
  }
  return counts;
}

int Count(const std::string& s, std::string_view chars) {
  int n = 0;
  for (char c : s) n += chars.find(c) != std::string_view::npos;
  return n;
}

void CheckReport(std::string_view s) {
  std::string valid = ValidUtf8(s);
  std::string markdown = ReportToMarkdown(ReportWith(valid));
  // The same report with a harmless name: no line or cell may come or go.
  std::string neutral = s.empty() ? "" : "x";
  std::string plain = ReportToMarkdown(ReportWith(neutral));
  FUZZ_CHECK(IsValidUtf8(markdown));
  FUZZ_CHECK(!HasControl(markdown, "\n"));
  FUZZ_CHECK(CellSeparators(markdown) == CellSeparators(plain));
  // The command is one code span, between fences longer than any run of
  // backticks inside.
  std::string_view head = std::string_view(markdown).substr(0, markdown.find('\n'));
  FUZZ_CHECK(head.starts_with("## iotap report: `"));
  head.remove_prefix(std::string_view("## iotap report: ").size());
  size_t fence = head.find_first_not_of('`');
  FUZZ_CHECK(fence != std::string_view::npos && head.size() > 2 * fence);
  FUZZ_CHECK(head.substr(head.size() - fence) == std::string(fence, '`'));
  FUZZ_CHECK(head[head.size() - fence - 1] != '`');
  std::string_view code = head.substr(fence, head.size() - 2 * fence);
  FUZZ_CHECK(code.find(std::string(fence, '`')) == std::string_view::npos);
  // Outside that code span, whose text is never read as HTML, the only raw
  // HTML is the report's own footer.
  FUZZ_CHECK(Count(markdown.substr(markdown.find('\n')), "<>") ==
             Count(plain.substr(plain.find('\n')), "<>"));

  std::string text = ReportToText(ReportWith(valid));
  FUZZ_CHECK(IsValidUtf8(text));
  FUZZ_CHECK(!HasControl(text, "\n"));
  FUZZ_CHECK(Count(text, "\n") == Count(ReportToText(ReportWith(neutral)), "\n"));

  std::string json = ReportToJson(ReportWith(valid));
  FUZZ_CHECK(IsValidUtf8(json));
  JsonTokenizer tokens(json);
  JsonToken t;
  do {
    FUZZ_CHECK(tokens.Next(&t).ok());
  } while (t.type != JsonToken::kEnd);
}

}  // namespace
}  // namespace iotap::analyzer

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view s(reinterpret_cast<const char*>(data), size);
  iotap::analyzer::CheckEscapers(s);
  iotap::analyzer::CheckReport(s);
  return 0;
}
