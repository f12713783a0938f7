#include "analyzer/steps/decimal.h"

#include <limits>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(ScaleDecimalTest, MicrosecondsToNanoseconds) {
  // Kineto's relative ts and older absolute epoch microseconds: beyond what a
  // double holds to the nanosecond.
  EXPECT_EQ(ScaleDecimal("1212075529876.817", 3), 1212075529876817);
  EXPECT_EQ(ScaleDecimal("1682725898079292", 3), 1682725898079292000);
  EXPECT_EQ(ScaleDecimal("607312.0", 3), 607312000);
  EXPECT_EQ(ScaleDecimal("0", 3), 0);
  EXPECT_EQ(ScaleDecimal("-0", 3), 0);
  EXPECT_EQ(ScaleDecimal("-12.5", 3), -12500);
}

TEST(ScaleDecimalTest, EpochSecondsToNanoseconds) {
  EXPECT_EQ(ScaleDecimal("1700000000.123456789", 9), 1700000000123456789);
  EXPECT_EQ(ScaleDecimal("1700000000.125", 9), 1700000000125000000);
  EXPECT_EQ(ScaleDecimal("1.7e9", 9), 1700000000000000000);
  EXPECT_EQ(ScaleDecimal("17E+8", 9), 1700000000000000000);
  EXPECT_EQ(ScaleDecimal("0.052", 9), 52000000);
  EXPECT_EQ(ScaleDecimal("5.2e-2", 9), 52000000);
}

TEST(ScaleDecimalTest, RoundsHalfToEven) {
  EXPECT_EQ(ScaleDecimal("1.0004", 3), 1000);
  EXPECT_EQ(ScaleDecimal("1.0005", 3), 1000);  // half, to even
  EXPECT_EQ(ScaleDecimal("1.0015", 3), 1002);  // half, to even
  EXPECT_EQ(ScaleDecimal("1.00050001", 3), 1001);
  EXPECT_EQ(ScaleDecimal("1.0006", 3), 1001);
  EXPECT_EQ(ScaleDecimal("0.0005", 3), 0);
  EXPECT_EQ(ScaleDecimal("0.00051", 3), 1);
  EXPECT_EQ(ScaleDecimal("0.00001", 3), 0);
  EXPECT_EQ(ScaleDecimal("1e-300", 3), 0);
  EXPECT_EQ(ScaleDecimal("-1.0006", 3), -1001);
}

TEST(ScaleDecimalTest, Limits) {
  EXPECT_EQ(ScaleDecimal("9223372036854775807", 0), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ScaleDecimal("9223372036854775808", 0), std::nullopt);
  EXPECT_EQ(ScaleDecimal("1e19", 0), std::nullopt);
  EXPECT_EQ(ScaleDecimal("1e300", 3), std::nullopt);
  EXPECT_EQ(ScaleDecimal("0e300", 3), 0);
}

TEST(ScaleDecimalTest, RefusesWhatIsNotANumber) {
  for (const char* text : {"", "-", ".5", "1.", "1e", "1e+", "NaN", "Infinity", "-Infinity", "0x10",
                           "1,5", " 1", "1 ", "1.2.3", "++1"}) {
    EXPECT_EQ(ScaleDecimal(text, 3), std::nullopt) << "\"" << text << "\"";
  }
}

}  // namespace
}  // namespace iotap::analyzer
