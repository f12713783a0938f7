// The signal sampler's parts that need no interpreter (py_frames.h): the
// location table decoder against what CPython 3.11 itself says of real code
// objects, the names' table and its checks, and the samples' ring.

#include "interpose/core/py_frames.h"

#include <string.h>

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

// co_linetable of a function compiled by CPython 3.11.2 (first line 2), and
// the line of each code unit as its co_lines() gives it:
//
//   def sample(a, b):
//       x = a + b
//       if x > 3:
//           y = [i * i
//                for i in range(x)]
//       else:
//           y = None
//
//       return (x,
//               y)
const uint8_t kSample[] = {
    0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41, 0xd8, 0x07, 0x08,
    0x88, 0x31, 0x82, 0x75, 0x80, 0x75, 0xf0, 0x02, 0x01, 0x0d, 0x20, 0xf0, 0x00, 0x01,
    0x0d, 0x20, 0xdd, 0x16, 0x1b, 0x98, 0x41, 0x91, 0x68, 0x94, 0x68, 0xf0, 0x03, 0x01,
    0x0d, 0x20, 0xf1, 0x00, 0x01, 0x0d, 0x20, 0xf4, 0x00, 0x01, 0x0d, 0x20, 0x88, 0x01,
    0x88, 0x01, 0xf0, 0x06, 0x00, 0x0d, 0x11, 0x88, 0x01, 0xe0, 0x0c, 0x0d, 0xd8, 0x0c,
    0x0d, 0xf0, 0x03, 0x01, 0x0c, 0x0f, 0xf0, 0x00, 0x01, 0x05, 0x0f};
const int kSampleLines[] = {2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 5, 5, 6, 6, 6, 6, 6, 6, 6, 6,
                            6, 6, 6, 6, 6, 6, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 8, 8, 10, 11, 10, 10};

// A function whose last line is 300 lines below the others: a long-form
// entry with a two-byte line delta.
const uint8_t kFar[] = {0x80, 0x00, 0xd8, 0x04, 0x05, 0x88, 0x11, 0x81, 0x46, 0x80, 0x41,
                        0xd8, 0x04, 0x05, 0x88, 0x11, 0x81, 0x46, 0x80, 0x41, 0xd8, 0x04,
                        0x05, 0x88, 0x11, 0x81, 0x46, 0x80, 0x41, 0xf0, 0x5a, 0x09, 0x00,
                        0x0c, 0x0d, 0x88, 0x71, 0x89, 0x35, 0x80, 0x4c};
const int kFarLines[] = {1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 305, 305, 305, 305, 305};

TEST(PyLineAtTest, EveryCodeUnitHasTheLineCPythonGives) {
  for (size_t unit = 0; unit < std::size(kSampleLines); ++unit) {
    EXPECT_EQ(PyLineAt(kSample, sizeof(kSample), 2, static_cast<int>(2 * unit)),
              kSampleLines[unit])
        << "code unit " << unit;
  }
  for (size_t unit = 0; unit < std::size(kFarLines); ++unit) {
    EXPECT_EQ(PyLineAt(kFar, sizeof(kFar), 1, static_cast<int>(2 * unit)), kFarLines[unit])
        << "code unit " << unit;
  }
}

TEST(PyLineAtTest, OutsideTheTableAndNoLineEntries) {
  // Before the first instruction (a frame not started): the first line.
  EXPECT_EQ(PyLineAt(kSample, sizeof(kSample), 2, -2), 2);
  // Past the table's end, or in a cut table: no line.
  EXPECT_EQ(PyLineAt(kSample, sizeof(kSample), 2, 2 * std::size(kSampleLines)), -1);
  EXPECT_EQ(PyLineAt(kSample, 0, 2, 0), -1);
  // A long-form entry cut inside its varint.
  EXPECT_EQ(PyLineAt(kFar, 30, 1, 2 * 16), -1);
  // Code 15 (no location) for 2 units, then a no-column entry of line +3.
  const uint8_t none[] = {0xf9, 0xe8, 0x06};
  EXPECT_EQ(PyLineAt(none, sizeof(none), 7, 0), -1);
  EXPECT_EQ(PyLineAt(none, sizeof(none), 7, 2), -1);
  EXPECT_EQ(PyLineAt(none, sizeof(none), 7, 4), 10);
}

class CodeTextsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    entries_ = std::make_unique<CodeTexts::Entry[]>(CodeTexts::kSlots);
    texts_.Init(entries_.get());
  }

  CodeTexts::Ref Put(const CodeKey& key, const std::string& qualname,
                     const std::string& filename) {
    CodeTexts::Ref ref;
    EXPECT_TRUE(texts_.Claim(key, &ref));
    CodeTexts::Entry* e = texts_.Text(ref);
    memcpy(e->text, qualname.data(), qualname.size());
    memcpy(e->text + qualname.size(), filename.data(), filename.size());
    e->qualname_size = static_cast<uint16_t>(qualname.size());
    e->filename_size = static_cast<uint16_t>(filename.size());
    texts_.Publish(&ref);
    return ref;
  }

  std::string Read(const CodeTexts::Ref& ref) {
    char q[CodeTexts::kTextRoom];
    char f[CodeTexts::kTextRoom];
    size_t qn = 0;
    size_t fn = 0;
    if (!texts_.Read(ref, q, &qn, f, &fn)) return "(gone)";
    return std::string(q, qn) + "|" + std::string(f, fn);
  }

  std::unique_ptr<CodeTexts::Entry[]> entries_;
  CodeTexts texts_;
};

TEST_F(CodeTextsTest, FindsWhatWasPublished) {
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 12};
  CodeTexts::Ref ref;
  EXPECT_FALSE(texts_.Find(a, &ref));
  CodeTexts::Ref put = Put(a, "Net.forward", "/m/net.py");
  ASSERT_TRUE(texts_.Find(a, &ref));
  EXPECT_EQ(ref.slot, put.slot);
  EXPECT_EQ(ref.seq, put.seq);
  EXPECT_EQ(ref.seq % 2, 0u);
  EXPECT_EQ(Read(ref), "Net.forward|/m/net.py");
}

TEST_F(CodeTextsTest, AReusedAddressIsAnotherCodeObject) {
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 12};
  Put(a, "old", "/a.py");
  CodeTexts::Ref ref;
  // The same address with another name object, file object or first line.
  for (CodeKey other : {CodeKey{a.code, 0x7f0000009000, a.filename, a.firstlineno},
                        CodeKey{a.code, a.qualname, 0x7f0000009000, a.firstlineno},
                        CodeKey{a.code, a.qualname, a.filename, 13}}) {
    EXPECT_FALSE(texts_.Find(other, &ref));
  }
  EXPECT_TRUE(texts_.Find(a, &ref));
}

TEST_F(CodeTextsTest, ATakeOverInvalidatesOldReferences) {
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 12};
  CodeTexts::Ref old_ref = Put(a, "old", "/a.py");
  // Fill every probe of a's home with other keys, then one more: whichever
  // entry is taken over, a reference to its former content reads as gone.
  std::vector<CodeTexts::Ref> refs = {old_ref};
  for (uintptr_t i = 1; refs.size() <= CodeTexts::kProbes; ++i) {
    CodeKey k = {a.code, 0x7f0000002000 + i, a.filename, a.firstlineno};
    refs.push_back(Put(k, "f" + std::to_string(i), "/b.py"));
  }
  int gone = 0;
  for (const CodeTexts::Ref& r : refs) {
    std::string text = Read(r);
    if (text == "(gone)") ++gone;
  }
  EXPECT_EQ(gone, 1);
}

TEST_F(CodeTextsTest, AClaimedEntryIsNotFoundUntilPublished) {
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 12};
  CodeTexts::Ref ref;
  ASSERT_TRUE(texts_.Claim(a, &ref));
  CodeTexts::Ref found;
  EXPECT_FALSE(texts_.Find(a, &found));
  EXPECT_EQ(Read(ref), "(gone)");
  CodeTexts::Entry* e = texts_.Text(ref);
  e->qualname_size = 1;
  e->text[0] = 'f';
  texts_.Publish(&ref);
  EXPECT_TRUE(texts_.Find(a, &found));
  EXPECT_EQ(Read(found), "f|");
  texts_.Clear();
  EXPECT_FALSE(texts_.Find(a, &found));
}

class SampleRingTest : public ::testing::Test {
 protected:
  void SetUp() override { ring_.Init(memory_, sizeof(memory_)); }

  alignas(8) uint8_t memory_[256];
  SampleRing ring_;
};

TEST_F(SampleRingTest, RecordsComeOutInOrderAndWhole) {
  EXPECT_EQ(ring_.Pop(nullptr, 0), 0u);
  const char a[] = "header";
  const char b[] = "frames!";
  ASSERT_TRUE(ring_.Push(a, 6, b, 7));
  ASSERT_TRUE(ring_.Push(b, 7, nullptr, 0));
  char out[64];
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 16u);  // 13 bytes, padded to 8
  EXPECT_EQ(std::string(out, 13), "headerframes!");
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 8u);
  EXPECT_EQ(std::string(out, 7), "frames!");
  EXPECT_EQ(ring_.Pop(out, sizeof(out)), 0u);
}

TEST_F(SampleRingTest, FullRingRefusesAndWrapsAround) {
  uint8_t record[56];
  for (size_t i = 0; i < sizeof(record); ++i) record[i] = static_cast<uint8_t>(i);
  // 64 bytes a record: four fill the 256 bytes.
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(ring_.Push(record, sizeof(record), nullptr, 0)) << i;
  EXPECT_FALSE(ring_.Push(record, 1, nullptr, 0));
  uint8_t out[64];
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 56u);
  // A record of 104 bytes (96 and the header) does not fit the 64 free.
  uint8_t big[96] = {};
  EXPECT_FALSE(ring_.Push(big, sizeof(big), nullptr, 0));
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 56u);
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 56u);
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 56u);
  // Empty, its next record at byte 0 again (256 % 256).
  ASSERT_TRUE(ring_.Push(record, 8, nullptr, 0));  // 16 bytes at 0
  ASSERT_TRUE(ring_.Push(big, sizeof(big), nullptr, 0));  // 104 at 16
  ASSERT_TRUE(ring_.Push(big, sizeof(big), nullptr, 0));  // 104 at 120
  // 32 bytes left at the end: a 40-byte record wraps to the start, which
  // the first record still holds.
  EXPECT_FALSE(ring_.Push(record, 32, nullptr, 0));
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 8u);
  EXPECT_FALSE(ring_.Push(record, 32, nullptr, 0));  // 16 free at the start
  uint8_t wide[104];
  ASSERT_EQ(ring_.Pop(wide, sizeof(wide)), 96u);
  ASSERT_TRUE(ring_.Push(record, 32, nullptr, 0));  // wraps: at byte 0
  ASSERT_EQ(ring_.Pop(wide, sizeof(wide)), 96u);
  ASSERT_EQ(ring_.Pop(out, sizeof(out)), 32u);
  EXPECT_EQ(memcmp(out, record, 32), 0);
  EXPECT_EQ(ring_.Pop(out, sizeof(out)), 0u);
}

TEST_F(SampleRingTest, ARecordLargerThanTheReaderRoomIsDropped) {
  uint8_t record[40] = {};
  ASSERT_TRUE(ring_.Push(record, sizeof(record), nullptr, 0));
  ASSERT_TRUE(ring_.Push(record, 8, nullptr, 0));
  uint8_t out[16];
  EXPECT_EQ(ring_.Pop(out, sizeof(out)), 0u);
  EXPECT_EQ(ring_.Pop(out, sizeof(out)), 8u);
}

}  // namespace
}  // namespace iotap::interpose
