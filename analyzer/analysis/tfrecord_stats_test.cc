// The TFRecord section of `iotap stats` on hand-made events: record sizes,
// the reads that complete records, and how the order of records is judged.

#include "analyzer/analysis/tfrecord_stats.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr uint32_t kRecords = 3;

ProcessTrace MakeProcess() {
  ProcessTrace p("test.iotap");
  StringTable t;
  InternedString* s = t.add_entry();
  s->set_id(kRecords);
  s->set_value("/d/train.tfrecord");
  s->set_kind(InternedString::KIND_PATH);
  p.AddStrings(t);
  return p;
}

TEST(TfRecordCollectorTest, OrderSizesAndCompletingReads) {
  ProcessTrace p = MakeProcess();
  // A record of `length` data bytes at `offset`, completed by read `read`.
  auto record = [](int64_t offset, uint64_t length, uint64_t read, uint32_t flags = 0) {
    Event e;
    e.op = OP_TFRECORD_RECORD;
    e.file = kRecords;
    e.requested = length;
    e.result = 1;
    e.parent = read;
    e.offset = offset;
    e.flags = FLAG_HAS_OFFSET | flags;
    return e;
  };
  EventBatch in_order;
  in_order.events = {record(0, 100, 1), record(116, 3000, 1), record(3132, 0, 2, FLAG_TFRECORD_SPANNED),
                     record(0, 100, 3)};  // and again from the start
  EventBatch shuffled;
  shuffled.events = {record(3132, 0, 4), record(116, 3000, 5), record(0, 100, 6),
                     record(3132, 0, 7)};
  TfRecordCollector c;
  c.OnProcess(p);
  c.OnEvents(p, in_order);
  c.OnFileEnd(p);
  std::vector<TfRecordFileStats> a = c.Finish();
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].records, 4u);
  EXPECT_EQ(a[0].record_bytes, 3200u);
  EXPECT_EQ(a[0].min_record, 0u);
  EXPECT_EQ(a[0].max_record, 3000u);
  EXPECT_EQ(a[0].size_log2.at(-1), 1u);  // the empty record
  EXPECT_EQ(a[0].size_log2.at(6), 2u);   // [64, 128)
  EXPECT_EQ(a[0].size_log2.at(11), 1u);  // [2048, 4096)
  EXPECT_EQ(a[0].reads_completing_records, 3u);
  EXPECT_EQ(a[0].spanned_records, 1u);
  EXPECT_EQ(a[0].sequential_steps, 2u);
  EXPECT_EQ(a[0].restarts, 1u);
  EXPECT_EQ(a[0].Order(), "in order");

  TfRecordCollector d;
  d.OnProcess(p);
  d.OnEvents(p, shuffled);
  d.OnFileEnd(p);
  std::vector<TfRecordFileStats> b = d.Finish();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].jumps, 2u);     // 3132 -> 116 and 0 -> 3132
  EXPECT_EQ(b[0].restarts, 1u);  // 116 -> 0
  EXPECT_EQ(b[0].sequential_steps, 0u);
  EXPECT_EQ(b[0].Order(), "shuffled");
}

}  // namespace
}  // namespace iotap::analyzer
