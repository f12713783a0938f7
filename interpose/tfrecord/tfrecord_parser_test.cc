#include "interpose/tfrecord/tfrecord_parser.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "proto/wire/crc32c.h"

namespace iotap::interpose {
namespace {

// A TFRecord file built here, and its record table.
struct File {
  std::string bytes;
  std::vector<int64_t> offsets;
  std::vector<uint64_t> lengths;
};

void PutLe(std::string* out, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

File MakeFile(const std::vector<uint64_t>& lengths) {
  File f;
  for (uint64_t len : lengths) {
    f.offsets.push_back(static_cast<int64_t>(f.bytes.size()));
    f.lengths.push_back(len);
    std::string len_bytes;
    PutLe(&len_bytes, len, 8);
    std::string data(len, 'x');
    for (uint64_t i = 0; i < len; ++i) data[i] = static_cast<char>(i * 7 + len);
    f.bytes += len_bytes;
    PutLe(&f.bytes, wire::MaskCrc32c(wire::Crc32c(len_bytes.data(), 8)), 4);
    f.bytes += data;
    PutLe(&f.bytes, wire::MaskCrc32c(wire::Crc32c(data.data(), data.size())), 4);
  }
  return f;
}

struct Collected {
  std::vector<TfRecordInfo> records;
  void operator()(const TfRecordInfo& r) { records.push_back(r); }
};

void FeedRange(TfRecordParser* p, const File& f, size_t from, size_t n, Collected* out) {
  p->Feed(static_cast<int64_t>(from), reinterpret_cast<const uint8_t*>(f.bytes.data()) + from, n,
          *out);
}

TEST(TfRecordParserTest, ReadsOfEverySizeFindEveryRecord) {
  File f = MakeFile({0, 1, 100, 5000, 12, 3, 70000, 8});
  for (size_t chunk : {1, 2, 5, 11, 12, 13, 16, 100, 4096, 262144}) {
    TfRecordParser p;
    Collected c;
    for (size_t at = 0; at < f.bytes.size(); at += chunk) {
      FeedRange(&p, f, at, std::min(chunk, f.bytes.size() - at), &c);
    }
    ASSERT_EQ(c.records.size(), f.offsets.size()) << chunk;
    for (size_t i = 0; i < c.records.size(); ++i) {
      EXPECT_EQ(c.records[i].offset, f.offsets[i]) << chunk;
      EXPECT_EQ(c.records[i].length, f.lengths[i]) << chunk;
      EXPECT_EQ(c.records[i].index, i) << chunk;
      EXPECT_TRUE(c.records[i].index_known);
    }
  }
}

TEST(TfRecordParserTest, CountsTheReadsThatCoveredEachRecord) {
  File f = MakeFile({100, 100, 1000});
  TfRecordParser p;
  Collected c;
  FeedRange(&p, f, 0, 150, &c);    // record 0 whole, record 1 begins
  FeedRange(&p, f, 150, 100, &c);  // record 1 ends, record 2 begins
  FeedRange(&p, f, 250, 500, &c);
  FeedRange(&p, f, 750, f.bytes.size() - 750, &c);
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[0].reads, 1u);
  EXPECT_EQ(c.records[1].reads, 2u);
  EXPECT_EQ(c.records[2].reads, 3u);
}

TEST(TfRecordParserTest, PerRecordReaderHeaderThenDataThenFooter) {
  File f = MakeFile({10, 20, 30});
  TfRecordParser p;
  Collected c;
  for (size_t i = 0; i < f.offsets.size(); ++i) {
    size_t at = static_cast<size_t>(f.offsets[i]);
    FeedRange(&p, f, at, 12, &c);
    FeedRange(&p, f, at + 12, f.lengths[i], &c);
    FeedRange(&p, f, at + 12 + f.lengths[i], 4, &c);
  }
  ASSERT_EQ(c.records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(c.records[i].offset, f.offsets[i]);
    EXPECT_EQ(c.records[i].reads, 2u);
    EXPECT_EQ(c.records[i].index, i);
  }
}

TEST(TfRecordParserTest, SkippedFootersKeepTheIndex) {
  File f = MakeFile({10, 20, 30});
  TfRecordParser p;
  Collected c;
  for (size_t i = 0; i < f.offsets.size(); ++i) {
    FeedRange(&p, f, static_cast<size_t>(f.offsets[i]), 12 + f.lengths[i], &c);
  }
  ASSERT_EQ(c.records.size(), 3u);
  EXPECT_EQ(c.records[2].offset, f.offsets[2]);
  EXPECT_EQ(c.records[2].index, 2u);
  EXPECT_TRUE(c.records[2].index_known);
}

TEST(TfRecordParserTest, RandomAccessResynchronisesAtEachRecord) {
  File f = MakeFile({10, 20, 30, 40, 50});
  TfRecordParser p;
  Collected c;
  for (int i : {3, 0, 4, 1, 2}) {
    FeedRange(&p, f, static_cast<size_t>(f.offsets[i]), 16 + f.lengths[i], &c);
  }
  ASSERT_EQ(c.records.size(), 5u);
  const int order[] = {3, 0, 4, 1, 2};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(c.records[k].offset, f.offsets[order[k]]);
    EXPECT_EQ(c.records[k].length, f.lengths[order[k]]);
    // Only the record at offset 0 has a known index: every other one is
    // reached by a jump (record 2 follows record 1 without a break, but
    // record 1's index was already unknown).
    EXPECT_EQ(c.records[k].index_known, order[k] == 0) << k;
  }
}

TEST(TfRecordParserTest, BadHeaderLosesTrackUntilTheNextJump) {
  File f = MakeFile({10, 20});
  TfRecordParser p;
  Collected c;
  FeedRange(&p, f, 5, 20, &c);  // starts mid-header: CRC fails
  EXPECT_EQ(p.state(), TfRecordParser::kLost);
  FeedRange(&p, f, 25, f.bytes.size() - 25, &c);  // continues: still lost
  EXPECT_TRUE(c.records.empty());
  FeedRange(&p, f, static_cast<size_t>(f.offsets[1]), 36, &c);  // a jump to a header
  ASSERT_EQ(c.records.size(), 1u);
  EXPECT_EQ(c.records[0].offset, f.offsets[1]);
}

TEST(TfRecordParserTest, ReReadingTheSameRecordKeepsItsIndex) {
  File f = MakeFile({10, 20});
  TfRecordParser p;
  Collected c;
  FeedRange(&p, f, 0, 26, &c);  // record 0 and 4 bytes of record 1's header
  FeedRange(&p, f, 26, 4, &c);
  FeedRange(&p, f, 26, 12, &c);  // back to record 1's header
  FeedRange(&p, f, 38, 24, &c);
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[1].index, 1u);
  EXPECT_TRUE(c.records[1].index_known);
}

}  // namespace
}  // namespace iotap::interpose
