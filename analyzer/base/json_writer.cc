#include "analyzer/base/json_writer.h"

#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

std::string JsonEscape(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  size_t i = 0;
  while (i < value.size()) {
    unsigned char c = static_cast<unsigned char>(value[i]);
    size_t len = Utf8SequenceLength(value, i);
    if (len == 0) {  // not valid UTF-8
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    // C1 controls (U+0080 to U+009F), like C0 ones, as \u escapes: JSON shown
    // on a terminal must not drive it.
    if (len == 2 && c == 0xC2 && static_cast<unsigned char>(value[i + 1]) < 0xA0) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned char>(value[i + 1]));
      out += buf;
      i += len;
      continue;
    }
    if (len > 1) {
      out.append(value.substr(i, len));
      i += len;
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
    ++i;
  }
  return out;
}

void JsonWriter::NewLine() {
  if (indent_ == 0) return;
  out_ += '\n';
  out_.append(has_element_.size() * indent_, ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!has_element_.empty()) {
    if (has_element_.back()) out_ += ',';
    has_element_.back() = true;
    NewLine();
  }
}

std::string JsonWriter::Take() {
  if (!sink_) return std::move(out_);
  if (!out_.empty()) sink_(out_);
  out_.clear();
  return {};
}

void JsonWriter::HandOnIfLarge() {
  if (!sink_ || out_.size() < kPieceBytes) return;
  sink_(out_);
  out_.clear();
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_ += '{';
  has_element_.push_back(false);
}

void JsonWriter::EndObject() {
  bool had = has_element_.back();
  has_element_.pop_back();
  if (had) NewLine();
  out_ += '}';
  HandOnIfLarge();
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_ += '[';
  has_element_.push_back(false);
}

void JsonWriter::EndArray() {
  bool had = has_element_.back();
  has_element_.pop_back();
  if (had) NewLine();
  out_ += ']';
  HandOnIfLarge();
}

void JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_ += '"';
  out_ += JsonEscape(key);
  out_ += indent_ == 0 ? "\":" : "\": ";
  after_key_ = true;
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  out_ += '"';
  out_ += JsonEscape(value);
  out_ += '"';
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
}

void JsonWriter::Uint(uint64_t value) {
  BeforeValue();
  absl::StrAppend(&out_, value);
}

void JsonWriter::Double(double value) {
  BeforeValue();
  if (!std::isfinite(value)) {
    out_ += "null";
    return;
  }
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  out_ += buf;
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

}  // namespace iotap::analyzer
