// A streaming (pull) JSON tokenizer: one token at a time, no document tree,
// so a profiler trace of hundreds of megabytes costs a buffer, not its size
// in memory.
//
//   JsonTokenizer json(source);             // a ByteSource, or text in memory
//   JsonToken t;
//   while (true) {
//     absl::Status s = json.Next(&t);
//     if (!s.ok()) ...                      // "line 3, column 17 (byte 52): expected ':' ..."
//     if (t.type == JsonToken::kEnd) break;
//     if (t.type == JsonToken::kKey && t.text == "traceEvents") ...
//   }
//
// The tokenizer checks the grammar (RFC 8259) as it goes: a token it returns
// is always where JSON allows it, so callers only follow the structure. Two
// liberties, both what Python's json module writes: the numbers NaN,
// Infinity and -Infinity are accepted (as kNumber tokens with that text), and
// with `allow_many` a sequence of top-level values is one input (JSON lines).

#ifndef IOTAP_ANALYZER_STEPS_JSON_TOKENIZER_H_
#define IOTAP_ANALYZER_STEPS_JSON_TOKENIZER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/steps/byte_source.h"

namespace iotap::analyzer {

struct JsonToken {
  enum Type {
    kBeginObject,
    kEndObject,
    kBeginArray,
    kEndArray,
    kKey,     // an object member's name, in `text`
    kString,  // a string value, in `text` (escapes decoded, UTF-8)
    kNumber,  // a number value, `text` as written ("1.50e3", "-0", "NaN")
    kTrue,
    kFalse,
    kNull,
    kEnd,  // no more input
  };
  Type type = kEnd;
  std::string text;
  // Where the token starts: 1-based line and column, 0-based byte offset.
  uint64_t line = 0;
  uint64_t column = 0;
  uint64_t offset = 0;

  bool IsValue() const { return type != kEndObject && type != kEndArray && type != kKey; }
};

class JsonTokenizer {
 public:
  // Reads from `source` (not owned), which must outlive the tokenizer.
  explicit JsonTokenizer(ByteSource* source);
  // Reads `text` (not copied), which must outlive the tokenizer.
  explicit JsonTokenizer(std::string_view text);

  // Accept any number of top-level values one after another.
  void set_allow_many(bool allow) { allow_many_ = allow; }
  // Count positions from `line` (1-based) and byte `offset`: for text that
  // is a part of a file (one line of a JSON-lines file). Call before Next.
  void StartAt(uint64_t line, uint64_t offset) {
    line_ = line;
    offset_ = line_start_ = offset;
  }

  // The next token. Errors (InvalidArgument) say where ("line L, column C
  // (byte O): ...") and what was expected; a read error of the source is
  // passed on as it is (it names the file).
  absl::Status Next(JsonToken* token);

  // Skips the rest of the value that `first` (just returned by Next) begins:
  // nothing for a scalar, up to the matching end for an object or array.
  absl::Status SkipValue(const JsonToken& first);

  // Containers open around the next token (0 at the top level).
  size_t depth() const { return stack_.size(); }
  // "line L, column C (byte O)" of the next character to read.
  std::string Where() const;

 private:
  enum class State : uint8_t {
    kValue,       // a value must come
    kValueOrEnd,  // after '[': a value or ']'
    kKeyOrEnd,    // after '{': a key or '}'
    kKey,         // after ',' in an object
    kColon,       // after a key
    kCommaOrEnd,  // after a member or element
    kDone,        // after the top-level value
  };

  bool Fill();  // false at the end of input (or on a read error, kept in status_)
  int Peek();   // the next byte, or -1 at the end
  int Get();
  absl::Status Error(const std::string& what) const;
  absl::Status ReadString(std::string* out);
  absl::Status ReadNumber(std::string* out);
  absl::Status ReadWord(std::string_view word);
  absl::Status ReadHex4(uint32_t* out);
  void AfterValue();

  ByteSource* source_ = nullptr;
  std::string buffer_;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  absl::Status status_;
  uint64_t offset_ = 0;  // of *p_
  uint64_t line_ = 1;
  uint64_t line_start_ = 0;  // offset of the current line's first byte
  std::vector<bool> stack_;  // true: object, false: array
  State state_ = State::kValue;
  bool allow_many_ = false;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_JSON_TOKENIZER_H_
