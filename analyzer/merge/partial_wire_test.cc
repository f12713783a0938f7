#include "analyzer/merge/partial_wire.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

struct Pieces {
  std::vector<std::string> pieces;
  size_t next = 0;
  std::string Next() { return next < pieces.size() ? pieces[next++] : std::string(); }
};

TEST(WireTest, ValuesSurviveBeingCutIntoPieces) {
  Pieces p;
  WireWriter out([&](std::string_view s) { p.pieces.emplace_back(s); }, 3);
  const std::vector<double> doubles = {0.0, -0.0, 1.5, -7, 1e300, 4503599627370497.0,
                                       std::numeric_limits<double>::infinity()};
  out.U(0);
  out.U(UINT64_MAX);
  out.S(INT64_MIN);
  out.S(-1);
  for (double d : doubles) out.D(d);
  out.Str(std::string(1000, 'a') + "/b");
  struct Counts {
    uint64_t a = 5, b = 0, c = UINT64_MAX;
  } counts;
  out.Words(counts);
  out.Finish();
  EXPECT_GT(p.pieces.size(), 5u);
  // Read back in pieces of 7 bytes, cutting through values and the string.
  std::string all;
  for (const std::string& piece : p.pieces) all += piece;
  Pieces cut;
  for (size_t at = 0; at < all.size(); at += 7) cut.pieces.push_back(all.substr(at, 7));
  WireReader in([&] { return cut.Next(); });
  EXPECT_EQ(in.U(), 0u);
  EXPECT_EQ(in.U(), UINT64_MAX);
  EXPECT_EQ(in.S(), INT64_MIN);
  EXPECT_EQ(in.S(), -1);
  for (double d : doubles) {
    double got = in.D();
    EXPECT_EQ(got, d);
    EXPECT_EQ(std::signbit(got), std::signbit(d));
  }
  EXPECT_EQ(in.Str(), std::string(1000, 'a') + "/b");
  Counts back{0, 1, 2};
  in.Words(&back);
  EXPECT_EQ(back.a, 5u);
  EXPECT_EQ(back.b, 0u);
  EXPECT_EQ(back.c, UINT64_MAX);
  EXPECT_TRUE(in.ok());
  EXPECT_TRUE(in.AtEnd());
}

TEST(WireTest, IntegersAreSmall) {
  std::string bytes;
  WireWriter out([&](std::string_view s) { bytes += s; });
  out.D(1000.0);  // an integer-valued sum: 2 bytes, not 9
  out.U(5);
  out.Finish();
  EXPECT_EQ(bytes.size(), 3u);
}

TEST(WireTest, AStreamCutShortFails) {
  std::string bytes;
  WireWriter out([&](std::string_view s) { bytes += s; });
  out.Str("a long enough string");
  out.Finish();
  bool given = false;
  WireReader in([&] {
    if (given) return std::string();
    given = true;
    return bytes.substr(0, 5);
  });
  in.Str();
  EXPECT_FALSE(in.ok());
}

TEST(WireTest, AHugeCountFailsWithoutAllocating) {
  std::string bytes;
  WireWriter out([&](std::string_view s) { bytes += s; });
  out.U(uint64_t{1} << 60);
  out.Finish();
  bool given = false;
  WireReader in([&] {
    if (given) return std::string();
    given = true;
    return bytes;
  });
  EXPECT_EQ(in.Str(), "");
  EXPECT_FALSE(in.ok());
}

}  // namespace
}  // namespace iotap::analyzer
