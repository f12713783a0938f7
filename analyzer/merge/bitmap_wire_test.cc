#include "analyzer/merge/bitmap_wire.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

std::string Written(const std::function<void(WireWriter&)>& write, size_t piece_bytes = 5) {
  std::string bytes;
  WireWriter w([&](std::string_view piece) { bytes += piece; }, piece_bytes);
  write(w);
  w.Finish();
  return bytes;
}

absl::Status Merged(const std::string& bytes, TimeBitmap* into) {
  // Handed on 3 bytes at a time: values cut in the middle.
  size_t at = 0;
  WireReader r([&] {
    std::string piece = bytes.substr(std::min(at, bytes.size()), 3);
    at += 3;
    return piece;
  });
  absl::Status status = MergeBitmap(r, into);
  if (status.ok() && !r.AtEnd()) return absl::DataLossError("left over");
  return status;
}

TEST(BitmapWireTest, RunsAndWordsComeBackAsTheyWere) {
  TimeBitmap b(0, 1);
  b.Set(10, 20);
  b.Set(65'530, 65'546);
  b.Set(5 * 65'536 + 7, 5 * 65'536 + 8);
  for (int64_t slot = 3 * 65'536; slot < 3 * 65'536 + 4000; slot += 2) b.Set(slot, slot + 1);
  b.Compact();  // chunks 0, 1 and 5 as runs, 3 as words (2,000 runs)
  ASSERT_NE(b.chunk(3), nullptr);
  std::string bytes = Written([&](WireWriter& w) { PutBitmap(w, b); });
  // Chunk 0's runs: gap 10, length 10 less one; gap 65,500, 6 less one...
  EXPECT_LT(bytes.size(), 400u);
  TimeBitmap got(0, 1);
  ASSERT_TRUE(Merged(bytes, &got).ok());
  EXPECT_EQ(got.Total(), 10 + 16 + 1 + 2000);
  EXPECT_EQ(got.Total(), b.Total());
  ASSERT_NE(got.chunk_runs(0), nullptr);
  EXPECT_EQ(*got.chunk_runs(0), *b.chunk_runs(0));
  EXPECT_EQ(*got.chunk_runs(1), (std::vector<uint32_t>{TimeBitmap::RunOf(0, 9)}));
  EXPECT_EQ(*got.chunk_runs(5), (std::vector<uint32_t>{TimeBitmap::RunOf(7, 7)}));
  ASSERT_NE(got.chunk(3), nullptr);
  EXPECT_EQ(got.Count(3 * 65'536, 3 * 65'536 + 10), 5);
  // Merged again into what holds it, and into a bitmap with other runs: ORs.
  ASSERT_TRUE(Merged(bytes, &got).ok());
  EXPECT_EQ(got.Total(), b.Total());
  TimeBitmap other(0, 1);
  other.Set(15, 40);
  other.Compact();
  ASSERT_TRUE(Merged(bytes, &other).ok());
  EXPECT_EQ(*other.chunk_runs(0), (std::vector<uint32_t>{TimeBitmap::RunOf(10, 39),
                                                          TimeBitmap::RunOf(65'530, 65'535)}));
  EXPECT_EQ(other.Total(), b.Total() + 20);
  // Nothing set: one byte, and nothing merged.
  TimeBitmap empty(0, 1);
  std::string none = Written([&](WireWriter& w) { PutBitmap(w, empty); });
  EXPECT_EQ(none.size(), 1u);
  ASSERT_TRUE(Merged(none, &empty).ok());
  EXPECT_EQ(empty.Total(), 0);
}

// What each damaged stream must say, and that the bitmap takes no harm.
struct Damage {
  std::function<void(WireWriter&)> write;
  std::string says;
};

TEST(BitmapWireTest, DamagedStreamsFailWithWhatWasWrong) {
  const std::vector<Damage> cases = {
      {[](WireWriter& w) { w.U(uint64_t{1} << 40); }, "claims 1099511627776 chunks"},
      {[](WireWriter& w) { w.U(1), w.U(uint64_t{1} << 40), w.U(1), w.U(1), w.U(0), w.U(0); },
       "chunk 1099511627776 is out of order or past the last"},
      {[](WireWriter& w) { w.U(2), w.U(4), w.U(1), w.U(1), w.U(0), w.U(0), w.U(3), w.U(1); },
       "chunk 3 is out of order"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(7); }, "chunk 0 has an unknown form 7"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(1), w.U(0); }, "chunk 0 claims 0 runs"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(1), w.U(40'000); }, "claims 40000 runs"},
      // A run from slot 65,530, 7 long: past the chunk's 65,536 slots.
      {[](WireWriter& w) { w.U(1), w.U(2), w.U(1), w.U(1), w.U(65'530), w.U(6); },
       "chunk 2 has run 0 (65530 slots after slot 0, 6 slots more than one long) outside"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(1), w.U(1), w.U(0), w.U(UINT64_MAX); },
       "outside the chunk"},
      // A second run right after the first: they would be one.
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(1), w.U(2), w.U(0), w.U(4), w.U(0), w.U(0); },
       "chunk 0 has run 1 (0 slots after slot 5"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(0), w.U(1000), w.U(0), w.U(25), w.U(5); },
       "chunk 0 has a run of 25 words at word 1000 of 1024"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(0), w.U(2000), w.U(0); },
       "chunk 0 has a run of 2000 words at word 0"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(0), w.U(0), w.U(0); },
       "chunk 0 has a run of 0 words"},
      {[](WireWriter& w) { w.U(2), w.U(0), w.U(1), w.U(1), w.U(0), w.U(0); }, "cut short"},
      {[](WireWriter& w) { w.U(1), w.U(0), w.U(0), w.U(1000), w.U(5); }, "cut short"},
  };
  for (const Damage& c : cases) {
    TimeBitmap into(0, 1);
    into.Set(3, 4);
    absl::Status status = Merged(Written(c.write), &into);
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << c.says;
    EXPECT_NE(status.message().find("busy-time bitmap in a partial analysis"),
              std::string_view::npos) << status.message();
    EXPECT_NE(status.message().find(c.says), std::string_view::npos)
        << status.message() << "\n  should say: " << c.says;
    EXPECT_LE(into.memory_bytes(), size_t{1} << 20);
  }
}

}  // namespace
}  // namespace iotap::analyzer
