// The shim's zstd frames, stored and compressed, as libzstd's own decoder
// reads them: ZSTD_decompress must give back the input, byte for byte.

#include "interpose/file/compress.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader
#include <zstd.h>

#include <cstdint>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

constexpr size_t kRawBlock = 128 * 1024;

// Looks like trace data: runs of small varints with some noise.
std::vector<uint8_t> Input(size_t n) {
  std::vector<uint8_t> data(n);
  uint32_t x = 12345;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    data[i] = (i % 16 < 12) ? static_cast<uint8_t>(i % 7) : static_cast<uint8_t>(x >> 24);
  }
  return data;
}

// Magic (4), header descriptor (1), content size (4), then a 3-byte header
// per block of at most 128 KiB (one empty block for no input).
size_t StoredSize(size_t n) {
  size_t blocks = n == 0 ? 1 : (n + kRawBlock - 1) / kRawBlock;
  return 4 + 1 + 4 + blocks * 3 + n;
}

std::vector<uint8_t> Decompress(const std::vector<uint8_t>& frame) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  EXPECT_NE(size, ZSTD_CONTENTSIZE_ERROR);
  EXPECT_NE(size, ZSTD_CONTENTSIZE_UNKNOWN);
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) return {};
  EXPECT_EQ(ZSTD_findFrameCompressedSize(frame.data(), frame.size()), frame.size());
  std::vector<uint8_t> out(size);
  size_t r = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  EXPECT_FALSE(ZSTD_isError(r)) << ZSTD_getErrorName(r);
  EXPECT_EQ(r, size);
  return out;
}

class StoredFrameTest : public ::testing::TestWithParam<size_t> {};

TEST_P(StoredFrameTest, DecompressesToTheInput) {
  const size_t n = GetParam();
  std::vector<uint8_t> in = Input(n);
  std::vector<uint8_t> frame(StoredSize(n));
  size_t size = WriteStoredFrame(in.data(), n, frame.data(), frame.size());
  ASSERT_EQ(size, StoredSize(n));
  EXPECT_EQ(Decompress(frame), in);
  FrameCompressor c;
  EXPECT_GE(c.Bound(n), size);
}

// Empty, one byte, exactly one block, one byte more, several blocks.
INSTANTIATE_TEST_SUITE_P(Sizes, StoredFrameTest,
                         ::testing::Values(0, 1, 1000, kRawBlock, kRawBlock + 1,
                                           3 * kRawBlock + 7));

TEST(StoredFrameTest, RefusesTooSmallABuffer) {
  std::vector<uint8_t> in = Input(1000);
  std::vector<uint8_t> frame(StoredSize(1000));
  EXPECT_EQ(WriteStoredFrame(in.data(), in.size(), frame.data(), frame.size() - 1), 0u);
}

// Levels 1-19, and zstd's fast levels below 0 (IOTAP_ZSTD_LEVEL -7 to -1).
class FrameCompressorLevelTest : public ::testing::TestWithParam<int> {};

TEST_P(FrameCompressorLevelTest, CompressedFramesDecompressToTheInput) {
  FrameCompressor c;
  ASSERT_TRUE(c.Init(GetParam(), 1u << 20));
  // One context, reused frame after frame, as the writer does.
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, 3 * kRawBlock + 7, size_t{1} << 20}) {
    std::vector<uint8_t> in = Input(n);
    std::vector<uint8_t> frame(c.Bound(n));
    size_t size = c.Compress(in.data(), n, frame.data(), frame.size());
    ASSERT_NE(size, 0u) << n;
    frame.resize(size);
    ZSTD_frameHeader header;
    ASSERT_EQ(ZSTD_getFrameHeader(&header, frame.data(), frame.size()), 0u);
    EXPECT_EQ(header.frameContentSize, n);
    EXPECT_EQ(header.checksumFlag, 1u) << "frames carry a checksum";
    EXPECT_EQ(Decompress(frame), in) << n;
    if (n >= 1000) {
      EXPECT_LT(size, StoredSize(n)) << "not compressed: " << n;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Levels, FrameCompressorLevelTest, ::testing::Values(1, 3, 19, -1, -7));

// A fast level trades size for speed: never smaller than level 1's frame.
TEST(FrameCompressorTest, FastLevelsCompressLessThanLevelOne) {
  std::vector<uint8_t> in = Input(size_t{1} << 20);
  auto size_at = [&](int level) {
    FrameCompressor c;
    EXPECT_TRUE(c.Init(level, in.size()));
    std::vector<uint8_t> frame(c.Bound(in.size()));
    return c.Compress(in.data(), in.size(), frame.data(), frame.size());
  };
  size_t one = size_at(1);
  EXPECT_GE(size_at(-1), one);
  EXPECT_GE(size_at(-7), size_at(-1));
  EXPECT_LT(size_at(-7), StoredSize(in.size()));
}

// Level 0 asks for stored frames: the same bytes WriteStoredFrame writes.
TEST(FrameCompressorTest, LevelZeroWritesStoredFrames) {
  FrameCompressor c;
  ASSERT_TRUE(c.Init(0, 1u << 20));
  std::vector<uint8_t> in = Input(kRawBlock + 1);
  std::vector<uint8_t> frame(c.Bound(in.size()));
  size_t size = c.Compress(in.data(), in.size(), frame.data(), frame.size());
  ASSERT_EQ(size, StoredSize(in.size()));
  frame.resize(size);
  std::vector<uint8_t> stored(size);
  WriteStoredFrame(in.data(), in.size(), stored.data(), stored.size());
  EXPECT_EQ(frame, stored);
  EXPECT_EQ(Decompress(frame), in);
}

TEST(FrameCompressorTest, ReturnsZeroWhenNothingFits) {
  FrameCompressor c;
  ASSERT_TRUE(c.Init(1, 1u << 20));
  std::vector<uint8_t> in = Input(1000);
  uint8_t frame[8];
  EXPECT_EQ(c.Compress(in.data(), in.size(), frame, sizeof(frame)), 0u);
}

}  // namespace
}  // namespace iotap::interpose
