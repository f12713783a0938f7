#include "analyzer/steps/json_tokenizer.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace iotap::analyzer {

namespace {

constexpr size_t kBufferBytes = 1 << 20;
// Deeper nesting than any step log has is taken for damage (and would make
// the container stack grow without bound).
constexpr size_t kMaxDepth = 1000;
// Longer strings than this are taken for damage (an unclosed quote).
constexpr size_t kMaxStringBytes = 64u << 20;

std::string Describe(int c) {
  if (c < 0) return "the end of the input";
  if (c >= 0x20 && c < 0x7f) return absl::StrFormat("'%c'", c);
  return absl::StrFormat("byte 0x%02x", c);
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    *out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out += static_cast<char>(0xc0 | (cp >> 6));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    *out += static_cast<char>(0xe0 | (cp >> 12));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    *out += static_cast<char>(0xf0 | (cp >> 18));
    *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    *out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace

JsonTokenizer::JsonTokenizer(ByteSource* source) : source_(source) {}

JsonTokenizer::JsonTokenizer(std::string_view text)
    : p_(text.data()), end_(text.data() + text.size()) {}

bool JsonTokenizer::Fill() {
  if (source_ == nullptr || !status_.ok()) return false;
  buffer_.resize(kBufferBytes);
  absl::StatusOr<size_t> n = source_->Read(buffer_.data(), buffer_.size());
  if (!n.ok()) {
    status_ = n.status();
    return false;
  }
  if (*n == 0) return false;
  p_ = buffer_.data();
  end_ = p_ + *n;
  return true;
}

int JsonTokenizer::Peek() {
  if (p_ == end_ && !Fill()) return -1;
  return static_cast<unsigned char>(*p_);
}

int JsonTokenizer::Get() {
  int c = Peek();
  if (c >= 0) {
    ++p_;
    ++offset_;
  }
  return c;
}

std::string JsonTokenizer::Where() const {
  return absl::StrCat("line ", line_, ", column ", offset_ - line_start_ + 1, " (byte ", offset_,
                      ")");
}

absl::Status JsonTokenizer::Error(const std::string& what) const {
  return absl::InvalidArgumentError(absl::StrCat(Where(), ": ", what));
}

void JsonTokenizer::AfterValue() { state_ = stack_.empty() ? State::kDone : State::kCommaOrEnd; }

absl::Status JsonTokenizer::Next(JsonToken* token) {
  token->text.clear();
  for (;;) {
    int c = Peek();
    while (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      Get();
      if (c == '\n') {
        ++line_;
        line_start_ = offset_;
      }
      c = Peek();
    }
    token->line = line_;
    token->column = offset_ - line_start_ + 1;
    token->offset = offset_;
    if (c < 0) {
      if (!status_.ok()) return status_;
      if (state_ == State::kDone || (allow_many_ && state_ == State::kValue && stack_.empty())) {
        token->type = JsonToken::kEnd;
        return absl::OkStatus();
      }
      if (stack_.empty()) return Error("no JSON value: the input is empty");
      return Error(absl::StrCat("the input ends inside ", stack_.back() ? "an object" : "an array",
                                " (", stack_.size(), stack_.size() == 1 ? " level" : " levels",
                                " deep): the file is cut short?"));
    }
    switch (state_) {
      case State::kDone:
        if (!allow_many_) {
          return Error(
              absl::StrCat("unexpected ", Describe(c), " after the end of the JSON value"));
        }
        state_ = State::kValue;
        continue;
      case State::kColon:
        if (c != ':') {
          return Error(absl::StrCat("expected ':' after a member name, found ", Describe(c)));
        }
        Get();
        state_ = State::kValue;
        continue;
      case State::kCommaOrEnd:
        if (c == ',') {
          Get();
          state_ = stack_.back() ? State::kKey : State::kValue;
          continue;
        }
        if (c == (stack_.back() ? '}' : ']')) {
          Get();
          token->type = stack_.back() ? JsonToken::kEndObject : JsonToken::kEndArray;
          stack_.pop_back();
          AfterValue();
          return absl::OkStatus();
        }
        return Error(
            absl::StrCat("expected ',' or '", stack_.back() ? "}" : "]", "', found ", Describe(c)));
      case State::kKeyOrEnd:
        if (c == '}') {
          Get();
          token->type = JsonToken::kEndObject;
          stack_.pop_back();
          AfterValue();
          return absl::OkStatus();
        }
        [[fallthrough]];
      case State::kKey:
        if (c != '"') {
          return Error(
              absl::StrCat("expected a member name in double quotes, found ", Describe(c)));
        }
        Get();
        token->type = JsonToken::kKey;
        if (absl::Status s = ReadString(&token->text); !s.ok()) return s;
        state_ = State::kColon;
        return absl::OkStatus();
      case State::kValueOrEnd:
        if (c == ']') {
          Get();
          token->type = JsonToken::kEndArray;
          stack_.pop_back();
          AfterValue();
          return absl::OkStatus();
        }
        break;
      case State::kValue:
        break;
    }
    // A value.
    if (c == '{' || c == '[') {
      if (stack_.size() >= kMaxDepth) return Error("JSON nested more than 1000 levels deep");
      Get();
      stack_.push_back(c == '{');
      token->type = c == '{' ? JsonToken::kBeginObject : JsonToken::kBeginArray;
      state_ = c == '{' ? State::kKeyOrEnd : State::kValueOrEnd;
      return absl::OkStatus();
    }
    absl::Status s;
    if (c == '"') {
      Get();
      token->type = JsonToken::kString;
      s = ReadString(&token->text);
    } else if (c == '-' || (c >= '0' && c <= '9') || c == 'N' || c == 'I') {
      token->type = JsonToken::kNumber;
      s = ReadNumber(&token->text);
    } else if (c == 't') {
      token->type = JsonToken::kTrue;
      s = ReadWord("true");
    } else if (c == 'f') {
      token->type = JsonToken::kFalse;
      s = ReadWord("false");
    } else if (c == 'n') {
      token->type = JsonToken::kNull;
      s = ReadWord("null");
    } else {
      return Error(absl::StrCat("expected a value, found ", Describe(c)));
    }
    if (s.ok()) AfterValue();
    return s;
  }
}

absl::Status JsonTokenizer::ReadWord(std::string_view word) {
  for (char w : word) {
    int c = Peek();
    if (c != w) {
      return Error(absl::StrCat("expected '", std::string(word), "', found ", Describe(c)));
    }
    Get();
  }
  return absl::OkStatus();
}

absl::Status JsonTokenizer::ReadNumber(std::string* out) {
  auto digits = [&]() {
    size_t n = 0;
    for (int c = Peek(); c >= '0' && c <= '9'; c = Peek(), ++n) *out += static_cast<char>(Get());
    return n;
  };
  if (Peek() == 'N') {
    *out = "NaN";
    return ReadWord("NaN");
  }
  if (Peek() == '-') *out += static_cast<char>(Get());
  if (Peek() == 'I') {
    *out += "Infinity";
    return ReadWord("Infinity");
  }
  if (Peek() == '0') {
    *out += static_cast<char>(Get());
  } else if (digits() == 0) {
    return Error(absl::StrCat("expected a digit, found ", Describe(Peek())));
  }
  if (Peek() == '.') {
    *out += static_cast<char>(Get());
    if (digits() == 0) {
      return Error(absl::StrCat("expected a digit after '.', found ", Describe(Peek())));
    }
  }
  if (Peek() == 'e' || Peek() == 'E') {
    *out += static_cast<char>(Get());
    if (Peek() == '+' || Peek() == '-') *out += static_cast<char>(Get());
    if (digits() == 0) {
      return Error(absl::StrCat("expected a digit in the exponent, found ", Describe(Peek())));
    }
  }
  return absl::OkStatus();
}

absl::Status JsonTokenizer::ReadHex4(uint32_t* out) {
  *out = 0;
  for (int i = 0; i < 4; ++i) {
    int c = Peek();
    int v = c >= '0' && c <= '9'   ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (v < 0) {
      return Error(absl::StrCat("expected a hex digit in \\u escape, found ", Describe(c)));
    }
    Get();
    *out = *out * 16 + static_cast<uint32_t>(v);
  }
  return absl::OkStatus();
}

absl::Status JsonTokenizer::ReadString(std::string* out) {
  for (;;) {
    // Copy the run of plain characters in the buffer in one go.
    const char* run = p_;
    while (p_ != end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) {
      ++p_;
    }
    out->append(run, p_);
    offset_ += static_cast<uint64_t>(p_ - run);
    if (out->size() > kMaxStringBytes) return Error("a string longer than 64 MiB: unclosed quote?");
    if (p_ == end_) {
      if (Fill()) continue;
      if (!status_.ok()) return status_;
      return Error("the input ends inside a string: the file is cut short?");
    }
    int c = static_cast<unsigned char>(*p_);
    if (c < 0x20) {
      return Error(absl::StrFormat(
          "a control character (0x%02x) inside a string: unclosed quote, or unescaped text", c));
    }
    Get();
    if (c == '"') return absl::OkStatus();
    int e = Get();
    if (e < 0) {
      if (!status_.ok()) return status_;
      return Error("the input ends inside a string: the file is cut short?");
    }
    switch (e) {
      case '"':
        *out += '"';
        break;
      case '\\':
        *out += '\\';
        break;
      case '/':
        *out += '/';
        break;
      case 'b':
        *out += '\b';
        break;
      case 'f':
        *out += '\f';
        break;
      case 'n':
        *out += '\n';
        break;
      case 'r':
        *out += '\r';
        break;
      case 't':
        *out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (absl::Status s = ReadHex4(&cp); !s.ok()) return s;
        if (cp >= 0xd800 && cp < 0xdc00 && Peek() == '\\') {
          Get();
          uint32_t low;
          if (Get() != 'u') return Error("expected \\u after a high surrogate");
          if (absl::Status s = ReadHex4(&low); !s.ok()) return s;
          cp = low >= 0xdc00 && low < 0xe000 ? 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00)
                                             : 0xfffd;
        } else if (cp >= 0xd800 && cp < 0xe000) {
          cp = 0xfffd;  // a lone surrogate, as Python may write: replaced
        }
        AppendUtf8(cp, out);
        break;
      }
      default:
        return Error(absl::StrCat("unknown escape \\", std::string(1, static_cast<char>(e)),
                                  " in a string"));
    }
  }
}

absl::Status JsonTokenizer::SkipValue(const JsonToken& first) {
  if (first.type != JsonToken::kBeginObject && first.type != JsonToken::kBeginArray) {
    return absl::OkStatus();
  }
  size_t target = depth() - 1;
  JsonToken t;
  while (depth() > target) {
    if (absl::Status s = Next(&t); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace iotap::analyzer
