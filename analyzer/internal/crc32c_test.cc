#include "analyzer/internal/crc32c.h"

#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer::internal {
namespace {

// The check value of CRC-32C (RFC 3720, B.4), and its test vectors.
TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c("123456789", 9), 0xE3069283u);
  EXPECT_EQ(Crc32c("", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(Crc32c(zeros.data(), zeros.size()), 0x8A9136AAu);
  std::string ones(32, '\xff');
  EXPECT_EQ(Crc32c(ones.data(), ones.size()), 0x62A8AB43u);
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending += static_cast<char>(i);
  EXPECT_EQ(Crc32c(ascending.data(), ascending.size()), 0x46DD794Eu);
}

// Lengths around the 8-byte stride agree with a byte-at-a-time CRC.
TEST(Crc32cTest, EveryLengthMatchesBitwise) {
  std::string data;
  for (int i = 0; i < 100; ++i) data += static_cast<char>(i * 37 + 11);
  for (size_t n = 0; n <= data.size(); ++n) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; ++i) {
      crc ^= static_cast<unsigned char>(data[i]);
      for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ ((crc & 1) ? 0x82F63B78u : 0u);
    }
    EXPECT_EQ(Crc32c(data.data(), n), crc ^ 0xFFFFFFFFu) << n << " bytes";
  }
}

// The first record header of a TFRecord file (pwnall/tfrecord singles:
// length 24): bytes 8-11 hold the masked CRC of bytes 0-7.
TEST(Crc32cTest, TfRecordMask) {
  const char length[8] = {24, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(MaskCrc32c(Crc32c(length, 8)), 0x224B7FA3u);
}

}  // namespace
}  // namespace iotap::analyzer::internal
