// A small streaming JSON writer for the analyzer's outputs.
//
//   JsonWriter j;
//   j.BeginObject();
//   j.Key("events"); j.Uint(42);
//   j.Key("path");   j.String(path);   // any bytes: see below
//   j.EndObject();
//   std::string out = j.Take();
//
// Or, for output too large to keep whole (`iotap stats --json` of a run of
// a million files is half a gigabyte), handed on as it is written:
//
//   JsonWriter j(2, [&](std::string_view piece) { out.Write(piece); });
//   ...
//   j.Take();  // hands on the rest; returns ""
//
// Strings may hold any bytes. Valid UTF-8 is kept; control characters (C0,
// DEL and C1), '"' and '\' are escaped; each byte that is not part of valid
// UTF-8 becomes the six characters "\\xNN" (a backslash, 'x' and two hex
// digits, written as "\\\\xNN" in the JSON text), so a non-UTF-8 file name
// stays recognisable and the output is always valid JSON. '<', '>' and '&' are
// escaped as \u003c, \u003e, \u0026, so the text is inert inside HTML too.

#ifndef IOTAP_ANALYZER_BASE_JSON_WRITER_H_
#define IOTAP_ANALYZER_BASE_JSON_WRITER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace iotap::analyzer {

class JsonWriter {
 public:
  // `indent` 0 writes everything on one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}
  // Hands the text on to `sink` in pieces of about kPieceBytes, each ending
  // where an object or array does.
  using Sink = std::function<void(std::string_view)>;
  JsonWriter(int indent, Sink sink) : sink_(std::move(sink)), indent_(indent) {}

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
  void Int(int64_t value);
  void Uint(uint64_t value);
  // Finite numbers with up to 6 significant decimals after rounding; NaN and
  // infinities become null.
  void Double(double value);
  void Bool(bool value);
  void Null();

  // The text (with a sink: hands on what is left, and returns "").
  std::string Take();

  static constexpr size_t kPieceBytes = 1 << 20;

 private:
  void BeforeValue();
  void NewLine();
  void HandOnIfLarge();

  Sink sink_;
  std::string out_;
  // For each open container: whether it has an element already.
  std::vector<bool> has_element_;
  bool after_key_ = false;
  int indent_;
};

// The escaped body of a JSON string for `value` (without the quotes).
std::string JsonEscape(std::string_view value);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_JSON_WRITER_H_
