#include "proto/wire/varint.h"

#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::wire {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

std::vector<uint8_t> VarintBytes(uint64_t v) {
  uint8_t buf[kMaxVarintBytes];
  return std::vector<uint8_t>(buf, PutVarint(buf, v));
}

// Values at each varint length's edges: 1 to 10 bytes.
std::vector<uint64_t> EdgeValues() {
  std::vector<uint64_t> values = {0, kMax};
  for (int bits = 7; bits < 64; bits += 7) {
    values.push_back((uint64_t{1} << bits) - 1);
    values.push_back(uint64_t{1} << bits);
  }
  values.push_back(uint64_t{1} << 63);
  values.push_back(0x0123456789abcdefu);
  return values;
}

TEST(VarintTest, ZigZag) {
  EXPECT_EQ(ZigZag(0), 0u);
  EXPECT_EQ(ZigZag(-1), 1u);
  EXPECT_EQ(ZigZag(1), 2u);
  EXPECT_EQ(ZigZag(-2), 3u);
  EXPECT_EQ(ZigZag(std::numeric_limits<int64_t>::max()), kMax - 1);
  EXPECT_EQ(ZigZag(std::numeric_limits<int64_t>::min()), kMax);
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, int64_t{-300}, int64_t{300},
                    std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    EXPECT_EQ(UnZigZag(ZigZag(v)), v);
  }
  EXPECT_EQ(UnZigZag(3), -2);
  EXPECT_EQ(UnZigZag(4), 2);
}

TEST(VarintTest, Writes) {
  EXPECT_EQ(VarintBytes(0), (std::vector<uint8_t>{0x00}));
  EXPECT_EQ(VarintBytes(127), (std::vector<uint8_t>{0x7f}));
  EXPECT_EQ(VarintBytes(128), (std::vector<uint8_t>{0x80, 0x01}));
  EXPECT_EQ(VarintBytes(300), (std::vector<uint8_t>{0xac, 0x02}));
  std::vector<uint8_t> max(9, 0xff);
  max.push_back(0x01);
  EXPECT_EQ(VarintBytes(kMax), max);
  for (int bits = 7; bits < 64; bits += 7) {
    EXPECT_EQ(VarintBytes((uint64_t{1} << bits) - 1).size(), static_cast<size_t>(bits / 7));
    EXPECT_EQ(VarintBytes(uint64_t{1} << bits).size(), static_cast<size_t>(bits / 7 + 1));
  }
}

TEST(VarintTest, ReadsWhatItWrites) {
  for (uint64_t v : EdgeValues()) {
    std::vector<uint8_t> bytes = VarintBytes(v);
    bytes.push_back(0x55);  // the next field's, not read
    const uint8_t* p = bytes.data();
    uint64_t read = 1;
    ASSERT_TRUE(ReadVarint(&p, bytes.data() + bytes.size(), &read)) << v;
    EXPECT_EQ(read, v);
    EXPECT_EQ(p, bytes.data() + bytes.size() - 1) << v;
  }
}

TEST(VarintTest, ReadStopsAtTheEnd) {
  const std::vector<uint8_t> cut = {0xac};
  const uint8_t* p = cut.data();
  uint64_t v = 7;
  EXPECT_FALSE(ReadVarint(&p, cut.data() + cut.size(), &v));
  EXPECT_EQ(v, 7u);
  p = cut.data();
  EXPECT_FALSE(ReadVarint(&p, cut.data(), &v));
  EXPECT_EQ(p, cut.data());
}

// As libprotobuf: ten bytes at most, and bits past the 64th are dropped.
TEST(VarintTest, ReadTakesTenBytesAtMost) {
  std::vector<uint8_t> eleven(10, 0x80);
  eleven.push_back(0x00);
  const uint8_t* p = eleven.data();
  uint64_t v = 0;
  EXPECT_FALSE(ReadVarint(&p, eleven.data() + eleven.size(), &v));

  std::vector<uint8_t> wide(9, 0xff);
  wide.push_back(0x7f);  // six bits past the 64th
  p = wide.data();
  ASSERT_TRUE(ReadVarint(&p, wide.data() + wide.size(), &v));
  EXPECT_EQ(v, kMax);
  EXPECT_EQ(p, wide.data() + 10);
}

// The padded reader, with each packer this processor has, reads the same
// values as ReadVarint and moves as far.
template <typename Packer>
void CheckPadded() {
  std::vector<uint64_t> values = EdgeValues();
  std::vector<uint8_t> column(values.size() * kMaxVarintBytes + 8, 0);
  uint8_t* end = column.data();
  for (uint64_t v : values) end = PutVarint(end, v);
  const uint8_t* p = column.data();
  bool ok = true;
  for (uint64_t v : values) EXPECT_EQ(NextPaddedVarint<Packer>(p, ok), v);
  EXPECT_TRUE(ok);
  EXPECT_EQ(p, end);

  std::vector<uint8_t> eleven(11, 0x80);
  eleven.back() = 0x00;
  eleven.resize(eleven.size() + 8, 0);
  p = eleven.data();
  EXPECT_EQ(NextPaddedVarint<Packer>(p, ok), 0u);
  EXPECT_FALSE(ok);
  EXPECT_EQ(p, eleven.data());
}

TEST(VarintTest, PaddedReadWithShifts) { CheckPadded<ShiftPacker>(); }

#if defined(__x86_64__)
TEST(VarintTest, PaddedReadWithPext) {
  if (!__builtin_cpu_supports("bmi2")) GTEST_SKIP() << "no BMI2 on this processor";
  CheckPadded<PextPacker>();
}
#endif

// Columns of 0 to 400 varints of every length (so of every size around the
// 16- and 8-byte strides): the count of varints written, and -1 once the
// last one is cut.
TEST(VarintTest, CountVarints) {
  const std::vector<uint64_t> values = EdgeValues();
  std::vector<uint8_t> column;
  for (int64_t n = 0; n <= 400; ++n) {
    ASSERT_EQ(CountVarints(column.data(), column.size()), n) << column.size() << " bytes";
    uint8_t buf[kMaxVarintBytes];
    uint8_t* end = PutVarint(buf, values[(n * 7) % values.size()]);
    column.insert(column.end(), buf, end);
    if (end - buf > 1) {
      ASSERT_EQ(CountVarints(column.data(), column.size() - 1), -1) << column.size() - 1;
    }
  }
}

}  // namespace
}  // namespace iotap::wire
