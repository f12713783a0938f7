// ReadConfig's numeric settings: values in range are taken, and a value a
// setting does not take gives its default and is named for the one-line
// warning (shim.cc); unset and empty are the default, silently.

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
    for (const wire::NumericSetting& s : wire::kNumericSettings) unsetenv(s.variable);
  }
  void TearDown() override {
    unsetenv("IOTAP_DIR");
    for (const wire::NumericSetting& s : wire::kNumericSettings) unsetenv(s.variable);
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
  EXPECT_EQ(c.bad_setting, nullptr);
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
  EXPECT_EQ(c.bad_setting, nullptr);
}

TEST_F(ConfigTest, AValueOutOfRangeGivesTheDefaultAndIsNamed) {
  setenv("IOTAP_FLUSH_INTERVAL_MS", "5", 1);
  setenv("IOTAP_BUFFER_EVENTS", "1000", 1);  // not a power of two; the first stays named
  Config c = Read();
  EXPECT_EQ(c.flush_interval_ms, 1000u);
  EXPECT_EQ(c.buffer_events, 4096u);
  ASSERT_NE(c.bad_setting, nullptr);
  EXPECT_EQ(std::string(c.bad_setting->variable), "IOTAP_FLUSH_INTERVAL_MS");
  EXPECT_EQ(std::string(c.bad_value), "5");
}

TEST_F(ConfigTest, ALongBadValueIsCutToFit) {
  std::string junk(100, '7');
  setenv("IOTAP_ZSTD_LEVEL", junk.c_str(), 1);
  Config c = Read();
  EXPECT_EQ(c.zstd_level, 1);
  ASSERT_NE(c.bad_setting, nullptr);
  EXPECT_EQ(std::string(c.bad_value), junk.substr(0, sizeof(c.bad_value) - 1));
}

}  // namespace
}  // namespace iotap::interpose
