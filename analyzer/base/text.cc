#include "analyzer/base/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace iotap::analyzer {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

std::string DisplayName(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t len = Utf8SequenceLength(s, i);
    unsigned char c = static_cast<unsigned char>(s[i]);
    char buf[8];
    // C1 controls (U+0080 to U+009F) are valid UTF-8, and some terminals act
    // on them (U+009B as ESC [): their two bytes are shown escaped.
    if (len == 2 && c == 0xC2 && static_cast<unsigned char>(s[i + 1]) < 0xA0) {
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i + 1]));
      out += buf;
      i += len;
      continue;
    }
    if (len > 1) {
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    if (len == 0 || c < 0x20 || c == 0x7f) {
      switch (c) {
        case '\n': out += "\\n"; break;
        case '\t': out += "\\t"; break;
        case '\r': out += "\\r"; break;
        default:
          std::snprintf(buf, sizeof(buf), "\\x%02x", c);
          out += buf;
      }
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::string MarkdownText(std::string_view s) {
  std::string out;
  for (char c : DisplayName(s)) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '|': case '*': case '_': case '`': case '[': case ']': case '#': case '\\':
      case '~': case '!':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string MarkdownCode(std::string_view s) {
  std::string shown = DisplayName(s);
  if (shown.empty()) return "` `";  // a code span of one space: nothing shown
  size_t longest = 0, run = 0;
  for (char c : shown) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  // CommonMark strips one space from each end of a code span whose text
  // starts and ends with one, and a text starting or ending with a backtick
  // needs a space to be told from the fence: a space is added for both.
  bool pad = shown.front() == '`' || shown.back() == '`' ||
             (shown.front() == ' ' && shown.back() == ' ');
  std::string space = pad ? " " : "";
  return fence + space + shown + space + fence;
}

std::string ValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    size_t len = Utf8SequenceLength(s, i);
    if (len == 0) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", static_cast<unsigned char>(s[i]));
      out += buf;
      ++i;
    } else {
      out.append(s.substr(i, len));
      i += len;
    }
  }
  return out;
}

namespace {

std::string Scaled(double value, const char* const* units, int count, double step,
                   const char* suffix) {
  int u = 0;
  double v = value;
  while (std::fabs(v) >= step && u + 1 < count) {
    v /= step;
    ++u;
  }
  char buf[64];
  if (u == 0) {
    std::snprintf(buf, sizeof(buf), "%.0f %s%s", v, units[u], suffix);
  } else {
    std::snprintf(buf, sizeof(buf), std::fabs(v) < 10 ? "%.2f %s%s" : "%.1f %s%s", v, units[u],
                  suffix);
  }
  return buf;
}

}  // namespace

std::string HumanBytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return Scaled(bytes, kUnits, 6, 1024.0, "");
}

std::string HumanRate(double bytes_per_second) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return Scaled(bytes_per_second, kUnits, 6, 1024.0, "/s");
}

std::string HumanDuration(double seconds) {
  char buf[64];
  double a = std::fabs(seconds);
  if (a >= 1.0 || a == 0.0) {
    std::snprintf(buf, sizeof(buf), "%.2f s", seconds);
  } else if (a >= 1e-3) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", seconds * 1e3);
  } else if (a >= 1e-6) {
    std::snprintf(buf, sizeof(buf), "%.1f us", seconds * 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f ns", seconds * 1e9);
  }
  return buf;
}

}  // namespace iotap::analyzer
