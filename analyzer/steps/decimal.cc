#include "analyzer/steps/decimal.h"

#include <limits>
#include <string>

namespace iotap::analyzer {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

std::optional<int64_t> ScaleDecimal(std::string_view text, int scale) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && text[i] == '-') {
    negative = true;
    ++i;
  }
  // The significant digits (leading zeros dropped) and the power of ten of
  // the last one: value = digits * 10^exponent.
  std::string digits;
  int64_t exponent = 0;
  size_t integer_start = i;
  for (; i < text.size() && IsDigit(text[i]); ++i) {
    if (!digits.empty() || text[i] != '0') digits += text[i];
  }
  if (i == integer_start) return std::nullopt;
  if (i < text.size() && text[i] == '.') {
    size_t fraction_start = ++i;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (!digits.empty() || text[i] != '0') digits += text[i];
      --exponent;
    }
    if (i == fraction_start) return std::nullopt;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) exponent_negative = text[i++] == '-';
    size_t exponent_start = i;
    int64_t e = 0;
    for (; i < text.size() && IsDigit(text[i]); ++i) {
      if (e < 100000) e = e * 10 + (text[i] - '0');
    }
    if (i == exponent_start) return std::nullopt;
    exponent += exponent_negative ? -e : e;
  }
  if (i != text.size()) return std::nullopt;
  if (digits.empty()) return 0;

  // Digits before the decimal point of the scaled value, then the rest.
  int64_t shift = exponent + scale;
  int64_t whole_digits = static_cast<int64_t>(digits.size()) + shift;
  if (whole_digits > 19) return std::nullopt;
  if (whole_digits < 0) return 0;  // below 0.1: rounds to zero
  unsigned __int128 value = 0;
  for (int64_t k = 0; k < whole_digits; ++k) {
    value = value * 10 + (k < static_cast<int64_t>(digits.size()) ? digits[k] - '0' : 0);
  }
  if (whole_digits < static_cast<int64_t>(digits.size())) {
    char first = digits[whole_digits];
    bool rest_nonzero = digits.find_first_not_of('0', whole_digits + 1) != std::string::npos;
    bool up = first > '5' || (first == '5' && (rest_nonzero || (value & 1) != 0));
    if (up) ++value;
  }
  if (value > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  int64_t result = static_cast<int64_t>(value);
  return negative ? -result : result;
}

}  // namespace iotap::analyzer
