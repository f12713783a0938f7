#include "analyzer/accumulate/accumulators.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(ByteRangesTest, OneFileReadThroughIsOneRange) {
  ByteRanges r;
  r.Add(0, 4096);
  r.Add(4096, 65536);
  r.Add(69632, 1000);
  EXPECT_EQ(r.covered(), 70632u);
  r.Add(100, 200);  // read before
  EXPECT_EQ(r.covered(), 70632u);
  EXPECT_FALSE(r.approximate());
}

TEST(ByteRangesTest, RangesApartThenJoined) {
  ByteRanges r;
  r.Add(1000, 100);  // [1000, 1100)
  r.Add(0, 10);      // [0, 10): apart
  EXPECT_EQ(r.covered(), 110u);
  r.Add(1100, 50);   // extends the first: [1000, 1150)
  EXPECT_EQ(r.covered(), 160u);
  r.Add(5, 1000);    // [5, 1005) joins both: [0, 1150)
  EXPECT_EQ(r.covered(), 1150u);
  r.Add(2000, 0);    // nothing read
  EXPECT_EQ(r.covered(), 1150u);
}

TEST(ByteRangesTest, TouchingRangesMergeAndCopiesKeepTheirRanges) {
  ByteRanges r;
  r.Add(100, 100);  // [100, 200)
  r.Add(50, 50);    // [50, 100) touches it
  EXPECT_EQ(r.covered(), 150u);
  ByteRanges copy = r;
  copy.Add(150, 100);  // [50, 250)
  EXPECT_EQ(copy.covered(), 200u);
  EXPECT_EQ(r.covered(), 150u);
  ByteRanges moved = std::move(copy);
  moved.Add(300, 10);
  EXPECT_EQ(moved.covered(), 210u);
}

TEST(ByteRangesTest, MergeCountsBytesOnce) {
  ByteRanges a, b, c;
  a.Add(0, 100);
  b.Add(50, 100);   // overlaps a: [0, 150)
  c.Add(400, 10);
  c.Add(500, 10);   // two ranges
  a.Merge(b);
  EXPECT_EQ(a.covered(), 150u);
  a.Merge(c);
  EXPECT_EQ(a.covered(), 170u);
  ByteRanges empty;
  empty.Merge(a);
  EXPECT_EQ(empty.covered(), 170u);
  empty.Merge(a);
  EXPECT_EQ(empty.covered(), 170u);
}

}  // namespace
}  // namespace iotap::analyzer
