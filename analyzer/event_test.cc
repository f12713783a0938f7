#include "analyzer/event.h"

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

}  // namespace
}  // namespace iotap::analyzer
