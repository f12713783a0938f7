// TFRecord files' figures on hand-made events: record sizes, the reads that
// complete records, how the order of records is judged, and how processes
// merge.

#include "analyzer/accumulate/tfrecord_accumulator.h"

#include <string>
#include <utility>
#include <vector>

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

TEST(TfRecordAccumulatorTest, OrderSizesAndCompletingReads) {
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
  TfRecordAccumulator c;
  for (const Event& e : in_order.events) c.OnRecord(e);
  c.OnFileEnd(p);
  std::vector<TfRecordFileAccumulator> a = c.Files();
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

  TfRecordAccumulator d;
  for (const Event& e : shuffled.events) d.OnRecord(e);
  d.OnFileEnd(p);
  std::vector<TfRecordFileAccumulator> b = d.Files();
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].jumps, 2u);     // 3132 -> 116 and 0 -> 3132
  EXPECT_EQ(b[0].restarts, 1u);  // 116 -> 0
  EXPECT_EQ(b[0].sequential_steps, 0u);
  EXPECT_EQ(b[0].Order(), "shuffled");
}

// A TfRecordFile packet for the file.
Packet Description(TfRecordFile::Compression compression, const std::string& note) {
  Packet packet;
  TfRecordFile* t = packet.mutable_tfrecord_file();
  t->set_file(kRecords);
  t->set_compression(compression);
  t->set_detected_by_suffix(compression == TfRecordFile::COMPRESSION_NONE);
  t->set_detected_by_header(compression != TfRecordFile::COMPRESSION_NONE);
  t->set_note(note);
  return packet;
}

TEST(TfRecordAccumulatorTest, ProcessesMergeByPathAndTheLastRankedDescriptionSays) {
  ProcessTrace p = MakeProcess();
  Event record;
  record.op = OP_TFRECORD_RECORD;
  record.file = kRecords;
  record.flags = FLAG_HAS_OFFSET;
  TfRecordAccumulator run;
  // Ranks 2, 0, 1: merged out of order, as a pool of threads would.
  const std::vector<std::pair<int, TfRecordFile::Compression>> processes = {
      {2, TfRecordFile::COMPRESSION_ZLIB},
      {0, TfRecordFile::COMPRESSION_NONE},
      {1, TfRecordFile::COMPRESSION_GZIP}};
  for (const auto& [rank, compression] : processes) {
    TfRecordAccumulator one;
    record.requested = 100 * (rank + 1);
    one.OnRecord(record);
    one.OnPacket(p, Description(compression, rank == 1 ? "compressed" : ""));
    one.OnFileEnd(p);
    run.Absorb(std::move(one), rank);
  }
  std::vector<TfRecordFileAccumulator> files = run.Files();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].path, "/d/train.tfrecord");
  EXPECT_EQ(files[0].compression, "zlib");  // rank 2's
  EXPECT_EQ(files[0].note, "compressed");   // the only note, rank 1's
  EXPECT_TRUE(files[0].detected_by_suffix);
  EXPECT_TRUE(files[0].detected_by_header);
  EXPECT_EQ(files[0].records, 3u);
  EXPECT_EQ(files[0].record_bytes, 600u);
  EXPECT_EQ(files[0].min_record, 100u);
  EXPECT_EQ(files[0].max_record, 300u);
  EXPECT_EQ(files[0].processes, 3u);
  EXPECT_EQ(files[0].Order(), "");  // one record per process: no step between two
}

}  // namespace
}  // namespace iotap::analyzer
