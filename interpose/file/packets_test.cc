// Packets written with WireWriter, read back by libprotobuf.

#include "interpose/file/packets.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpose/core/clock.h"
#include "interpose/core/config.h"
#include "interpose/core/ops.h"
#include "interpose/core/recorder.h"
#include "interpose/core/ring.h"
#include "interpose/core/strings.h"
#include "iotap/trace.pb.h"

namespace iotap::interpose {
namespace {

// Writes every string still pending, so that a test sees only its own.
void DrainStrings() {
  std::vector<uint8_t> buf(1 << 20);
  for (;;) {
    WireWriter w(buf.data(), buf.size());
    if (EncodePendingStrings(&w)) return;
  }
}

Trace Parse(const WireWriter& w) {
  Trace trace;
  EXPECT_TRUE(trace.ParseFromArray(w.data(), static_cast<int>(w.size())));
  return trace;
}

TEST(PacketsTest, PendingStringsMakeOneStringTable) {
  DrainStrings();
  uint32_t path = InternString("/data/train.h5", 14, kKindPath);
  uint32_t mark = InternString("epoch", 5, kKindMark);
  std::vector<uint8_t> buf(4096);
  WireWriter w(buf.data(), buf.size());
  EXPECT_TRUE(EncodePendingStrings(&w));
  Trace trace = Parse(w);
  ASSERT_EQ(trace.packet_size(), 1);
  const StringTable& table = trace.packet(0).strings();
  ASSERT_EQ(table.entry_size(), 2);
  EXPECT_EQ(table.entry(0).id(), path);
  EXPECT_EQ(table.entry(0).value(), "/data/train.h5");
  EXPECT_EQ(table.entry(0).kind(), InternedString::KIND_PATH);
  EXPECT_EQ(table.entry(1).id(), mark);
  EXPECT_EQ(table.entry(1).value(), "epoch");
  EXPECT_EQ(table.entry(1).kind(), InternedString::KIND_MARK);

  // Nothing pending: no packet at all.
  size_t size = w.size();
  EXPECT_TRUE(EncodePendingStrings(&w));
  EXPECT_EQ(w.size(), size);
}

// A packet stops at about 64 KiB: five strings of 20 KiB take two calls,
// three strings and two.
TEST(PacketsTest, LargeStringsSpreadOverPackets) {
  DrainStrings();
  std::vector<uint32_t> ids;
  for (char c = 'a'; c < 'f'; ++c) {
    std::string s(20 * 1024, c);
    ids.push_back(InternString(s.data(), s.size(), kKindPath));
  }
  std::vector<uint8_t> buf(1 << 20);
  WireWriter first(buf.data(), buf.size());
  EXPECT_FALSE(EncodePendingStrings(&first));
  Trace trace = Parse(first);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_EQ(trace.packet(0).strings().entry_size(), 3);
  EXPECT_EQ(trace.packet(0).strings().entry(2).id(), ids[2]);
  EXPECT_EQ(trace.packet(0).strings().entry(2).value(), std::string(20 * 1024, 'c'));

  WireWriter second(buf.data(), buf.size());
  EXPECT_TRUE(EncodePendingStrings(&second));
  trace = Parse(second);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_EQ(trace.packet(0).strings().entry_size(), 2);
  EXPECT_EQ(trace.packet(0).strings().entry(0).id(), ids[3]);
  EXPECT_EQ(trace.packet(0).strings().entry(1).value(), std::string(20 * 1024, 'e'));
}

// EndReason repeats EndOfTrace.Reason, which the shim cannot include: listed
// one by one, and the count catches a value added to the proto alone.
TEST(PacketsTest, EndReasonsMatchTheProto) {
  EXPECT_EQ(static_cast<int>(EndReason::kExit), EndOfTrace::REASON_EXIT);
  EXPECT_EQ(static_cast<int>(EndReason::kUnderscoreExit), EndOfTrace::REASON_UNDERSCORE_EXIT);
  EXPECT_EQ(static_cast<int>(EndReason::kExec), EndOfTrace::REASON_EXEC);
  EXPECT_EQ(static_cast<int>(EndReason::kUnloaded), EndOfTrace::REASON_UNLOADED);
  EXPECT_EQ(static_cast<int>(EndReason::kAbort), EndOfTrace::REASON_ABORT);
  // The five above and REASON_UNSPECIFIED.
  EXPECT_EQ(EndOfTrace::Reason_descriptor()->value_count(), 6);
}

// A buffer with room for two of three strings: the packet holds the two,
// is not marked overflowed (an overflowed packet is dropped whole, and the
// strings in it would be lost), and the third waits for the next buffer.
TEST(PacketsTest, StringThatDoesNotFitWaitsWithoutLosingThePacket) {
  DrainStrings();
  std::vector<uint32_t> ids;
  for (char c = 'a'; c < 'd'; ++c) {
    std::string s(10 * 1024, c);
    ids.push_back(InternString(s.data(), s.size(), kKindPath));
  }
  std::vector<uint8_t> buf(25 * 1024);
  WireWriter first(buf.data(), buf.size());
  EXPECT_FALSE(EncodePendingStrings(&first));
  EXPECT_FALSE(first.overflow());
  Trace trace = Parse(first);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_EQ(trace.packet(0).strings().entry_size(), 2);
  EXPECT_EQ(trace.packet(0).strings().entry(0).id(), ids[0]);
  EXPECT_EQ(trace.packet(0).strings().entry(1).id(), ids[1]);

  WireWriter second(buf.data(), buf.size());
  EXPECT_TRUE(EncodePendingStrings(&second));
  EXPECT_FALSE(second.overflow());
  trace = Parse(second);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_EQ(trace.packet(0).strings().entry_size(), 1);
  EXPECT_EQ(trace.packet(0).strings().entry(0).id(), ids[2]);
  EXPECT_EQ(trace.packet(0).strings().entry(0).value(), std::string(10 * 1024, 'c'));
}

// Not even the table's header fits: nothing is written, nothing is taken.
TEST(PacketsTest, FullBufferTakesNoString) {
  DrainStrings();
  uint32_t id = InternString("/data/x", 7, kKindPath);
  std::vector<uint8_t> buf(16);
  WireWriter full(buf.data(), buf.size());
  EXPECT_FALSE(EncodePendingStrings(&full));
  EXPECT_FALSE(full.overflow());
  EXPECT_EQ(full.size(), 0u);

  std::vector<uint8_t> room(4096);
  WireWriter next(room.data(), room.size());
  EXPECT_TRUE(EncodePendingStrings(&next));
  Trace trace = Parse(next);
  ASSERT_EQ(trace.packet_size(), 1);
  ASSERT_EQ(trace.packet(0).strings().entry_size(), 1);
  EXPECT_EQ(trace.packet(0).strings().entry(0).id(), id);
}

// Event times in the chunk are CLOCK_MONOTONIC ns in the configured unit,
// rounded down, whichever unit: 10 and 1 take a path of their own.
TEST(PacketsTest, ChunkTimesAreInTheConfiguredUnit) {
  RawEvent events[4] = {};
  const uint64_t times[4][2] = {{1'000'000'009, 1'000'000'011},
                                {1'000'000'020, 1'000'000'020},
                                {1'000'000'699, 1'000'003'701},
                                {1'000'004'000, 1'000'004'999}};
  for (int i = 0; i < 4; ++i) {
    events[i].t0 = times[i][0];
    events[i].t1 = times[i][1];
    events[i].op = kOpPread;
  }
  Ring ring;
  ring.capacity = 4;
  ring.monotonic_times = true;  // the times are ns already: only the unit applies
  ring.events = events;
  const uint32_t saved_unit = g_config.time_unit_ns;
  for (uint32_t unit : {10u, 1u, 7u, 100u}) {
    SCOPED_TRACE(unit);
    g_config.time_unit_ns = unit;
    std::vector<uint8_t> column(1 << 12);
    std::vector<int64_t> scratch_times(8);
    ChunkScratch scratch{column.data(), column.size(), scratch_times.data()};
    std::vector<uint8_t> buf(1 << 14);
    WireWriter w(buf.data(), buf.size());
    ClockConverter clock;
    ASSERT_TRUE(EncodeChunk(&w, ring, 0, 4, 0, 0, clock, &scratch));
    Trace trace = Parse(w);
    ASSERT_EQ(trace.packet_size(), 1);
    const EventChunk& chunk = trace.packet(0).events();
    EXPECT_EQ(chunk.time_unit_ns(), unit);
    uint64_t end = chunk.base_time_ns() / unit;
    for (int i = 0; i < 4; ++i) {
      uint64_t start = end + chunk.start_gap(i);
      end = start + chunk.duration(i);
      EXPECT_EQ(start, times[i][0] / unit) << i;
      EXPECT_EQ(end, times[i][1] / unit) << i;
    }
  }
  g_config.time_unit_ns = saved_unit;
}

}  // namespace
}  // namespace iotap::interpose
