#include "analyzer/read/event.h"

#include <random>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

// A chunk of one read and one group of three records after it.
EventChunk GroupChunk(uint64_t count) {
  EventChunk c;
  c.set_tid(7);
  c.set_first_seq(40);
  c.set_time_unit_ns(1);
  for (uint32_t op : {OP_READ, OP_TFRECORD_RECORDS}) c.add_op(op);
  for (int i = 0; i < 2; ++i) {
    c.add_start_gap(0);
    c.add_duration(0);
    c.add_file(3);
    c.add_flags(FLAG_HAS_OFFSET | (i == 1 ? FLAG_TFRECORD_CRC_OK : 0));
    c.add_parent(i == 1 ? (uint64_t{7} << 40 | 40) : 0);
  }
  c.add_offset_delta(0);     // the read at 0
  c.add_offset_delta(0);     // the first record at 0 too
  c.add_requested(262144);   // the read
  c.add_requested(100 | uint64_t{0} << 16 | uint64_t{65535} << 32);  // records of 100, 0, 65535
  c.add_result(262144);
  c.add_result(0);
  c.add_aux(0);
  c.add_aux(count << 56 | 5);  // first index 5
  return c;
}

TEST(DecodeChunkTest, RecordGroupsBecomeOneEventPerRecord) {
  EventBatch batch;
  ASSERT_TRUE(DecodeChunk(GroupChunk(3), &batch).ok());
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_EQ(batch.events[0].op, OP_READ);
  const int64_t offsets[] = {0, 116, 132};
  const uint64_t lengths[] = {100, 0, 65535};
  for (int k = 0; k < 3; ++k) {
    const Event& r = batch.events[k + 1];
    EXPECT_EQ(r.op, OP_TFRECORD_RECORD);
    EXPECT_EQ(r.offset, offsets[k]);
    EXPECT_EQ(r.requested, lengths[k]);
    EXPECT_EQ(r.result, 1);
    EXPECT_EQ(r.aux, 5u + k);
    EXPECT_EQ(r.seq, 41u);
    EXPECT_EQ(r.parent, uint64_t{7} << 40 | 40);
  }
}

TEST(DecodeChunkTest, RecordGroupOfImpossibleSizeIsDamage) {
  EventBatch batch;
  EXPECT_FALSE(DecodeChunk(GroupChunk(9), &batch).ok());
  EXPECT_FALSE(DecodeChunk(GroupChunk(1), &batch).ok());
}

// A chunk of one read and `runs` runs of `count` records of 1000 bytes
// after it, the first from offset 4096, index 9.
EventChunk RunChunk(int64_t count, int runs = 1) {
  EventChunk c;
  c.set_tid(7);
  c.set_first_seq(40);
  c.set_time_unit_ns(1);
  for (int i = 0; i <= runs; ++i) {
    c.add_op(i == 0 ? OP_READ : OP_TFRECORD_RUN);
    c.add_start_gap(0);
    c.add_duration(0);
    c.add_file(3);
    c.add_flags(FLAG_HAS_OFFSET | (i > 0 ? FLAG_TFRECORD_CRC_OK : 0));
    c.add_parent(i > 0 ? (uint64_t{7} << 40 | 40) : 0);
    c.add_offset_delta(i == 0 ? 4096 : 0);
    c.add_requested(i == 0 ? 262144 : 1000);
    c.add_result(i == 0 ? 262144 : count);
    c.add_aux(i == 0 ? 0 : 9);
  }
  return c;
}

TEST(DecodeChunkTest, RecordRunsBecomeOneEventPerRecord) {
  EventBatch batch;
  ASSERT_TRUE(DecodeChunk(RunChunk(255), &batch).ok());
  ASSERT_EQ(batch.size(), 256u);
  EXPECT_EQ(batch.events[0].op, OP_READ);
  for (int k = 0; k < 255; ++k) {
    const Event& r = batch.events[k + 1];
    SCOPED_TRACE(k);
    EXPECT_EQ(r.op, OP_TFRECORD_RECORD);
    EXPECT_EQ(r.offset, 4096 + 1016 * k);
    EXPECT_EQ(r.requested, 1000u);
    EXPECT_EQ(r.result, 1);
    EXPECT_EQ(r.aux, 9u + k);
    EXPECT_EQ(r.seq, 41u);
    EXPECT_EQ(r.file, 3u);
    EXPECT_EQ(r.parent, uint64_t{7} << 40 | 40);
  }
}

TEST(DecodeChunkTest, RecordRunOfImpossibleSizeIsDamage) {
  EventBatch batch;
  EXPECT_TRUE(DecodeChunk(RunChunk(2), &batch).ok());
  for (int64_t count : {int64_t{256}, int64_t{1}, int64_t{0}, int64_t{-2}, INT64_MAX}) {
    absl::Status s = DecodeChunk(RunChunk(count), &batch);
    EXPECT_FALSE(s.ok()) << count;
    EXPECT_NE(std::string(s.message()).find("record run of thread 7 claims"), std::string::npos)
        << s;
  }
}

TEST(DecodeChunkTest, ChunkStandingForTooManyRecordsIsDamage) {
  // 4200 runs of 255: more than a chunk of the shim's 4096 events can hold.
  EventBatch batch;
  EXPECT_TRUE(DecodeChunk(RunChunk(255, 4096), &batch).ok());
  EXPECT_EQ(batch.size(), 4096u * 255 + 1);
  absl::Status s = DecodeChunk(RunChunk(255, 4200), &batch);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("more than 1048576 TFRecord records"),
            std::string::npos)
      << s;
}

TEST(DecodeChunkTest, TimesOutOfRangeAreDamage) {
  // Whatever a damaged chunk holds, times stay where wall-clock offsets can
  // be added to them without overflow.
  auto chunk = [](uint64_t base, int64_t gap, uint64_t duration, uint32_t unit) {
    EventChunk c;
    c.set_tid(3);
    c.set_base_time_ns(base);
    c.set_time_unit_ns(unit);
    c.add_op(OP_READ);
    c.add_start_gap(gap);
    c.add_duration(duration);
    return c;
  };
  EventBatch batch;
  EXPECT_TRUE(DecodeChunk(chunk(1'000'000, 5, 10, 1), &batch).ok());
  EXPECT_EQ(batch.events[0].end_ns, 1'000'015);
  const uint64_t limit = static_cast<uint64_t>(kMaxMonotonicNs);
  EXPECT_TRUE(DecodeChunk(chunk(limit - 10, 0, 10, 1), &batch).ok());
  for (const EventChunk& bad :
       {chunk(limit - 10, 0, 11, 1), chunk(1000, 0, UINT64_MAX, 1), chunk(1000, -2000, 1, 1),
        chunk(UINT64_MAX, 0, 1, 1), chunk(limit + 1000, 0, 0, 1000)}) {
    absl::Status s = DecodeChunk(bad, &batch);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(std::string(s.message()).find("times out of range"), std::string::npos) << s;
    EXPECT_TRUE(batch.events.empty());
  }
}

// Random chunks, some long enough that a column passes 255 blocks of 16
// bytes, with values of every varint length; some with a column one value
// short or long. The op, error, flags and parent columns are in some rounds
// one byte per event (absent, or values below 128: the decoder reads them
// byte by byte), in others not. The wire-level decoder must agree with
// libprotobuf's parse followed by DecodeChunk, event for event, or step
// aside (nullopt).
TEST(ChunkDecoderTest, AgreesWithLibprotobufOnRandomChunks) {
  std::mt19937_64 rng(20261121);
  auto value = [&] {
    int bits = static_cast<int>(rng() % 64) + 1;
    return rng() >> (64 - bits);
  };
  int fast_paths = 0, mismatches = 0;
  for (int round = 0; round < 60; ++round) {
    const int n = round % 3 == 0 ? 5000 + static_cast<int>(rng() % 2000)
                                 : static_cast<int>(rng() % 300);
    EventChunk c;
    c.set_tid(static_cast<uint32_t>(rng()));
    c.set_base_time_ns(rng() >> 8);
    c.set_time_unit_ns(1 + static_cast<uint32_t>(rng() % 100));
    c.set_first_seq(rng() >> 20);
    const bool narrow = round % 2 == 0;      // flags below 128
    const int errors = round % 4;            // 1: below 128, 3: any; else none
    const bool parents = round % 3 == 1;     // small parents
    const bool wide_ops = round % 7 == 6;    // ops up to 400: two bytes
    for (int i = 0; i < n; ++i) {
      c.add_op(static_cast<uint32_t>(rng() % (wide_ops ? 400 : 120)));
      c.add_start_gap(static_cast<int64_t>(rng() % 1000));
      c.add_duration(rng() % 100000);
      c.add_file(static_cast<uint32_t>(value()));
      c.add_offset_delta(static_cast<int64_t>(value()));
      c.add_requested(value());
      c.add_result(static_cast<int64_t>(value()));
      c.add_flags(static_cast<uint32_t>(narrow ? rng() % 128 : value()));
      if (errors == 1) c.add_error(static_cast<uint32_t>(rng() % 128));
      if (errors == 3) c.add_error(static_cast<uint32_t>(value()));
      if (parents) c.add_parent(rng() % 100);
      c.add_aux(value());
    }
    // One column in five rounds is one value off.
    if (round % 5 == 4 && n > 0) {
      ++mismatches;
      if (rng() % 2) {
        c.mutable_requested()->RemoveLast();
      } else {
        c.add_aux(value());
      }
    }
    std::string wire = c.SerializeAsString();
    EventBatch expected, got;
    absl::Status want = DecodeChunk(c, &expected);
    ChunkDecoder decoder;
    std::optional<absl::Status> fast =
        decoder.Decode(reinterpret_cast<const uint8_t*>(wire.data()), wire.size(), &got);
    SCOPED_TRACE(round);
    if (!fast.has_value()) {
      EXPECT_FALSE(want.ok());  // only damage is left to libprotobuf here
      continue;
    }
    ++fast_paths;
    ASSERT_EQ(fast->ok(), want.ok()) << *fast << " / " << want;
    if (!want.ok()) continue;
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      const Event& a = got.events[i];
      const Event& b = expected.events[i];
      ASSERT_TRUE(a.seq == b.seq && a.start_ns == b.start_ns && a.end_ns == b.end_ns &&
                  a.offset == b.offset && a.requested == b.requested && a.result == b.result &&
                  a.aux == b.aux && a.parent == b.parent && a.file == b.file &&
                  a.error == b.error && a.flags == b.flags && a.tid == b.tid && a.op == b.op)
          << "event " << i;
    }
  }
  EXPECT_EQ(mismatches, 12);
  EXPECT_EQ(fast_paths, 48);  // every round without a mismatched column
}

}  // namespace
}  // namespace iotap::analyzer
