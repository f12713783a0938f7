// The shim's settings that take a number or one of a few words: the IOTAP_*
// variables it reads (and the `iotap run` options that set them), the values
// each accepts and its default. The shim falls back to the default for a
// value it cannot take, and says so; `iotap run` refuses such a value before
// the job starts. Header-only, with no C++ runtime, so that the shim can use
// it. (IOTAP_LAYERS, a list, is layer_names.h's.)
//
//   const wire::NumericSetting* s = wire::FindSetting("IOTAP_FLUSH_INTERVAL_MS");
//   int64_t ms = 0;
//   if (!wire::ParseSetting("250", *s, &ms)) ms = s->fallback;   // 250
//   wire::ParseSetting("5", *s, &ms);                              // false: below 10
//
//   const wire::WordSetting* w = wire::FindWordSetting("IOTAP_CLOCK");
//   wire::ParseWord("monotonic", *w);                              // 1
//   wire::ParseWord("Monotonic", *w);                              // -1: no such word

#ifndef IOTAP_PROTO_WIRE_SETTINGS_H_
#define IOTAP_PROTO_WIRE_SETTINGS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::wire {

struct NumericSetting {
  const char* variable;  // the environment variable the shim reads
  const char* option;    // the `iotap run` option that sets it ("" if none)
  int64_t lo, hi;        // the values it takes, both included
  int64_t fallback;      // the default, and what the shim uses for a bad value
  bool power_of_two;     // only powers of two within [lo, hi]
  const char* meaning;   // what the number counts, for messages
};

inline constexpr NumericSetting kNumericSettings[] = {
    {"IOTAP_FLUSH_INTERVAL_MS", "--flush-interval", 10, 3600000, 1000, false, "milliseconds"},
    {"IOTAP_SAMPLE_INTERVAL_MS", "--sample-interval", 10, 3600000, 100, false, "milliseconds"},
    {"IOTAP_BUFFER_EVENTS", "--buffer-events", 256, 65536, 4096, true,
     "events per thread buffer, a power of two"},
    {"IOTAP_ZSTD_LEVEL", "--zstd-level", -7, 19, 1, false,
     "a zstd compression level, below 0 for zstd's fast levels, or 0 to store"},
    {"IOTAP_TIME_UNIT_NS", "", 1, 100, 10, false, "nanoseconds"},
    {"IOTAP_WAIT_THRESHOLD_US", "", 1, 60000000, 20, false, "microseconds"},
    {"IOTAP_PY_SAMPLES", "", 0, 10000, 0, false, "samples per CPU-second"},
};

// Whether the texts are equal (constexpr, without <string.h>).
constexpr bool SameText(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}

// The setting read from `variable`, or null.
constexpr const NumericSetting* FindSetting(const char* variable);

// The default of the setting read from `variable` (which must be one).
constexpr int64_t DefaultOf(const char* variable) { return FindSetting(variable)->fallback; }

// The setting read from `variable`, or null.
constexpr const NumericSetting* FindSetting(const char* variable) {
  for (const NumericSetting& s : kNumericSettings) {
    if (SameText(s.variable, variable)) return &s;
  }
  return nullptr;
}

// Reads `text` as a value of `setting` into `*out`: decimal digits only
// (an optional leading '-'), nothing before or after them, within the
// setting's range (and a power of two where it asks for one). False, with
// `*out` untouched, for anything else, empty text included.
constexpr bool ParseSetting(const char* text, const NumericSetting& setting, int64_t* out) {
  if (text == nullptr) return false;
  const char* p = text;
  bool negative = *p == '-';
  if (negative) ++p;
  if (*p == '\0') return false;
  int64_t v = 0;
  for (; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    // Past every range: stop before the number can overflow.
    if (v > 100000000000LL) return false;
    v = v * 10 + (*p - '0');
  }
  if (negative) v = -v;
  if (v < setting.lo || v > setting.hi) return false;
  if (setting.power_of_two && (v <= 0 || (v & (v - 1)) != 0)) return false;
  *out = v;
  return true;
}

// A setting that takes one of two words: words[0], the default, or words[1].
struct WordSetting {
  const char* variable;  // the environment variable the shim reads
  const char* words[2];  // the words it takes; a setting's value is the index
};

inline constexpr WordSetting kWordSettings[] = {
    {"IOTAP_QUIET", {"0", "1"}},             // 1: no warnings from the shim
    {"IOTAP_DISABLE", {"0", "1"}},           // 1: load, but record nothing
    {"IOTAP_CUPTI", {"0", "1"}},             // 1: CUDA's device-side records too
    {"IOTAP_CLOCK", {"tsc", "monotonic"}},   // monotonic: CLOCK_MONOTONIC per event
};

// The word setting read from `variable`, or null.
constexpr const WordSetting* FindWordSetting(const char* variable) {
  for (const WordSetting& s : kWordSettings) {
    if (SameText(s.variable, variable)) return &s;
  }
  return nullptr;
}

// The index of `text` among the words `setting` takes (exactly, case
// included), or -1 for any other text, empty text included.
constexpr int ParseWord(const char* text, const WordSetting& setting) {
  if (text == nullptr) return -1;
  for (int i = 0; i < 2; ++i) {
    if (SameText(setting.words[i], text)) return i;
  }
  return -1;
}

}  // namespace iotap::wire

#endif  // IOTAP_PROTO_WIRE_SETTINGS_H_
