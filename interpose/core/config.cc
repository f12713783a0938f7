#include "interpose/core/config.h"

#include <stdlib.h>
#include <string.h>

#include "proto/wire/layer_names.h"
#include "proto/wire/settings.h"

namespace iotap::interpose {

namespace {

// The value of the numeric setting read from `variable` (proto/wire/settings.h):
// its default when unset or empty, and also when set to a value it does not take,
// which `config` then names (the first such setting only).
int64_t Setting(const char* variable, Config* config) {
  const wire::NumericSetting* setting = wire::FindSetting(variable);
  const char* text = getenv(variable);
  int64_t v = setting->fallback;
  if (text == nullptr || *text == '\0' || wire::ParseSetting(text, *setting, &v)) return v;
  if (config->bad_setting == nullptr) {
    config->bad_setting = setting;
    strncpy(config->bad_value, text, sizeof(config->bad_value) - 1);
    config->bad_value[sizeof(config->bad_value) - 1] = '\0';
  }
  return setting->fallback;
}

bool IsOne(const char* s) { return s != nullptr && strcmp(s, "1") == 0; }

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

uint32_t ParseLayers(const char* s) {
  if (s == nullptr || *s == '\0' || strcmp(s, "all") == 0) return kLayerAll;
  uint32_t mask = 0;
  while (*s != '\0') {
    const char* comma = strchr(s, ',');
    size_t n = comma ? static_cast<size_t>(comma - s) : strlen(s);
    int i = wire::LayerIndex(s, n);
    if (i >= 0) mask |= 1u << i;
    s += n;
    if (*s == ',') ++s;
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

bool ReadConfig(Config* config, const char* cwd, const char** why) {
  config->dir[0] = '\0';
  config->session[0] = '\0';
  config->quiet = IsOne(getenv("IOTAP_QUIET"));
  if (IsOne(getenv("IOTAP_DISABLE"))) {
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
  config->layers = ParseLayers(getenv("IOTAP_LAYERS"));
  config->zstd_level = static_cast<int>(Setting("IOTAP_ZSTD_LEVEL", config));
  config->time_unit_ns = static_cast<uint32_t>(Setting("IOTAP_TIME_UNIT_NS", config));
  config->wait_threshold_ns =
      uint64_t{1000} * static_cast<uint64_t>(Setting("IOTAP_WAIT_THRESHOLD_US", config));
  const char* clock = getenv("IOTAP_CLOCK");
  config->allow_tsc = clock == nullptr || strcmp(clock, "monotonic") != 0;
  config->cupti = IsOne(getenv("IOTAP_CUPTI"));
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
