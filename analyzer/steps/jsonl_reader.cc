#include "analyzer/steps/jsonl_reader.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/steps/byte_source.h"
#include "analyzer/steps/decimal.h"
#include "analyzer/steps/json_tokenizer.h"
#include "analyzer/steps/span_building.h"

namespace iotap::analyzer {

namespace {

// A longer line is taken for damage (a file that is not JSON lines at all).
constexpr size_t kMaxLineBytes = 16u << 20;

struct LineResult {
  StepSpan span;
  bool placed_wait = false;  // data_wait given as a duration
  bool cut_wait = false;     // ... longer than the step
  std::vector<std::string> unknown;  // fields iotap does not read
};

// Distinct unknown field names kept for the notes: a log may carry many.
constexpr size_t kMaxUnknownNames = 64;
// ... and named in a note.
constexpr size_t kUnknownNamesShown = 10;

// The notes on fields iotap does not read: one per field whose name says
// it is a wait (the user meant data_wait), one naming the rest.
void NoteUnknownFields(const std::set<std::string>& names, bool more, StepLog* log) {
  std::vector<std::string> others;
  for (const std::string& name : names) {
    if (absl::StrContains(absl::AsciiStrToLower(name), "wait")) {
      log->notes.push_back(absl::StrCat("unknown field \"", name,
                                        "\"; iotap reads \"data_wait\" and \"data_waits\""));
    } else if (others.size() < kUnknownNamesShown) {
      others.push_back(absl::StrCat("\"", name, "\""));
    } else {
      more = true;
    }
  }
  if (others.empty()) return;
  log->notes.push_back(absl::StrCat("fields iotap does not read, ignored: ",
                                    absl::StrJoin(others, ", "), more ? " and more" : ""));
}

absl::Status Expect(bool ok, const JsonToken& at, const std::string& what) {
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("line ", at.line, ", column ", at.column, " (byte ", at.offset, "): ", what));
}

// The rest of a "data_waits" array, after its '[': [start, end] pairs.
absl::Status ParseWaits(JsonTokenizer* json, std::vector<TimeWindow>* waits) {
  JsonToken t;
  for (;;) {
    if (absl::Status s = json->Next(&t); !s.ok()) return s;
    if (t.type == JsonToken::kEndArray) return absl::OkStatus();
    const char* kPair = "each of \"data_waits\" must be a [start, end] pair of epoch seconds";
    if (absl::Status s = Expect(t.type == JsonToken::kBeginArray, t, kPair); !s.ok()) return s;
    int64_t ends[2];
    for (int64_t& end : ends) {
      if (absl::Status s = json->Next(&t); !s.ok()) return s;
      std::optional<int64_t> ns;
      if (t.type == JsonToken::kNumber) ns = ScaleDecimal(t.text, 9);
      if (absl::Status s = Expect(ns.has_value(), t, kPair); !s.ok()) return s;
      end = *ns;
    }
    if (absl::Status s = json->Next(&t); !s.ok()) return s;
    if (absl::Status s = Expect(t.type == JsonToken::kEndArray && ends[1] >= ends[0], t,
                                "a data_waits pair must be [start, end] with end >= start");
        !s.ok()) {
      return s;
    }
    waits->push_back({ends[0], ends[1]});
  }
}

// Parses one line (already known not to be blank) into a span.
absl::Status ParseLine(std::string_view text, uint64_t line, uint64_t offset, LineResult* out) {
  JsonTokenizer json(text);
  json.StartAt(line, offset);
  JsonToken t, value;
  if (absl::Status s = json.Next(&t); !s.ok()) return s;
  if (absl::Status s = Expect(t.type == JsonToken::kBeginObject, t, "expected a JSON object");
      !s.ok()) {
    return s;
  }
  std::optional<int64_t> step, start, end, wait;
  std::optional<std::vector<TimeWindow>> waits;
  StepSpan& span = out->span;
  for (;;) {
    if (absl::Status s = json.Next(&t); !s.ok()) return s;
    if (t.type == JsonToken::kEndObject) break;
    if (absl::Status s = json.Next(&value); !s.ok()) return s;
    const std::string& key = t.text;
    bool number = value.type == JsonToken::kNumber;
    absl::Status s;
    if (key == "step" || key == "rank" || key == "pid") {
      int64_t n = 0;
      s = Expect(number && absl::SimpleAtoi(value.text, &n), value,
                 absl::StrCat("\"", key, "\" must be an integer"));
      if (key == "step") step = n;
      if (key == "rank") span.rank = static_cast<int>(n);
      if (key == "pid") span.pid = static_cast<int>(n);
    } else if (key == "start" || key == "end" || key == "data_wait") {
      std::optional<int64_t> ns = number ? ScaleDecimal(value.text, 9) : std::nullopt;
      s = Expect(ns.has_value(), value, absl::StrCat("\"", key, "\" must be a number of seconds"));
      (key == "start" ? start : key == "end" ? end : wait) = ns;
    } else if (key == "data_waits") {
      s = Expect(value.type == JsonToken::kBeginArray, value,
                 "\"data_waits\" must be an array of [start, end] pairs");
      if (s.ok()) s = ParseWaits(&json, &waits.emplace());
    } else {
      out->unknown.push_back(key);
      s = json.SkipValue(value);
    }
    if (!s.ok()) return s;
  }
  if (absl::Status s = json.Next(&t); !s.ok()) return s;  // only the end may follow
  for (auto [field, present] : {std::pair{"step", step.has_value()},
                                {"start", start.has_value()},
                                {"end", end.has_value()}}) {
    if (!present) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line, ": the required field \"", field, "\" is missing"));
    }
  }
  if (*end < *start) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": \"end\" is before \"start\""));
  }
  if (wait && *wait < 0) {
    return absl::InvalidArgumentError(absl::StrCat("line ", line, ": \"data_wait\" is negative"));
  }
  span.step = *step;
  span.start_ns = *start;
  span.end_ns = *end;
  if (waits) {
    std::sort(waits->begin(), waits->end(),
              [](const TimeWindow& a, const TimeWindow& b) { return a.start_ns < b.start_ns; });
    size_t cursor = 0;
    internal::AddWaitsInside(*waits, &cursor, &span);
    span.has_data_wait = true;
  } else if (wait) {
    out->placed_wait = true;
    out->cut_wait = *wait > span.duration_ns();
    int64_t length = std::min(*wait, span.duration_ns());
    if (length > 0) span.data_waits.push_back({span.start_ns, span.start_ns + length});
    span.has_data_wait = true;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<StepLog> ReadJsonLinesLog(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
  if (!in.ok()) return in.status();
  StepLog log;
  log.source = StepSource::kJsonLines;
  log.path = path;
  internal::ErrorList errors(&log);
  int64_t placed = 0, cut = 0;
  std::set<std::string> unknown;
  bool more_unknown = false;
  std::string pending;  // the current line, possibly spread over reads
  std::vector<char> buffer(1 << 20);
  uint64_t line = 1, line_offset = 0;
  bool skipping = false;  // inside an over-long line
  auto finish_line = [&](std::string_view text) {
    if (text.find_first_not_of(" \t\r") == std::string_view::npos) return;
    LineResult result;
    absl::Status s = ParseLine(text, line, line_offset, &result);
    if (!s.ok()) {
      errors.Add(absl::StrCat(path, ": ", s.message(), ": line skipped"));
      return;
    }
    placed += result.placed_wait;
    cut += result.cut_wait;
    for (std::string& name : result.unknown) {
      if (unknown.size() < kMaxUnknownNames || unknown.count(name) != 0) {
        unknown.insert(std::move(name));
      } else {
        more_unknown = true;
      }
    }
    log.spans.push_back(std::move(result.span));
  };
  for (;;) {
    absl::StatusOr<size_t> n = (*in)->Read(buffer.data(), buffer.size());
    if (!n.ok()) {
      errors.Add(absl::StrCat(n.status().message(), " (in line ", line,
                              "; the lines before it are kept)"));
      pending.clear();  // the line the damage cut
      break;
    }
    if (*n == 0) break;
    std::string_view chunk(buffer.data(), *n);
    while (!chunk.empty()) {
      size_t newline = chunk.find('\n');
      std::string_view piece = chunk.substr(0, newline);
      if (!skipping) pending.append(piece);
      if (!skipping && pending.size() > kMaxLineBytes) {
        errors.Add(absl::StrCat(path, ": line ", line, " is longer than 16 MiB: line skipped"));
        skipping = true;
        pending.clear();
      }
      if (newline == std::string_view::npos) break;
      if (!skipping) finish_line(pending);
      line_offset = (*in)->offset() - (chunk.size() - newline - 1);
      pending.clear();
      skipping = false;
      ++line;
      chunk.remove_prefix(newline + 1);
    }
  }
  if (!skipping && !pending.empty()) finish_line(pending);
  errors.Close();
  log.notes.push_back(
      "JSON-lines step log: each line gives a step's start and end in epoch seconds");
  if (placed > 0) {
    log.notes.push_back(absl::StrCat(
        placed,
        " steps give data_wait as a duration only: it is placed at the start of its "
        "step, where a `for batch in loader` loop waits",
        cut > 0 ? absl::StrCat(" (", cut, " of them longer than their step, cut to it)") : ""));
  }
  NoteUnknownFields(unknown, more_unknown, &log);
  return internal::FinishStepLog(std::move(log));
}

}  // namespace iotap::analyzer
