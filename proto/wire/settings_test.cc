#include "proto/wire/settings.h"

#include "proto/wire/layer_names.h"

#include <stdint.h>

#include <string_view>

#include "gtest/gtest.h"

namespace iotap::wire {
namespace {

const NumericSetting& Find(const char* variable) {
  const NumericSetting* s = FindSetting(variable);
  EXPECT_NE(s, nullptr) << variable;
  return *s;
}

TEST(SettingsTest, FindsEachSettingByItsVariableOnly) {
  EXPECT_EQ(std::string_view(Find("IOTAP_FLUSH_INTERVAL_MS").option), "--flush-interval");
  EXPECT_EQ(std::string_view(Find("IOTAP_ZSTD_LEVEL").option), "--zstd-level");
  EXPECT_EQ(std::string_view(Find("IOTAP_TIME_UNIT_NS").option), "");
  EXPECT_EQ(FindSetting("IOTAP_FLUSH_INTERVAL"), nullptr);  // a prefix
  EXPECT_EQ(FindSetting("IOTAP_FLUSH_INTERVAL_MSX"), nullptr);
  EXPECT_EQ(FindSetting("IOTAP_LAYERS"), nullptr);  // not a number
  EXPECT_EQ(FindSetting(""), nullptr);
}

TEST(SettingsTest, EveryDefaultIsAValueItsSettingTakes) {
  for (const NumericSetting& s : kNumericSettings) {
    EXPECT_LE(s.lo, s.fallback) << s.variable;
    EXPECT_LE(s.fallback, s.hi) << s.variable;
    if (s.power_of_two) {
      EXPECT_EQ(s.fallback & (s.fallback - 1), 0) << s.variable;
    }
  }
}

TEST(SettingsTest, TakesDecimalsInRangeBothEndsIncluded) {
  const NumericSetting& flush = Find("IOTAP_FLUSH_INTERVAL_MS");
  int64_t v = -1;
  EXPECT_TRUE(ParseSetting("250", flush, &v));
  EXPECT_EQ(v, 250);
  EXPECT_TRUE(ParseSetting("10", flush, &v));
  EXPECT_EQ(v, 10);
  EXPECT_TRUE(ParseSetting("3600000", flush, &v));
  EXPECT_EQ(v, 3600000);
  EXPECT_TRUE(ParseSetting("0250", flush, &v));  // leading zeros are still decimal
  EXPECT_EQ(v, 250);
  const NumericSetting& zstd = Find("IOTAP_ZSTD_LEVEL");
  EXPECT_TRUE(ParseSetting("0", zstd, &v));
  EXPECT_EQ(v, 0);
  EXPECT_TRUE(ParseSetting("-7", zstd, &v));  // zstd's fast levels
  EXPECT_EQ(v, -7);
  EXPECT_FALSE(ParseSetting("-8", zstd, &v));
  EXPECT_FALSE(ParseSetting("-0x1", zstd, &v));
}

TEST(SettingsTest, RefusesAnythingElseAndLeavesTheOutputAlone) {
  const NumericSetting& flush = Find("IOTAP_FLUSH_INTERVAL_MS");
  for (const char* bad : {"9", "3600001", "-1", "-250", "", "-", "abc", "25x", " 250", "250 ",
                          "+250", "2.5", "0x10", "99999999999999999999999"}) {
    int64_t v = 77;
    EXPECT_FALSE(ParseSetting(bad, flush, &v)) << '"' << bad << '"';
    EXPECT_EQ(v, 77) << bad;
  }
  int64_t v = 77;
  EXPECT_FALSE(ParseSetting(nullptr, flush, &v));
  EXPECT_EQ(v, 77);
  EXPECT_FALSE(ParseSetting("20", Find("IOTAP_ZSTD_LEVEL"), &v));
}

TEST(SettingsTest, BufferEventsTakesPowersOfTwoOnly) {
  const NumericSetting& events = Find("IOTAP_BUFFER_EVENTS");
  int64_t v = 0;
  for (const char* good : {"256", "1024", "4096", "65536"}) {
    EXPECT_TRUE(ParseSetting(good, events, &v)) << good;
  }
  EXPECT_EQ(v, 65536);
  for (const char* bad : {"1000", "128", "131072", "4095", "0"}) {
    EXPECT_FALSE(ParseSetting(bad, events, &v)) << bad;
  }
}

TEST(SettingsTest, WordSettingsTakeTheirTwoWordsExactly) {
  const WordSetting* clock = FindWordSetting("IOTAP_CLOCK");
  ASSERT_NE(clock, nullptr);
  EXPECT_EQ(ParseWord("tsc", *clock), 0);
  EXPECT_EQ(ParseWord("monotonic", *clock), 1);
  for (const char* other : {"Monotonic", "monotonic ", "mono", "", "1"}) {
    EXPECT_EQ(ParseWord(other, *clock), -1) << other;
  }
  EXPECT_EQ(ParseWord(nullptr, *clock), -1);
  const WordSetting* quiet = FindWordSetting("IOTAP_QUIET");
  ASSERT_NE(quiet, nullptr);
  EXPECT_EQ(ParseWord("0", *quiet), 0);
  EXPECT_EQ(ParseWord("1", *quiet), 1);
  EXPECT_EQ(ParseWord("true", *quiet), -1);
  EXPECT_EQ(FindWordSetting("IOTAP_CLOCKS"), nullptr);
  EXPECT_EQ(FindWordSetting("IOTAP_FLUSH_INTERVAL_MS"), nullptr);  // a numeric one
}

TEST(SettingsTest, TheLayerListJoinsTheNamesInOrder) {
  EXPECT_EQ(std::string_view(kLayerList.text), "posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits");
  EXPECT_EQ(sizeof(kLayerList.text), std::string_view(kLayerList.text).size() + 1);
}

}  // namespace
}  // namespace iotap::wire
