// A small streaming JSON writer for the analyzer's outputs.
//
//   JsonWriter j;
//   j.BeginObject();
//   j.Key("events"); j.Uint(42);
//   j.Key("path");   j.String(path);   // any bytes: see below
//   j.EndObject();
//   std::string out = j.Take();
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
#include <string>
#include <string_view>
#include <vector>

namespace iotap::analyzer {

class JsonWriter {
 public:
  // `indent` 0 writes everything on one line.
  explicit JsonWriter(int indent = 2) : indent_(indent) {}

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

  std::string Take() { return std::move(out_); }

 private:
  void BeforeValue();
  void NewLine();

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
