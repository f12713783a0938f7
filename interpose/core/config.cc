#include "interpose/core/config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/wire/layer_names.h"
#include "proto/wire/settings.h"

namespace iotap::interpose {

namespace {

// Adds a line to config->bad_settings, if it fits (the lines before it are
// kept whole).
__attribute__((format(printf, 2, 3))) void Complain(Config* config, const char* format, ...) {
  size_t used = strlen(config->bad_settings);
  size_t room = sizeof(config->bad_settings) - used;
  va_list args;
  va_start(args, format);
  int n = vsnprintf(config->bad_settings + used, room, format, args);
  va_end(args);
  if (n < 0 || static_cast<size_t>(n) >= room) config->bad_settings[used] = '\0';
}

// The value of the numeric setting read from `variable` (proto/wire/settings.h):
// its default when unset or empty, and also, with a complaint, when set to a
// value it does not take.
int64_t Setting(const char* variable, Config* config) {
  const wire::NumericSetting* s = wire::FindSetting(variable);
  const char* text = getenv(variable);
  int64_t v = s->fallback;
  if (text == nullptr || *text == '\0' || wire::ParseSetting(text, *s, &v)) return v;
  Complain(config, "iotap: %s=%.31s is not a value it takes (%s, %lld to %lld); using %lld\n",
           variable, text, s->meaning, static_cast<long long>(s->lo),
           static_cast<long long>(s->hi), static_cast<long long>(s->fallback));
  return s->fallback;
}

// Which of its two words the setting read from `variable` holds: 0, its
// default, when unset or empty, and also, with a complaint, for a word it
// does not take.
int Word(const char* variable, Config* config) {
  const wire::WordSetting* s = wire::FindWordSetting(variable);
  const char* text = getenv(variable);
  if (text == nullptr || *text == '\0') return 0;
  int i = wire::ParseWord(text, *s);
  if (i >= 0) return i;
  Complain(config, "iotap: %s=%.31s is not a value it takes (%s or %s); using %s\n", variable,
           text, s->words[1], s->words[0], s->words[0]);
  return 0;
}

// The mask's bits follow the names' order.
static_assert(kLayerPosix == 1u << wire::LayerIndex("posix"));
static_assert(kLayerStdio == 1u << wire::LayerIndex("stdio"));
static_assert(kLayerHdf5 == 1u << wire::LayerIndex("hdf5"));
static_assert(kLayerTfRecord == 1u << wire::LayerIndex("tfrecord"));
static_assert(kLayerCuda == 1u << wire::LayerIndex("cuda"));
static_assert(kLayerMapped == 1u << wire::LayerIndex("mapped"));
static_assert(kLayerUring == 1u << wire::LayerIndex("uring"));
static_assert(kLayerWaits == 1u << wire::LayerIndex("waits"));
static_assert(kLayerAll == (1u << wire::kLayerCount) - 1);

// The test-only switches: "1" or not.
bool IsOne(const char* s) { return s != nullptr && strcmp(s, "1") == 0; }

// IOTAP_LAYERS: "all" (or unset or empty), or a comma list of layer names;
// a name that is none is left out, with a complaint. Empty items
// ("posix,") are skipped; a list of them alone (",") names no layer, and
// says so.
uint32_t ParseLayers(const char* list, Config* config) {
  if (list == nullptr || *list == '\0' || strcmp(list, "all") == 0) return kLayerAll;
  uint32_t mask = 0;
  bool named = false;  // an item that is not empty
  for (const char* s = list; *s != '\0';) {
    const char* comma = strchr(s, ',');
    size_t n = comma ? static_cast<size_t>(comma - s) : strlen(s);
    named |= n > 0;
    int i = wire::LayerIndex(s, n);
    if (i >= 0) {
      mask |= 1u << i;
    } else if (n > 0) {
      Complain(config, "iotap: IOTAP_LAYERS=%.63s: no layer is named \"%.*s\" (the layers: %s); "
               "left it out\n", list, static_cast<int>(n < 31 ? n : 31), s, wire::kLayerList.text);
    }
    s += n;
    if (*s == ',') ++s;
  }
  if (!named) {
    Complain(config, "iotap: IOTAP_LAYERS=%.63s names no layer (the layers: %s); tracing none\n",
             list, wire::kLayerList.text);
  }
  return mask;
}

}  // namespace

const char* LayerName(uint32_t bit) {
  for (int i = 0; i < wire::kLayerCount; ++i) {
    if (bit == 1u << i) return wire::kLayerNames[i];
  }
  return "?";
}

namespace {

// An entry iotap's settings are made of: IOTAP_*, or LD_PRELOAD (which
// says whether the shim is loaded at all).
bool IsIotapEntry(const char* entry, size_t length) {
  return (length >= 6 && memcmp(entry, "IOTAP_", 6) == 0) ||
         (length >= 11 && memcmp(entry, "LD_PRELOAD=", 11) == 0);
}

bool InEnvironment(char* const* env, const char* entry, size_t length) {
  for (char* const* e = env; *e != nullptr; ++e) {
    if (strlen(*e) == length && memcmp(*e, entry, length) == 0) return true;
  }
  return false;
}

}  // namespace

bool SameIotapSettings(char* const* env, const char* block, size_t size) {
  if (env == nullptr || block == nullptr) return false;
  size_t own = 0;
  for (char* const* e = env; *e != nullptr; ++e) own += IsIotapEntry(*e, strlen(*e)) ? 1 : 0;
  size_t matched = 0;
  const char* end = block + size;
  for (const char* at = block; at < end;) {
    const char* stop = static_cast<const char*>(memchr(at, '\0', static_cast<size_t>(end - at)));
    if (stop == nullptr) return false;  // cut short: not known to be the same
    const size_t length = static_cast<size_t>(stop - at);
    if (IsIotapEntry(at, length)) {
      if (!InEnvironment(env, at, length)) return false;
      ++matched;
    }
    at = stop + 1;
  }
  return matched == own;
}

bool ReadConfig(Config* config, const char* cwd, const char** why) {
  config->dir[0] = '\0';
  config->session[0] = '\0';
  config->bad_settings[0] = '\0';
  config->quiet = Word("IOTAP_QUIET", config) == 1;
  if (Word("IOTAP_DISABLE", config) == 1) {
    *why = "IOTAP_DISABLE=1";
    return false;
  }
  const char* dir = getenv("IOTAP_DIR");
  if (dir == nullptr || *dir == '\0') {
    *why = "IOTAP_DIR is not set";
    return false;
  }
  size_t need = strlen(dir) + (dir[0] == '/' ? 0 : strlen(cwd) + 1);
  if (need >= sizeof(config->dir)) {
    *why = "IOTAP_DIR is too long";
    return false;
  }
  if (dir[0] == '/') {
    strcpy(config->dir, dir);
  } else {
    strcpy(config->dir, cwd);
    strcat(config->dir, "/");
    strcat(config->dir, dir);
  }
  const char* session = getenv("IOTAP_SESSION");
  if (session != nullptr) {
    strncpy(config->session, session, sizeof(config->session) - 1);
    config->session[sizeof(config->session) - 1] = '\0';
  }
  config->flush_interval_ms = static_cast<uint32_t>(Setting("IOTAP_FLUSH_INTERVAL_MS", config));
  config->sample_interval_ms = static_cast<uint32_t>(Setting("IOTAP_SAMPLE_INTERVAL_MS", config));
  config->buffer_events = static_cast<uint32_t>(Setting("IOTAP_BUFFER_EVENTS", config));
  config->layers = ParseLayers(getenv("IOTAP_LAYERS"), config);
  config->zstd_level = static_cast<int>(Setting("IOTAP_ZSTD_LEVEL", config));
  config->time_unit_ns = static_cast<uint32_t>(Setting("IOTAP_TIME_UNIT_NS", config));
  config->wait_threshold_ns =
      uint64_t{1000} * static_cast<uint64_t>(Setting("IOTAP_WAIT_THRESHOLD_US", config));
  config->allow_tsc = Word("IOTAP_CLOCK", config) == 0;
  config->cupti = Word("IOTAP_CUPTI", config) == 1;
  config->py_sample_hz = static_cast<uint32_t>(Setting("IOTAP_PY_SAMPLES", config));
  config->no_perf = IsOne(getenv("IOTAP_TEST_NO_PERF"));
  config->py_gil_sampler = IsOne(getenv("IOTAP_TEST_PY_GIL_SAMPLER"));
  config->no_maps_query = IsOne(getenv("IOTAP_TEST_NO_MAPS_QUERY"));
  config->no_pagemap_scan = IsOne(getenv("IOTAP_TEST_NO_PAGEMAP_SCAN"));
  const char* offset = getenv("IOTAP_TEST_CLOCK_OFFSET_NS");
  config->test_clock_offset_ns = offset != nullptr ? strtoll(offset, nullptr, 10) : 0;
  const char* host = getenv("IOTAP_TEST_HOSTNAME");
  config->test_hostname[0] = '\0';
  if (host != nullptr) {
    strncpy(config->test_hostname, host, sizeof(config->test_hostname) - 1);
    config->test_hostname[sizeof(config->test_hostname) - 1] = '\0';
  }
  return true;
}

}  // namespace iotap::interpose
