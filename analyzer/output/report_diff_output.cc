#include "analyzer/output/report_diff_output.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/text.h"
#include "google/protobuf/util/json_util.h"

namespace iotap::analyzer {

namespace {

using report::FindingDiff;
using report::MetricDiff;
using report::ReportDiff;

std::string Number(double v) {
  double a = std::fabs(v);
  if (a >= 100 || (a < 1e15 && v == std::round(v))) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.2f", v);
}

std::string Command(const report::DiffSide& side) {
  std::vector<std::string> shown;
  for (const std::string& a : side.command()) shown.push_back(DisplayName(a));
  return absl::StrJoin(shown, " ");
}

std::string Relative(bool has, double relative) {
  if (!has) return "n/a";
  if (relative == 0) return "0.0%";
  return absl::StrFormat("%+.1f%%", relative * 100);
}

const char* VerdictWord(MetricDiff::Verdict v) {
  switch (v) {
    case MetricDiff::BETTER:
      return "better";
    case MetricDiff::WORSE:
      return "worse";
    case MetricDiff::SAME:
      return "same";
    default:
      return "";
  }
}

const char* StatusWord(FindingDiff::Status s) {
  switch (s) {
    case FindingDiff::NEW:
      return "new";
    case FindingDiff::PERSISTS:
      return "persists";
    case FindingDiff::RESOLVED:
      return "resolved";
    default:
      return "?";
  }
}

const char* SeverityWord(report::Finding::Severity s) {
  switch (s) {
    case report::Finding::CRITICAL:
      return "CRITICAL";
    case report::Finding::WARNING:
      return "WARNING";
    case report::Finding::INFO:
      return "INFO";
    default:
      return "-";
  }
}

// One metric's cells: A, B, change, relative change, verdict.
std::array<std::string, 5> Cells(const MetricDiff& m) {
  return {m.has_a() ? FormatFigure(m.a(), m.unit()) : "n/a",
          m.has_b() ? FormatFigure(m.b(), m.unit()) : "n/a",
          m.has_change() ? FormatChange(m.change(), m.unit()) : "n/a",
          m.has_change() ? Relative(m.has_relative_change(), m.relative_change()) : "n/a",
          VerdictWord(m.verdict())};
}

// "1.2 ms -> 800.0 us (-400.0 us, -33.3%)" for a piece of evidence, with
// each side's own text where it has one.
std::string EvidenceLine(const report::EvidenceDiff& e, const char* arrow) {
  auto side = [&](bool has, double v, const std::string& text) {
    if (!has) return std::string("n/a");
    return text.empty() ? FormatFigure(v, e.unit()) : text;
  };
  std::string line = absl::StrCat(side(e.has_a(), e.a(), e.text_a()), " ", arrow, " ",
                                  side(e.has_b(), e.b(), e.text_b()));
  if (e.has_change()) {
    absl::StrAppend(&line, " (", FormatChange(e.change(), e.unit()), ", ",
                    Relative(e.has_relative_change(), e.relative_change()), ")");
  }
  return line;
}

}  // namespace

std::string FormatFigure(double value, const std::string& unit) {
  if (unit == "s") return HumanDuration(value);
  if (unit == "bytes") return HumanBytes(value);
  if (unit == "bytes/s") return HumanRate(value);
  if (unit == "share") return absl::StrFormat("%.1f%%", value * 100);
  if (unit == "ratio") return absl::StrFormat("%.2fx", value);
  std::string number = Number(value);
  if (unit.empty()) return number;
  // "1 call", not "1 calls", for the count units the outputs use.
  static constexpr std::pair<const char*, const char*> kSingular[] = {
      {"steps", "step"}, {"files", "file"},   {"calls", "call"},
      {"cores", "core"}, {"events", "event"}, {"processes", "process"}};
  if (number == "1") {
    for (const auto& [plural, singular] : kSingular) {
      if (unit == plural) return absl::StrCat(number, " ", singular);
    }
  }
  return absl::StrCat(number, " ", unit);
}

std::string FormatChange(double change, const std::string& unit) {
  if (unit == "share") {
    return change == 0 ? "0.0 pp" : absl::StrFormat("%+.1f pp", change * 100);
  }
  if (change == 0) return FormatFigure(0, unit);
  return absl::StrCat(change > 0 ? "+" : "-", FormatFigure(std::fabs(change), unit));
}

std::string DiffToText(const ReportDiff& d) {
  std::string out = "iotap diff: A (before) -> B (after)\n";
  absl::StrAppend(&out, "  A: ", DisplayName(d.a().path()), " (", d.a().source(),
                  "): ", Command(d.a()), "\n");
  absl::StrAppend(&out, "  B: ", DisplayName(d.b().path()), " (", d.b().source(),
                  "): ", Command(d.b()), "\n");

  // Columns: name, A, B, change, relative, verdict; names left-aligned,
  // figures right-aligned.
  std::vector<std::array<std::string, 6>> rows;
  rows.push_back({"", "A", "B", "change", "relative", ""});
  for (const MetricDiff& m : d.metrics()) {
    std::array<std::string, 5> c = Cells(m);
    rows.push_back({m.name(), c[0], c[1], c[2], c[3], c[4]});
  }
  std::array<size_t, 6> width{};
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::array<std::string, 6>& row) {
    std::string s = absl::StrFormat("    %-*s", static_cast<int>(width[0]), row[0]);
    for (size_t i = 1; i < 5; ++i)
      absl::StrAppendFormat(&s, "  %*s", static_cast<int>(width[i]), row[i]);
    if (!row[5].empty()) absl::StrAppend(&s, "  ", row[5]);
    return s + "\n";
  };
  absl::StrAppend(&out, "\n", line(rows[0]));
  std::string group;
  for (int i = 0; i < d.metrics_size(); ++i) {
    if (d.metrics(i).group() != group) {
      group = d.metrics(i).group();
      absl::StrAppend(&out, "  ", group, "\n");
    }
    absl::StrAppend(&out, line(rows[i + 1]));
  }

  absl::StrAppend(&out, "\nFindings\n");
  if (d.findings_size() == 0) absl::StrAppend(&out, "  (none in either run)\n");
  for (const FindingDiff& f : d.findings()) {
    std::string verdict = VerdictWord(f.verdict());
    absl::StrAppendFormat(&out, "  %-8s  %s -> %s  %s%s\n", StatusWord(f.status()),
                          SeverityWord(f.severity_a()), SeverityWord(f.severity_b()),
                          DisplayName(f.title()), verdict.empty() ? "" : "  (" + verdict + ")");
    const std::string& summary =
        f.status() == FindingDiff::RESOLVED ? f.summary_a() : f.summary_b();
    absl::StrAppend(&out, "            ",
                    f.status() == FindingDiff::RESOLVED ? "A: " : "B: ", DisplayName(summary),
                    "\n");
    if (f.status() != FindingDiff::PERSISTS) continue;
    for (const report::EvidenceDiff& e : f.evidence()) {
      absl::StrAppend(&out, "            - ", DisplayName(e.name()), ": ",
                      DisplayName(EvidenceLine(e, "->")), "\n");
    }
  }
  if (d.notes_size() > 0) {
    absl::StrAppend(&out, "\nNotes\n");
    for (const std::string& n : d.notes()) absl::StrAppend(&out, "  - ", DisplayName(n), "\n");
  }
  return out;
}

std::string DiffToMarkdown(const ReportDiff& d) {
  std::string out =
      "## iotap diff: A (before) → B (after)\n\n| | run | source | command |\n"
      "|---|---|---|---|\n";
  for (const auto& [name, side] : {std::pair{"A", &d.a()}, std::pair{"B", &d.b()}}) {
    absl::StrAppend(&out, "| **", name, "** | ", MarkdownText(side->path()), " | ", side->source(),
                    " | ", MarkdownText(absl::StrJoin(side->command(), " ")), " |\n");
  }
  absl::StrAppend(&out,
                  "\n### Key figures\n\n| figure | A | B | change | relative | verdict |\n"
                  "|---|---:|---:|---:|---:|---|\n");
  std::string group;
  for (const MetricDiff& m : d.metrics()) {
    if (m.group() != group) {
      group = m.group();
      absl::StrAppend(&out, "| **", group, "** | | | | | |\n");
    }
    std::array<std::string, 5> c = Cells(m);
    std::string verdict = m.verdict() == MetricDiff::WORSE ? "**worse**" : c[4];
    absl::StrAppend(&out, "| ", m.name(), " | ", c[0], " | ", c[1], " | ", c[2], " | ", c[3], " | ",
                    verdict, " |\n");
  }
  absl::StrAppend(&out, "\n### Findings\n\n");
  if (d.findings_size() == 0) absl::StrAppend(&out, "None in either run.\n");
  for (const FindingDiff& f : d.findings()) {
    std::string verdict = VerdictWord(f.verdict());
    std::string status = StatusWord(f.status());
    status[0] = static_cast<char>(std::toupper(status[0]));
    bool resolved = f.status() == FindingDiff::RESOLVED;
    absl::StrAppend(&out, "- **", status, "** (", SeverityWord(f.severity_a()), " → ",
                    SeverityWord(f.severity_b()), verdict.empty() ? "" : ", " + verdict, "): **",
                    MarkdownText(f.title()), ".** ", resolved ? "Was: " : "",
                    MarkdownText(resolved ? f.summary_a() : f.summary_b()), "\n");
    if (f.status() != FindingDiff::PERSISTS) continue;
    for (const report::EvidenceDiff& e : f.evidence()) {
      absl::StrAppend(&out, "  - ", MarkdownText(e.name()), ": ",
                      MarkdownText(EvidenceLine(e, "→")), "\n");
    }
  }
  if (d.notes_size() > 0) {
    absl::StrAppend(&out, "\n### Notes\n\n");
    for (const std::string& n : d.notes()) absl::StrAppend(&out, "- ", MarkdownText(n), "\n");
  }
  absl::StrAppend(&out, "\n<sub>iotap diff ", d.schema_version(), "; changes below ",
                  Number(d.noise_relative() * 100), "% (", Number(d.noise_share() * 100),
                  " pp for shares) count as the same; full details: "
                  "`iotap diff A B --format json`</sub>\n");
  return out;
}

std::string DiffToJson(const ReportDiff& d) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(d, &out, options);
  if (!status.ok()) return absl::StrCat("{\"error\": \"", status.ToString(), "\"}\n");
  return out + "\n";
}

}  // namespace iotap::analyzer
