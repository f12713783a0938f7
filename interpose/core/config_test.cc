// ReadConfig's settings, numeric, worded and the layer list: values they
// take are taken, and a value a setting does not take gives its default (an
// unknown layer name is left out) and a line of the warning the shim prints
// (shim.cc); unset and empty are the default, silently.

#include "interpose/core/config.h"

#include <stdlib.h>

#include <string>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("IOTAP_DIR", "/tmp/iotap-config-test", 1);
    UnsetAll();
  }
  void TearDown() override {
    unsetenv("IOTAP_DIR");
    UnsetAll();
  }
  static void UnsetAll() {
    for (const wire::NumericSetting& s : wire::kNumericSettings) unsetenv(s.variable);
    for (const wire::WordSetting& s : wire::kWordSettings) unsetenv(s.variable);
    unsetenv("IOTAP_LAYERS");
  }
  Config Read() {
    Config c;
    const char* why = nullptr;
    EXPECT_TRUE(ReadConfig(&c, "/", &why)) << (why != nullptr ? why : "");
    return c;
  }
};

TEST_F(ConfigTest, UnsetAndEmptyAreTheDefaults) {
  setenv("IOTAP_SAMPLE_INTERVAL_MS", "", 1);
  Config c = Read();
  EXPECT_EQ(c.flush_interval_ms, 1000u);
  EXPECT_EQ(c.sample_interval_ms, 100u);
  EXPECT_EQ(c.buffer_events, 4096u);
  EXPECT_EQ(c.zstd_level, 1);
  EXPECT_EQ(c.time_unit_ns, 10u);
  EXPECT_EQ(c.wait_threshold_ns, 20000u);
  EXPECT_EQ(c.py_sample_hz, 0u);
  EXPECT_STREQ(c.bad_settings, "");
}

TEST_F(ConfigTest, TakesValuesInRange) {
  setenv("IOTAP_FLUSH_INTERVAL_MS", "250", 1);
  setenv("IOTAP_BUFFER_EVENTS", "1024", 1);
  setenv("IOTAP_ZSTD_LEVEL", "0", 1);
  setenv("IOTAP_WAIT_THRESHOLD_US", "500", 1);
  Config c = Read();
  EXPECT_EQ(c.flush_interval_ms, 250u);
  EXPECT_EQ(c.buffer_events, 1024u);
  EXPECT_EQ(c.zstd_level, 0);
  EXPECT_EQ(c.wait_threshold_ns, 500000u);
  EXPECT_STREQ(c.bad_settings, "");
}

TEST_F(ConfigTest, AValueOutOfRangeGivesTheDefaultAndALine) {
  setenv("IOTAP_FLUSH_INTERVAL_MS", "5", 1);
  setenv("IOTAP_BUFFER_EVENTS", "1000", 1);  // not a power of two
  Config c = Read();
  EXPECT_EQ(c.flush_interval_ms, 1000u);
  EXPECT_EQ(c.buffer_events, 4096u);
  EXPECT_STREQ(c.bad_settings,
               "iotap: IOTAP_FLUSH_INTERVAL_MS=5 is not a value it takes (milliseconds, 10 to "
               "3600000); using 1000\n"
               "iotap: IOTAP_BUFFER_EVENTS=1000 is not a value it takes (events per thread "
               "buffer, a power of two, 256 to 65536); using 4096\n");
}

TEST_F(ConfigTest, ALongBadValueIsCutToFit) {
  std::string junk(100, '7');
  setenv("IOTAP_ZSTD_LEVEL", junk.c_str(), 1);
  Config c = Read();
  EXPECT_EQ(c.zstd_level, 1);
  EXPECT_EQ(std::string(c.bad_settings),
            "iotap: IOTAP_ZSTD_LEVEL=" + junk.substr(0, 31) +
                " is not a value it takes (a zstd compression level, below 0 for zstd's fast "
                "levels, or 0 to store, -7 to 19); using 1\n");
}

TEST_F(ConfigTest, TakesTheWordsOfWordSettings) {
  Config defaults = Read();
  EXPECT_TRUE(defaults.allow_tsc);
  EXPECT_FALSE(defaults.quiet);
  EXPECT_FALSE(defaults.cupti);
  setenv("IOTAP_CLOCK", "monotonic", 1);
  setenv("IOTAP_QUIET", "1", 1);
  setenv("IOTAP_CUPTI", "1", 1);
  Config on = Read();
  EXPECT_FALSE(on.allow_tsc);
  EXPECT_TRUE(on.quiet);
  EXPECT_TRUE(on.cupti);
  setenv("IOTAP_CLOCK", "tsc", 1);
  setenv("IOTAP_QUIET", "0", 1);
  setenv("IOTAP_CUPTI", "0", 1);
  setenv("IOTAP_DISABLE", "0", 1);
  Config off = Read();
  EXPECT_TRUE(off.allow_tsc);
  EXPECT_FALSE(off.quiet);
  EXPECT_FALSE(off.cupti);
  EXPECT_STREQ(off.bad_settings, "");
}

TEST_F(ConfigTest, AWordASettingDoesNotTakeGivesTheDefaultAndALine) {
  setenv("IOTAP_CLOCK", "Monotonic", 1);
  setenv("IOTAP_CUPTI", "yes", 1);
  Config c = Read();
  EXPECT_TRUE(c.allow_tsc);
  EXPECT_FALSE(c.cupti);
  EXPECT_STREQ(c.bad_settings,
               "iotap: IOTAP_CLOCK=Monotonic is not a value it takes (monotonic or tsc); using "
               "tsc\n"
               "iotap: IOTAP_CUPTI=yes is not a value it takes (1 or 0); using 0\n");
}

TEST_F(ConfigTest, DisableTakesOneOrZero) {
  setenv("IOTAP_DISABLE", "1", 1);
  Config c;
  const char* why = nullptr;
  EXPECT_FALSE(ReadConfig(&c, "/", &why));
  EXPECT_STREQ(why, "IOTAP_DISABLE=1");
  setenv("IOTAP_DISABLE", "true", 1);
  Config traced = Read();
  EXPECT_STREQ(traced.bad_settings,
               "iotap: IOTAP_DISABLE=true is not a value it takes (1 or 0); using 0\n");
}

TEST_F(ConfigTest, AnUnknownLayerIsLeftOutWithALine) {
  setenv("IOTAP_LAYERS", "posix,,mappd,waits", 1);
  Config c = Read();
  EXPECT_EQ(c.layers, kLayerPosix | kLayerWaits);
  EXPECT_STREQ(c.bad_settings,
               "iotap: IOTAP_LAYERS=posix,,mappd,waits: no layer is named \"mappd\" (the "
               "layers: posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits); left it out\n");
  setenv("IOTAP_LAYERS", "all", 1);
  EXPECT_EQ(Read().layers, kLayerAll);
  setenv("IOTAP_LAYERS", "POSIX", 1);
  Config upper = Read();
  EXPECT_EQ(upper.layers, 0u);
  EXPECT_NE(std::string(upper.bad_settings).find("no layer is named \"POSIX\""),
            std::string::npos);
  setenv("IOTAP_LAYERS", ",", 1);
  Config commas = Read();
  EXPECT_EQ(commas.layers, 0u);
  EXPECT_STREQ(commas.bad_settings,
               "iotap: IOTAP_LAYERS=, names no layer (the layers: "
               "posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits); tracing none\n");
  setenv("IOTAP_LAYERS", "", 1);
  Config empty = Read();
  EXPECT_EQ(empty.layers, kLayerAll);
  EXPECT_STREQ(empty.bad_settings, "");
}

TEST_F(ConfigTest, ManyBadSettingsKeepWholeLinesOnly) {
  std::string junk(100, 'x');
  for (const wire::NumericSetting& s : wire::kNumericSettings) setenv(s.variable, junk.c_str(), 1);
  setenv("IOTAP_CLOCK", junk.c_str(), 1);
  setenv("IOTAP_CUPTI", junk.c_str(), 1);
  setenv("IOTAP_LAYERS", junk.c_str(), 1);
  Config c = Read();
  // Every line, in the order ReadConfig reads the settings; each that still
  // fits whole is kept, each that does not is left out.
  const std::string cut = junk.substr(0, 31);
  auto numeric = [&](const char* variable) {
    const wire::NumericSetting& s = *wire::FindSetting(variable);
    return "iotap: " + std::string(variable) + "=" + cut + " is not a value it takes (" +
           s.meaning + ", " + std::to_string(s.lo) + " to " + std::to_string(s.hi) +
           "); using " + std::to_string(s.fallback) + "\n";
  };
  const std::string all[] = {
      numeric("IOTAP_FLUSH_INTERVAL_MS"),
      numeric("IOTAP_SAMPLE_INTERVAL_MS"),
      numeric("IOTAP_BUFFER_EVENTS"),
      "iotap: IOTAP_LAYERS=" + junk.substr(0, 63) + ": no layer is named \"" + cut +
          "\" (the layers: posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits); left it out\n",
      numeric("IOTAP_ZSTD_LEVEL"),
      numeric("IOTAP_TIME_UNIT_NS"),
      numeric("IOTAP_WAIT_THRESHOLD_US"),
      "iotap: IOTAP_CLOCK=" + cut + " is not a value it takes (monotonic or tsc); using tsc\n",
      "iotap: IOTAP_CUPTI=" + cut + " is not a value it takes (1 or 0); using 0\n",
      numeric("IOTAP_PY_SAMPLES"),
  };
  std::string kept;
  size_t whole = 0;
  for (const std::string& line : all) {
    whole += line.size();
    if (kept.size() + line.size() < sizeof(c.bad_settings)) kept += line;
  }
  ASSERT_LT(kept.size(), whole);  // the case cuts some lines
  EXPECT_EQ(std::string(c.bad_settings), kept);
}

// The parent's environment block against this process's environment: the
// same IOTAP_* entries and LD_PRELOAD, whatever else differs.
TEST(SameIotapSettingsTest, TheIotapEntriesAndThePreloadAlone) {
  char a[] = "IOTAP_CLOCK=mono";
  char b[] = "IOTAP_DIR=/t";
  char preload[] = "LD_PRELOAD=/lib/libiotap.so";
  char home[] = "HOME=/root";
  char* env[] = {home, a, preload, b, nullptr};
  auto same = [&](const std::string& block) {
    return SameIotapSettings(env, block.data(), block.size());
  };
  using namespace std::string_literals;
  EXPECT_TRUE(same("LD_PRELOAD=/lib/libiotap.so\0IOTAP_DIR=/t\0PATH=/bin\0IOTAP_CLOCK=mono\0"s));
  EXPECT_TRUE(same("IOTAP_CLOCK=mono\0IOTAP_DIR=/t\0LD_PRELOAD=/lib/libiotap.so\0"s));
  // One more, one fewer, one other value, another preload.
  EXPECT_FALSE(same("IOTAP_CLOCK=mono\0IOTAP_DIR=/t\0LD_PRELOAD=/lib/libiotap.so\0IOTAP_QUIET=1\0"s));
  EXPECT_FALSE(same("IOTAP_CLOCK=mono\0LD_PRELOAD=/lib/libiotap.so\0"s));
  EXPECT_FALSE(same("IOTAP_CLOCK=monotonic\0IOTAP_DIR=/t\0LD_PRELOAD=/lib/libiotap.so\0"s));
  EXPECT_FALSE(same("IOTAP_CLOCK=mono\0IOTAP_DIR=/t\0LD_PRELOAD=/other/libiotap.so\0"s));
  EXPECT_FALSE(same("IOTAP_CLOCK=mono\0IOTAP_DIR=/t\0"s));  // not preloaded: it said nothing
  // Cut short (no NUL after the last entry), or no block at all.
  EXPECT_FALSE(same("IOTAP_CLOCK=mono\0IOTAP_DIR=/t\0LD_PRELOAD=/lib/libiotap.so"s));
  EXPECT_FALSE(SameIotapSettings(env, nullptr, 0));
  // Neither has any: the same.
  char* plain[] = {home, nullptr};
  EXPECT_TRUE(SameIotapSettings(plain, "HOME=/x\0", 8));
}

}  // namespace
}  // namespace iotap::interpose
