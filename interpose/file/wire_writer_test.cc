// WireWriter's output, parsed by the generated trace.proto classes: what the
// shim writes is what libprotobuf reads, field by field.

#include "interpose/file/wire_writer.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "iotap/trace.pb.h"

namespace iotap::interpose {
namespace {

Trace Parse(const WireWriter& w) {
  Trace trace;
  EXPECT_TRUE(trace.ParseFromArray(w.data(), static_cast<int>(w.size())));
  return trace;
}

// Trace.packet { clock { ... } }: two nested messages, each with a 5-byte
// length, around three varints.
TEST(WireTest, NestedVarintsParse) {
  uint8_t buf[64];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);
  size_t clock = w.BeginNested(2);
  w.Varint(1, std::numeric_limits<uint64_t>::max());
  w.Varint(2, 1);
  w.VarintIfNonZero(4, 0);
  w.Varint(3, 300);
  w.EndNested(clock);
  w.EndNested(packet);
  ASSERT_FALSE(w.overflow());
  // Tag and length of each message (1 + 5 twice), then 1 + 10, 1 + 1, 1 + 2.
  EXPECT_EQ(w.size(), 28u);
  // The clock's length, 16, as a redundant 5-byte varint.
  EXPECT_EQ(std::vector<uint8_t>(buf + 7, buf + 12),
            (std::vector<uint8_t>{0x90, 0x80, 0x80, 0x80, 0x00}));
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_TRUE(trace.packet(0).has_clock());
  const ClockSnapshot& c = trace.packet(0).clock();
  EXPECT_EQ(c.monotonic_ns(), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(c.realtime_ns(), 1u);
  EXPECT_EQ(c.uncertainty_ns(), 300u);
  EXPECT_EQ(c.events_recorded(), 0u);
}

// Signed columns are sint64: zigzag on the wire. Written one value per
// field (unpacked), which parsers accept for packed fields too.
TEST(WireTest, SintsParse) {
  uint8_t buf[128];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);
  size_t chunk = w.BeginNested(4);
  for (int64_t v : {int64_t{-5}, int64_t{0}, std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max()}) {
    w.Sint(16, v);
  }
  w.Bool(3, true);
  w.EndNested(chunk);
  w.EndNested(packet);
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  const EventChunk& c = trace.packet(0).events();
  ASSERT_EQ(c.result_size(), 4);
  EXPECT_EQ(c.result(0), -5);
  EXPECT_EQ(c.result(1), 0);
  EXPECT_EQ(c.result(2), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(c.result(3), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(c.time_unit_ns(), 1u);
}

TEST(WireTest, BytesAndStringsParse) {
  const std::string binary("a\0b\xff", 4);
  uint8_t buf[128];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);
  size_t header = w.BeginNested(1);
  w.String(2, "0.1.0");
  w.Bytes(6, binary.data(), binary.size());
  w.String(8, nullptr);
  w.Bytes(7, "", 0);
  w.EndNested(header);
  w.EndNested(packet);
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  const ProcessHeader& h = trace.packet(0).process();
  EXPECT_EQ(h.shim_version(), "0.1.0");
  EXPECT_EQ(h.executable(), binary);
  EXPECT_EQ(h.cwd(), "");
  ASSERT_EQ(h.argv_size(), 1);
  EXPECT_EQ(h.argv(0), "");
}

// Columns as EncodeChunk writes them: a header, then varints put in place.
TEST(WireTest, PackedColumnParses) {
  uint8_t buf[64];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);
  size_t chunk = w.BeginNested(4);
  const uint64_t ops[] = {1, 10, 300};
  w.PackedHeader(10, 4);
  uint8_t* p = w.Claim(4);
  ASSERT_NE(p, nullptr);
  for (uint64_t op : ops) p = wire::PutVarint(p, op);
  w.Commit(p);
  w.EndNested(chunk);
  w.EndNested(packet);
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  const EventChunk& c = trace.packet(0).events();
  ASSERT_EQ(c.op_size(), 3);
  EXPECT_EQ(c.op(0), 1u);
  EXPECT_EQ(c.op(1), 10u);
  EXPECT_EQ(c.op(2), 300u);
}

// PackedVarints: the column EncodeChunk writes, and none where every value
// is zero.
TEST(WireTest, PackedVarintsParse) {
  const std::vector<int64_t> results = {-1, 0, 4096, std::numeric_limits<int64_t>::min()};
  uint8_t scratch[4 * wire::kMaxVarintBytes];
  uint8_t buf[128];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);
  size_t chunk = w.BeginNested(4);
  w.PackedVarints(10, 4, scratch, [](uint32_t i) { return uint64_t{i} * 100; });
  w.PackedVarints(16, 4, scratch, [&](uint32_t i) { return wire::ZigZag(results[i]); });
  const size_t before_zeros = w.size();
  w.PackedVarints(13, 4, scratch, [](uint32_t) { return uint64_t{0}; });
  EXPECT_EQ(w.size(), before_zeros);
  w.EndNested(chunk);
  w.EndNested(packet);
  ASSERT_FALSE(w.overflow());
  // Tag and length of each message (1 + 5 twice); the ops 0, 100, 200 and
  // 300 (1 + 1 + 2 + 2 bytes) behind a 1-byte tag and length; the results
  // (1 + 1 + 2 + 10 bytes) behind a 2-byte tag (field 16) and a length.
  EXPECT_EQ(w.size(), 12u + (2 + 6) + (3 + 14));
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  const EventChunk& c = trace.packet(0).events();
  ASSERT_EQ(c.op_size(), 4);
  EXPECT_EQ(c.op(3), 300u);
  ASSERT_EQ(c.result_size(), 4);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(c.result(i), results[i]) << i;
  EXPECT_EQ(c.file_size(), 0);
}

// A nested length takes four of its five bytes (3 MB, past 2^21).
TEST(WireTest, LargeNestedMessageParses) {
  const std::string big(3'000'000, 'x');
  std::vector<uint8_t> buf(big.size() + 64);
  WireWriter w(buf.data(), buf.size());
  size_t packet = w.BeginNested(1);
  size_t strings = w.BeginNested(3);
  size_t entry = w.BeginNested(1);
  w.Varint(1, 7);
  w.Bytes(2, big.data(), big.size());
  w.EndNested(entry);
  w.EndNested(strings);
  w.EndNested(packet);
  ASSERT_FALSE(w.overflow());
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_EQ(trace.packet(0).strings().entry_size(), 1);
  EXPECT_EQ(trace.packet(0).strings().entry(0).id(), 7u);
  EXPECT_EQ(trace.packet(0).strings().entry(0).value(), big);
}

// A packet that does not fit stops the writer; Rewind drops it and the
// packets before it stay whole.
TEST(WireTest, OverflowAndRewind) {
  uint8_t buf[48];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);
  size_t clock = w.BeginNested(2);
  w.Varint(1, 42);
  w.EndNested(clock);
  w.EndNested(packet);
  ASSERT_FALSE(w.overflow());
  const size_t first = w.size();
  EXPECT_EQ(first, 14u);

  packet = w.BeginNested(1);
  size_t header = w.BeginNested(1);
  const std::string too_long(40, 'h');
  w.String(5, too_long.c_str());
  EXPECT_TRUE(w.overflow());
  const size_t stopped = w.size();
  w.Varint(1, 1);
  EXPECT_EQ(w.Claim(1), nullptr);
  w.EndNested(header);
  w.EndNested(packet);
  EXPECT_EQ(w.size(), stopped) << "nothing is written after an overflow";
  EXPECT_EQ(w.remaining(), sizeof(buf) - stopped);

  w.Rewind(first);
  EXPECT_FALSE(w.overflow());
  EXPECT_EQ(w.size(), first);
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  EXPECT_EQ(trace.packet(0).clock().monotonic_ns(), 42u);

  // A smaller packet fits after the rewind.
  packet = w.BeginNested(1);
  size_t end = w.BeginNested(5);
  w.Varint(2, 3);
  w.EndNested(end);
  w.EndNested(packet);
  ASSERT_FALSE(w.overflow());
  trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 2);
  EXPECT_EQ(trace.packet(1).end().exit_code(), 3);
}

}  // namespace
}  // namespace iotap::interpose
