#include "proto/wire/crc32c.h"

#include <cstdint>
#include <string>

#include "gtest/gtest.h"

namespace iotap::wire {
namespace {

// CRC32C bit by bit, as the definition has it.
uint32_t Crc32cBitwise(const std::string& data, size_t n) {
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= static_cast<unsigned char>(data[i]);
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0u);
  }
  return crc ^ 0xFFFFFFFFu;
}

// The check value of CRC-32C (RFC 3720, B.4), and its test vectors, by both
// ways of computing it.
TEST(Crc32cTest, KnownVectors) {
  std::string zeros(32, '\0');
  std::string ones(32, '\xff');
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending += static_cast<char>(i);
    descending += static_cast<char>(31 - i);
  }
  for (auto crc32c : {&Crc32c, &Crc32cPortable}) {
    EXPECT_EQ(crc32c("123456789", 9, 0), 0xE3069283u);
    EXPECT_EQ(crc32c("", 0, 0), 0u);
    EXPECT_EQ(crc32c(zeros.data(), zeros.size(), 0), 0x8A9136AAu);
    EXPECT_EQ(crc32c(ones.data(), ones.size(), 0), 0x62A8AB43u);
    EXPECT_EQ(crc32c(ascending.data(), ascending.size(), 0), 0x46DD794Eu);
    EXPECT_EQ(crc32c(descending.data(), descending.size(), 0), 0x113FDB5Cu);
  }
}

// Lengths around the 8-byte stride, whole or continued from a first part,
// agree with the bitwise CRC.
TEST(Crc32cTest, EveryLengthAndSplitMatchesBitwise) {
  std::string data;
  for (int i = 0; i < 300; ++i) data += static_cast<char>(i * 37 + 11);
  for (size_t n = 0; n <= data.size(); ++n) {
    uint32_t want = Crc32cBitwise(data, n);
    ASSERT_EQ(Crc32c(data.data(), n), want) << n << " bytes";
    ASSERT_EQ(Crc32cPortable(data.data(), n), want) << n << " bytes";
    size_t part = n / 3;
    ASSERT_EQ(Crc32c(data.data() + part, n - part, Crc32c(data.data(), part)), want) << n;
    ASSERT_EQ(Crc32cPortable(data.data() + part, n - part, Crc32cPortable(data.data(), part)), want)
        << n;
  }
}

TEST(Crc32cTest, EightBytesAtOnce) {
  EXPECT_EQ(Crc32cU64(0x3837363534333231u), Crc32c("12345678", 8));
  for (uint64_t v :
       {uint64_t{0}, uint64_t{1}, uint64_t{1024}, ~uint64_t{0}, uint64_t{0x0123456789abcdef}}) {
    EXPECT_EQ(Crc32cU64(v), Crc32cPortable(&v, 8)) << v;
  }
}

// The first record header of a TFRecord file (pwnall/tfrecord singles:
// length 24): bytes 8-11 hold the masked CRC of bytes 0-7.
TEST(Crc32cTest, TfRecordMask) {
  const char length[8] = {24, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(MaskCrc32c(Crc32c(length, 8)), 0x224B7FA3u);
  EXPECT_EQ(MaskCrc32c(Crc32cU64(24)), 0x224B7FA3u);
  EXPECT_EQ(MaskCrc32c(0), 0xa282ead8u);
}

}  // namespace
}  // namespace iotap::wire
