#include "analyzer/base/chunked_vector.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(ChunkedVectorTest, GrowsWithoutMovingWhatItHolds) {
  ChunkedVector<std::string, 4> v;
  EXPECT_TRUE(v.empty());
  v.resize(3);
  EXPECT_EQ(v.size(), 3u);
  v[0] = "a";
  v[2] = "c";
  std::string* first = &v[0];
  v.resize(10);  // two more chunks
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(first, &v[0]);  // not moved
  EXPECT_EQ(v[0], "a");
  EXPECT_EQ(v[1], "");      // default-constructed
  EXPECT_EQ(v[2], "c");
  EXPECT_EQ(v[9], "");
  v[9] = "j";
  v.resize(5);  // never shrinks
  EXPECT_EQ(v.size(), 10u);
  EXPECT_EQ(v[9], "j");
  const ChunkedVector<std::string, 4>& c = v;
  EXPECT_EQ(c[2], "c");
  v.clear();
  EXPECT_EQ(v.size(), 0u);
  v.resize(1);
  EXPECT_EQ(v[0], "");  // new entries after clear are new
}

TEST(ChunkedVectorTest, IndexesAcrossManyChunks) {
  ChunkedVector<uint64_t> v;
  v.resize(100'000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i * 3;
  uint64_t sum = 0;
  for (size_t i = 0; i < v.size(); ++i) sum += v[i];
  EXPECT_EQ(sum, uint64_t{3} * 99'999 * 100'000 / 2);
}

}  // namespace
}  // namespace iotap::analyzer
