// The shim's numeric settings: the IOTAP_* variables it reads (and the
// `iotap run` options that set them), the values each accepts and its
// default. The shim falls back to the default for a value it cannot take;
// `iotap run` refuses such a value before the job starts. Header-only, with
// no C++ runtime, so that the shim can use it.
//
//   const wire::NumericSetting* s = wire::FindSetting("IOTAP_FLUSH_INTERVAL_MS");
//   int64_t ms = 0;
//   if (!wire::ParseSetting("250", *s, &ms)) ms = s->fallback;   // 250
//   wire::ParseSetting("5", *s, &ms);                              // false: below 10

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

// The setting read from `variable`, or null.
constexpr const NumericSetting* FindSetting(const char* variable);

// The default of the setting read from `variable` (which must be one).
constexpr int64_t DefaultOf(const char* variable) { return FindSetting(variable)->fallback; }

// The setting read from `variable`, or null.
constexpr const NumericSetting* FindSetting(const char* variable) {
  for (const NumericSetting& s : kNumericSettings) {
    const char* a = s.variable;
    const char* b = variable;
    while (*a != '\0' && *a == *b) ++a, ++b;
    if (*a == '\0' && *b == '\0') return &s;
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

}  // namespace iotap::wire

#endif  // IOTAP_PROTO_WIRE_SETTINGS_H_
