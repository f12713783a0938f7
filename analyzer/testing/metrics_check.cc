#include "analyzer/testing/metrics_check.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace iotap::analyzer {

namespace {

bool IsMetricName(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0])) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_' && c != ':') return false;
  }
  return true;
}

bool IsLabelName(absl::string_view s) {
  if (s.empty() || absl::ascii_isdigit(s[0]) || absl::StartsWith(s, "__")) return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && c != '_') return false;
  }
  return true;
}

// A float as both formats write one: decimal digits with an optional sign,
// point and exponent, or NaN, +Inf, -Inf.
bool ParseValue(absl::string_view s, double* out) {
  if (s == "NaN" || s == "+Inf" || s == "-Inf" || s == "Inf") {
    *out = s == "NaN" ? std::nan("") : (s[0] == '-' ? -HUGE_VAL : HUGE_VAL);
    return true;
  }
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
      return false;
    }
  }
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && errno == 0;
}

class Parser {
 public:
  explicit Parser(MetricsSyntax syntax) : om_(syntax == MetricsSyntax::kOpenMetrics) {}

  absl::Status Line(absl::string_view line);
  absl::Status Finish() const {
    if (om_ && !eof_) return absl::InvalidArgumentError("no \"# EOF\" line at the end");
    return absl::OkStatus();
  }
  ParsedMetrics Take() { return std::move(out_); }

 private:
  absl::Status Descriptor(absl::string_view line);
  absl::Status Sample(absl::string_view line);
  absl::Status EnterFamily(const std::string& family);
  // The family a sample of `name` belongs to, given the current one.
  std::string FamilyOf(const std::string& name) const;

  const bool om_;
  bool eof_ = false;
  std::string family_;
  std::set<std::string> done_;  // families ended
  std::set<std::string> helps_;
  std::set<std::string> sampled_;  // families with a sample
  ParsedMetrics out_;
};

absl::Status Parser::EnterFamily(const std::string& family) {
  if (family == family_) return absl::OkStatus();
  if (done_.count(family) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("family ", family, " is split in two"));
  }
  if (!family_.empty()) done_.insert(family_);
  family_ = family;
  return absl::OkStatus();
}

std::string Parser::FamilyOf(const std::string& name) const {
  auto type = out_.types.find(family_);
  if (name == family_ || type == out_.types.end()) return name;
  std::vector<std::string> suffixes;
  if (om_ && type->second == "counter") suffixes = {"_total", "_created"};
  if (type->second == "histogram") suffixes = {"_bucket", "_count", "_sum", "_created"};
  if (type->second == "summary") suffixes = {"_count", "_sum", "_created"};
  for (const std::string& s : suffixes) {
    if (name == family_ + s) return family_;
  }
  return name;
}

absl::Status Parser::Descriptor(absl::string_view line) {
  std::vector<absl::string_view> words = absl::StrSplit(line, absl::MaxSplits(' ', 3));
  if (words.size() < 2 || words[0] != "#") {
    return absl::InvalidArgumentError("a comment must start with \"# \"");
  }
  absl::string_view keyword = words[1];
  bool known = keyword == "HELP" || keyword == "TYPE" || (om_ && keyword == "UNIT");
  if (!known) {
    if (om_) return absl::InvalidArgumentError("OpenMetrics has no comments but HELP, TYPE, UNIT");
    return absl::OkStatus();
  }
  if (words.size() < 3 || !IsMetricName(words[2])) {
    return absl::InvalidArgumentError(absl::StrCat(keyword, " without a valid metric name"));
  }
  std::string name(words[2]);
  absl::string_view rest = words.size() == 4 ? words[3] : "";
  if (absl::Status s = EnterFamily(name); !s.ok()) return s;
  if (keyword == "HELP") {
    if (!helps_.insert(name).second) return absl::InvalidArgumentError("a second HELP line");
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] != '\\') continue;
      char next = i + 1 < rest.size() ? rest[i + 1] : '\0';
      if (next != '\\' && next != 'n' && !(om_ && next == '"')) {
        return absl::InvalidArgumentError("a HELP text with an unknown escape");
      }
      ++i;
    }
    return absl::OkStatus();
  }
  if (keyword == "UNIT") return absl::OkStatus();
  static const std::set<std::string> kProm = {"counter", "gauge", "histogram", "summary",
                                              "untyped"};
  static const std::set<std::string> kOm = {"counter", "gauge", "histogram", "summary",
                                            "unknown", "info",  "stateset",  "gaugehistogram"};
  if ((om_ ? kOm : kProm).count(std::string(rest)) == 0) {
    return absl::InvalidArgumentError(absl::StrCat("unknown type '", rest, "'"));
  }
  if (sampled_.count(name) != 0)
    return absl::InvalidArgumentError("TYPE after the family's samples");
  if (!out_.types.emplace(name, std::string(rest)).second) {
    return absl::InvalidArgumentError("a second TYPE line");
  }
  if (om_ && rest == "counter" && absl::EndsWith(name, "_total")) {
    return absl::InvalidArgumentError("an OpenMetrics counter family is named without _total");
  }
  return absl::OkStatus();
}

absl::Status Parser::Sample(absl::string_view line) {
  size_t i = 0;
  while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
  std::string name(line.substr(0, i));
  if (!IsMetricName(name)) return absl::InvalidArgumentError("a sample without a valid name");
  std::map<std::string, std::string> labels;
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (true) {
      if (i < line.size() && line[i] == '}') break;
      size_t eq = line.find('=', i);
      if (eq == absl::string_view::npos) return absl::InvalidArgumentError("a label without =");
      std::string label(line.substr(i, eq - i));
      if (!IsLabelName(label)) {
        return absl::InvalidArgumentError(absl::StrCat("bad label name '", label, "'"));
      }
      i = eq + 1;
      if (i >= line.size() || line[i] != '"')
        return absl::InvalidArgumentError("unquoted label value");
      std::string value;
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\') {
          char next = i + 1 < line.size() ? line[i + 1] : '\0';
          if (next != '\\' && next != '"' && next != 'n') {
            return absl::InvalidArgumentError("a label value with an unknown escape");
          }
          value.push_back(next == 'n' ? '\n' : next);
          ++i;
        } else {
          value.push_back(line[i]);
        }
      }
      if (i >= line.size()) return absl::InvalidArgumentError("an unterminated label value");
      ++i;
      if (!labels.emplace(label, value).second) {
        return absl::InvalidArgumentError(absl::StrCat("label ", label, " twice"));
      }
      if (i < line.size() && line[i] == ',') {
        ++i;
        if (om_ && i < line.size() && line[i] == '}') {
          return absl::InvalidArgumentError("a comma before } (OpenMetrics)");
        }
        continue;
      }
      if (i < line.size() && line[i] == '}') break;
      return absl::InvalidArgumentError("labels not separated by commas");
    }
    ++i;
  }
  if (i >= line.size() || line[i] != ' ')
    return absl::InvalidArgumentError("no space before the value");
  std::vector<absl::string_view> rest = absl::StrSplit(line.substr(i + 1), ' ');
  double value = 0, timestamp = 0;
  if (rest.empty() || rest.size() > 2 || !ParseValue(rest[0], &value) ||
      (rest.size() == 2 && !ParseValue(rest[1], &timestamp))) {
    return absl::InvalidArgumentError("a bad value or timestamp");
  }
  std::string family = FamilyOf(name);
  if (absl::Status s = EnterFamily(family); !s.ok()) return s;
  sampled_.insert(family);
  auto type = out_.types.find(family);
  if (om_ && type != out_.types.end() && type->second == "counter") {
    if (name == family)
      return absl::InvalidArgumentError("an OpenMetrics counter's sample ends in _total");
    if (!(value >= 0)) return absl::InvalidArgumentError("a counter below 0");
  }
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels) parts.push_back(absl::StrCat(k, "=\"", v, "\""));
  std::string key = labels.empty() ? name : absl::StrCat(name, "{", absl::StrJoin(parts, ","), "}");
  if (!out_.samples.emplace(key, value).second) {
    return absl::InvalidArgumentError(absl::StrCat("the series ", key, " twice"));
  }
  return absl::OkStatus();
}

absl::Status Parser::Line(absl::string_view line) {
  if (eof_) return absl::InvalidArgumentError("a line after # EOF");
  if (line.empty()) {
    return om_ ? absl::InvalidArgumentError("an empty line (OpenMetrics)") : absl::OkStatus();
  }
  if (om_ && line == "# EOF") {
    eof_ = true;
    return absl::OkStatus();
  }
  return line[0] == '#' ? Descriptor(line) : Sample(line);
}

}  // namespace

absl::StatusOr<ParsedMetrics> ParseMetrics(const std::string& text, MetricsSyntax syntax) {
  if (!text.empty() && text.back() != '\n') {
    return absl::InvalidArgumentError("the last line does not end with a newline");
  }
  Parser parser(syntax);
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  lines.pop_back();  // after the last newline
  for (size_t n = 0; n < lines.size(); ++n) {
    absl::Status s = parser.Line(lines[n]);
    if (!s.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", n + 1, ": ", s.message(), ": ", lines[n]));
    }
  }
  if (absl::Status s = parser.Finish(); !s.ok()) return s;
  return parser.Take();
}

}  // namespace iotap::analyzer
