#include "interpose/mapped/fault_counters.h"

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

// A stat line whose command holds spaces and a parenthesis, as thread names
// may.
TEST(FaultCountersTest, ParsesStatAndIo) {
  const char* stat =
      "4321 (pt worker) x) S 4000 4000 3999 0 -1 4194368 1234 0 56 0 10 20 0 0 20 0 1 0";
  const char* io =
      "rchar: 100\nwchar: 0\nsyscr: 3\nsyscw: 0\nread_bytes: 65536\nwrite_bytes: 0\n";
  ThreadCounters t;
  ASSERT_TRUE(ParseThreadCounters(stat, io, &t));
  EXPECT_EQ(t.minor_faults, 1234u);
  EXPECT_EQ(t.major_faults, 56u);
  EXPECT_EQ(t.read_bytes, 65536u);
}

TEST(FaultCountersTest, MissingIoLeavesBytesZero) {
  ThreadCounters t;
  ASSERT_TRUE(ParseThreadCounters("1 (a) R 0 0 0 0 0 0 7 0 9 0", "", &t));
  EXPECT_EQ(t.minor_faults, 7u);
  EXPECT_EQ(t.major_faults, 9u);
  EXPECT_EQ(t.read_bytes, 0u);
}

TEST(FaultCountersTest, RejectsTruncatedStat) {
  ThreadCounters t;
  EXPECT_FALSE(ParseThreadCounters("1 (a) R 0 0", "", &t));
  EXPECT_FALSE(ParseThreadCounters("garbage", "", &t));
}

}  // namespace
}  // namespace iotap::interpose
