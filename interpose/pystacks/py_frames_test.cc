// The signal sampler's parts that need no interpreter (py_frames.h): the
// location table decoder against what CPython 3.11 itself says of real code
// objects, the names' table and its checks, and the samples' ring.

#include "interpose/pystacks/py_frames.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 0x7f0000004000, 12};
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
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 0x7f0000004000, 12};
  Put(a, "old", "/a.py");
  CodeTexts::Ref ref;
  // The same address with another name object, file object or first line.
  for (CodeKey other :
       {CodeKey{a.code, 0x7f0000009000, a.filename, a.linetable, a.firstlineno},
        CodeKey{a.code, a.qualname, 0x7f0000009000, a.linetable, a.firstlineno},
        CodeKey{a.code, a.qualname, a.filename, 0x7f0000009000, a.firstlineno},
        CodeKey{a.code, a.qualname, a.filename, a.linetable, 13}}) {
    EXPECT_FALSE(texts_.Find(other, &ref));
  }
  EXPECT_TRUE(texts_.Find(a, &ref));
}

TEST_F(CodeTextsTest, ATakeOverInvalidatesOldReferences) {
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 0x7f0000004000, 12};
  CodeTexts::Ref old_ref = Put(a, "old", "/a.py");
  // Fill every probe of a's home with other keys, then one more: whichever
  // entry is taken over, a reference to its former content reads as gone.
  std::vector<CodeTexts::Ref> refs = {old_ref};
  for (uintptr_t i = 1; refs.size() <= CodeTexts::kProbes; ++i) {
    CodeKey k = {a.code, 0x7f0000002000 + i, a.filename, a.linetable, a.firstlineno};
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
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 0x7f0000004000, 12};
  CodeTexts::Ref ref;
  EXPECT_FALSE(texts_.Writing());
  ASSERT_TRUE(texts_.Claim(a, &ref));
  EXPECT_TRUE(texts_.Writing());
  CodeTexts::Ref found;
  EXPECT_FALSE(texts_.Find(a, &found));
  EXPECT_EQ(Read(ref), "(gone)");
  CodeTexts::Entry* e = texts_.Text(ref);
  e->qualname_size = 1;
  e->text[0] = 'f';
  texts_.Publish(&ref);
  EXPECT_FALSE(texts_.Writing());
  EXPECT_TRUE(texts_.Find(a, &found));
  EXPECT_EQ(Read(found), "f|");
  texts_.Clear();
  EXPECT_FALSE(texts_.Find(a, &found));
  // A claim whose writer is gone (a fork child's copy of a parent's handler
  // mid-write): the entry cannot be claimed again until the table is
  // cleared, which ends the claim.
  ASSERT_TRUE(texts_.Claim(a, &ref));  // the home slot
  for (uintptr_t i = 1; i < CodeTexts::kProbes; ++i) {  // the other probes
    Put({a.code, a.qualname + i, a.filename, a.linetable, a.firstlineno}, "g", "/b.py");
  }
  CodeTexts::Ref again;
  ASSERT_EQ(a.code >> 6 & (CodeTexts::kProbes - 1), 0u);  // a's overflow slot is its own
  EXPECT_FALSE(texts_.Claim(a, &again));
  EXPECT_TRUE(texts_.Writing());
  texts_.Clear();
  EXPECT_FALSE(texts_.Writing());
  EXPECT_TRUE(texts_.Claim(a, &again));
  texts_.Publish(&again);
}

TEST_F(CodeTextsTest, ALineIsKeptPerOffsetAndNeverOutlivesItsEntry) {
  CodeKey a = {0x7f0000001000, 0x7f0000002000, 0x7f0000003000, 0x7f0000004000, 2};
  CodeTexts::Ref ref = Put(a, "f", "/a.py");
  CodeTexts::Entry* e = texts_.Text(ref);
  memcpy(e->table, kSample, sizeof(kSample));
  e->table_size = sizeof(kSample);
  for (int pass = 0; pass < 2; ++pass) {  // computed, then kept
    EXPECT_EQ(texts_.LineAt(ref, 2, 2 * 12), 5);
    EXPECT_EQ(texts_.LineAt(ref, 2, 2 * 40), 10);
  }
  // Taken over by another code object with another table: the line kept
  // for the old one is not the new one's.
  for (uintptr_t i = 1; i <= CodeTexts::kProbes; ++i) {
    Put({a.code, a.qualname + i, a.filename, a.linetable, a.firstlineno}, "g", "/b.py");
  }
  EXPECT_EQ(texts_.LineAt(ref, 2, 2 * 40), -2);
  CodeTexts::Ref now;
  CodeKey b = {a.code, a.qualname + CodeTexts::kProbes, a.filename, a.linetable, a.firstlineno};
  ASSERT_EQ(a.code >> 6 & (CodeTexts::kProbes - 1), 0u);  // so b took a's entry
  ASSERT_TRUE(texts_.Find(b, &now));
  CodeTexts::Entry* taken = texts_.Text(now);
  memcpy(taken->table, kFar, sizeof(kFar));
  taken->table_size = sizeof(kFar);
  // The offset whose line 10 was kept for the old table is past kFar's end.
  EXPECT_EQ(texts_.LineAt(now, 1, 2 * 40), -1);
  // kFar's unit 16 is line 305 (first line 1).
  EXPECT_EQ(texts_.LineAt(now, 1, 2 * 16), 305);
  EXPECT_EQ(texts_.LineAt(now, 1, 2 * 16), 305);
  // No table kept: the caller reads it.
  taken->table_size = CodeTexts::kTableNotKept;
  EXPECT_EQ(texts_.LineAt(now, 1, 0), -2);
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

// A CPython 3.11 thread in miniature, laid out as PyLayoutFor says: a
// thread state, its _PyCFrame, one data-stack chunk of frames, code objects
// with str names and bytes location tables, and a page that is not mapped.
class WalkTest : public ::testing::Test {
 protected:
  static constexpr unsigned long kVersion = 0x030B02F0;  // 3.11.2
  static constexpr int kChunkFrames = 200;

  void SetUp() override {
    layout_ = PyLayoutFor(kVersion);
    ASSERT_NE(layout_, nullptr);
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    arena_bytes_ = 64 * page_;
    void* m = mmap(nullptr, arena_bytes_ + page_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    arena_ = static_cast<uint8_t*>(m);
    // The page after the arena is left unmapped: a pointer into it faults.
    ASSERT_EQ(munmap(arena_ + arena_bytes_, page_), 0);
    unmapped_ = reinterpret_cast<uintptr_t>(arena_ + arena_bytes_) + 64;
    entries_ = std::make_unique<CodeTexts::Entry[]>(CodeTexts::kSlots);
    texts_.Init(entries_.get());
    tstate_ = Alloc(512);
    cframe_ = Alloc(16);
    chunk_ = Alloc(24 + kChunkFrames * 80);
    Put<uintptr_t>(tstate_ + layout_->tstate_cframe, cframe_);
    Put<uintptr_t>(tstate_ + layout_->tstate_datastack_chunk, chunk_);
    Put<uint64_t>(chunk_ + layout_->chunk_size, 24 + kChunkFrames * 80);
    reads_ = 0;
    refuse_ = false;
  }
  void TearDown() override { munmap(arena_, arena_bytes_); }

  uintptr_t Alloc(size_t n) {
    uintptr_t at = reinterpret_cast<uintptr_t>(arena_) + used_;
    used_ += (n + 15) & ~size_t{15};
    EXPECT_LE(used_, arena_bytes_);
    return at;
  }
  template <typename T>
  static void Put(uintptr_t at, T value) {
    memcpy(reinterpret_cast<void*>(at), &value, sizeof(T));
  }

  uintptr_t Str(const std::string& text) {
    uintptr_t s = Alloc(layout_->str_ascii_data + text.size() + 1);
    Put<const void*>(s + layout_->object_type, &unicode_type_);
    Put<int64_t>(s + layout_->str_length, static_cast<int64_t>(text.size()));
    Put<uint32_t>(s + layout_->str_state, layout_->state_compact_bit | layout_->state_ascii_bit);
    memcpy(reinterpret_cast<void*>(s + layout_->str_ascii_data), text.data(), text.size());
    return s;
  }
  uintptr_t Bytes(const uint8_t* data, size_t n) {
    uintptr_t b = Alloc(layout_->bytes_data + n);
    Put<int64_t>(b + layout_->bytes_size, static_cast<int64_t>(n));
    memcpy(reinterpret_cast<void*>(b + layout_->bytes_data), data, n);
    return b;
  }
  uintptr_t Code(const std::string& qualname, const std::string& file, int first,
                 const uint8_t* table, size_t table_size) {
    uintptr_t c = Alloc(256);
    Put<const void*>(c + layout_->object_type, &code_type_);
    Put<uintptr_t>(c + layout_->code_qualname, Str(qualname));
    Put<uintptr_t>(c + layout_->code_filename, Str(file));
    Put<uintptr_t>(c + layout_->code_linetable, Bytes(table, table_size));
    Put<int32_t>(c + layout_->code_firstlineno, first);
    Put<int32_t>(c + layout_->code_firsttraceable, 0);
    return c;
  }
  // Frame `index` of the chunk (or `at`, if given), running code unit
  // `unit` of `code`, called from `previous`.
  uintptr_t Frame(int index, uintptr_t code, int unit, uintptr_t previous, uintptr_t at = 0) {
    uintptr_t f = at != 0 ? at : chunk_ + layout_->chunk_data + 80 * index;
    Put<uintptr_t>(f + layout_->frame_code, code);
    Put<uintptr_t>(f + layout_->frame_previous, previous);
    Put<uintptr_t>(f + layout_->frame_prev_instr, code + layout_->code_code + 2 * unit);
    Put<uint8_t>(f + layout_->frame_owner, at != 0 ? layout_->owned_by_generator : 0);
    return f;
  }
  void SetTop(uintptr_t frame) { Put<uintptr_t>(cframe_ + layout_->cframe_current_frame, frame); }

  PyWalk Walk() { return {layout_, &unicode_type_, &code_type_, &Counted}; }
  int Run(RawFrame* frames, bool* cut) {
    return WalkPyFrames(Walk(), reinterpret_cast<void*>(tstate_), &texts_, frames, cut);
  }
  std::string Text(const RawFrame& f) {
    char q[CodeTexts::kTextRoom];
    char n[CodeTexts::kTextRoom];
    size_t qn = 0;
    size_t nn = 0;
    if (!texts_.Read(f.text, q, &qn, n, &nn)) return "(gone)";
    return std::string(q, qn) + "|" + std::string(n, nn) + ":" + std::to_string(f.line);
  }

  static bool Counted(pid_t pid, const ReadPiece* pieces, int count) {
    ++reads_;
    return !refuse_ && ReadOwnMemory(pid, pieces, count);
  }
  static inline int reads_ = 0;
  static inline bool refuse_ = false;

  const PyLayout* layout_ = nullptr;
  size_t page_ = 0;
  size_t arena_bytes_ = 0;
  size_t used_ = 0;
  uint8_t* arena_ = nullptr;
  uintptr_t unmapped_ = 0;
  uintptr_t tstate_ = 0;
  uintptr_t cframe_ = 0;
  uintptr_t chunk_ = 0;
  char unicode_type_ = 0;  // stand-ins for &PyUnicode_Type, &PyCode_Type
  char code_type_ = 0;
  std::unique_ptr<CodeTexts::Entry[]> entries_;
  CodeTexts texts_;
};

TEST_F(WalkTest, NamesAndLinesOfEveryFrameInnermostFirst) {
  uintptr_t main = Code("<module>", "/job/train.py", 1, kFar, sizeof(kFar));
  uintptr_t step = Code("Loader.step", "/job/data.py", 2, kSample, sizeof(kSample));
  uintptr_t f0 = Frame(0, main, 16, 0);              // line 305
  uintptr_t f1 = Frame(1, step, 12, f0);             // line 5
  SetTop(Frame(2, step, 40, f1));                    // line 10
  RawFrame frames[kMaxPyDepth];
  bool cut = true;
  ASSERT_EQ(Run(frames, &cut), 3);
  EXPECT_FALSE(cut);
  EXPECT_EQ(Text(frames[0]), "Loader.step|/job/data.py:10");
  EXPECT_EQ(Text(frames[1]), "Loader.step|/job/data.py:5");
  EXPECT_EQ(Text(frames[2]), "<module>|/job/train.py:305");
  EXPECT_EQ(frames[0].firstlineno, 2);
  EXPECT_EQ(frames[2].firstlineno, 1);
  // Once the names and tables are kept, a walk reads the interpreter's
  // memory through the reader once for the code objects of up to
  // kMaxReadPieces frames: the thread state, what it links and the frames
  // of its data-stack chunks need no reader.
  reads_ = 0;
  ASSERT_EQ(Run(frames, &cut), 3);
  EXPECT_EQ(reads_, 1);
  EXPECT_EQ(Text(frames[0]), "Loader.step|/job/data.py:10");
}

TEST_F(WalkTest, DeepStacksAreReadSixteenCodeObjectsAtATimeAndCut) {
  uintptr_t main = Code("<module>", "/job/train.py", 1, kFar, sizeof(kFar));
  uintptr_t rec = Code("walk", "/job/tree.py", 2, kSample, sizeof(kSample));
  uintptr_t f = Frame(0, main, 0, 0);
  for (int i = 1; i < 40; ++i) f = Frame(i, rec, 40, f);
  SetTop(f);
  RawFrame frames[kMaxPyDepth];
  bool cut = true;
  ASSERT_EQ(Run(frames, &cut), 40);
  EXPECT_FALSE(cut);
  EXPECT_EQ(Text(frames[0]), "walk|/job/tree.py:10");
  EXPECT_EQ(Text(frames[38]), "walk|/job/tree.py:10");
  EXPECT_EQ(Text(frames[39]), "<module>|/job/train.py:1");
  reads_ = 0;
  ASSERT_EQ(Run(frames, &cut), 40);
  EXPECT_EQ(reads_, 3);  // 16 + 16 + 8 code objects
  // Deeper than kMaxPyDepth: the innermost kMaxPyDepth frames, and cut.
  for (int i = 40; i < kMaxPyDepth + 10; ++i) f = Frame(i, rec, 40, f);
  SetTop(f);
  ASSERT_EQ(Run(frames, &cut), kMaxPyDepth);
  EXPECT_TRUE(cut);
  EXPECT_EQ(Text(frames[kMaxPyDepth - 1]), "walk|/job/tree.py:10");
}

TEST_F(WalkTest, AFrameOutsideTheDataStackIsReadThroughTheReader) {
  uintptr_t main = Code("<module>", "/job/train.py", 1, kFar, sizeof(kFar));
  uintptr_t gen = Code("batches", "/job/data.py", 2, kSample, sizeof(kSample));
  uintptr_t f0 = Frame(0, main, 0, 0);
  // A generator's frame lives in the generator object, not the chunk.
  SetTop(Frame(-1, gen, 6, f0, Alloc(80)));
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  ASSERT_EQ(Run(frames, &cut), 2);
  EXPECT_EQ(Text(frames[0]), "batches|/job/data.py:4");
  EXPECT_EQ(Text(frames[1]), "<module>|/job/train.py:1");
  reads_ = 0;
  ASSERT_EQ(Run(frames, &cut), 2);
  EXPECT_EQ(reads_, 1 + 1);  // and the generator's frame
}

TEST_F(WalkTest, APointerCaughtMidUpdateIsNeverFollowed) {
  uintptr_t main = Code("<module>", "/job/train.py", 1, kFar, sizeof(kFar));
  uintptr_t f0 = Frame(0, main, 0, 0);
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  // The top frame pointer is uninitialised stack: unmapped memory ...
  SetTop(unmapped_);
  EXPECT_EQ(Run(frames, &cut), -2);
  // ... a "frame" whose code pointer is unmapped ...
  uintptr_t stale = Alloc(80);
  Put<uintptr_t>(stale + layout_->frame_code, unmapped_);
  Put<uintptr_t>(stale + layout_->frame_previous, f0);
  SetTop(stale);
  EXPECT_EQ(Run(frames, &cut), -2);
  // ... or mapped but not a code object (a freed one, another object).
  Put<uintptr_t>(stale + layout_->frame_code, Str("not code"));
  EXPECT_EQ(Run(frames, &cut), -2);
  // A frame in the chunk whose previous frame is unmapped: nothing kept.
  SetTop(Frame(1, main, 0, unmapped_));
  EXPECT_EQ(Run(frames, &cut), -2);
  // The same stack, whole again, reads as it should.
  SetTop(Frame(1, main, 0, f0));
  EXPECT_EQ(Run(frames, &cut), 2);
}

TEST_F(WalkTest, ARefusingReaderGivesNoStack) {
  uintptr_t main = Code("<module>", "/job/train.py", 1, kFar, sizeof(kFar));
  SetTop(Frame(0, main, 0, 0));
  refuse_ = true;
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  EXPECT_EQ(Run(frames, &cut), -2);
  refuse_ = false;
  EXPECT_EQ(Run(frames, &cut), 1);
}

TEST_F(WalkTest, UnreadableNamesAndLongTables) {
  // A location table longer than an entry keeps: read at each sample.
  std::vector<uint8_t> table(CodeTexts::kTableRoom + 40, 0x80);  // code 0: no line change
  table.back() = 0xd8;                                            // code 11: line + 1
  uintptr_t code = Code("long", "/job/long.py", 7, table.data(), table.size());
  // Its file name object is not mapped.
  Put<uintptr_t>(code + layout_->code_filename, unmapped_);
  SetTop(Frame(0, code, static_cast<int>(table.size()) - 1, 0));
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  ASSERT_EQ(Run(frames, &cut), 1);
  EXPECT_EQ(Text(frames[0]), "long|?:8");
  reads_ = 0;
  ASSERT_EQ(Run(frames, &cut), 1);
  EXPECT_EQ(reads_, 1 + 2);  // and the table's size, and its bytes
}

TEST_F(WalkTest, NamesOfEveryKindAndAtTheEndOfAMapping) {
  // A compact str of 2-byte code points ("café→", no UTF-8 copy), as UTF-8.
  const uint16_t wide[] = {'c', 'a', 'f', 0xE9, 0x2192};
  uintptr_t name = Alloc(layout_->str_compact_data + sizeof(wide) + 2);
  Put<const void*>(name + layout_->object_type, &unicode_type_);
  Put<int64_t>(name + layout_->str_length, 5);
  Put<uint32_t>(name + layout_->str_state,
                layout_->state_compact_bit | (2u << layout_->state_kind_shift));
  memcpy(reinterpret_cast<void*>(name + layout_->str_compact_data), wide, sizeof(wide));
  // An ASCII file name whose last byte is the last of the mapping.
  const std::string file = "/job/x.py";
  uintptr_t end = reinterpret_cast<uintptr_t>(arena_ + arena_bytes_);
  uintptr_t tail = end - (layout_->str_ascii_data + file.size());
  Put<const void*>(tail + layout_->object_type, &unicode_type_);
  Put<int64_t>(tail + layout_->str_length, static_cast<int64_t>(file.size()));
  Put<uint32_t>(tail + layout_->str_state, layout_->state_compact_bit | layout_->state_ascii_bit);
  memcpy(reinterpret_cast<void*>(tail + layout_->str_ascii_data), file.data(), file.size());
  uintptr_t code = Code("unused", "unused", 3, kSample, sizeof(kSample));
  Put<uintptr_t>(code + layout_->code_qualname, name);
  Put<uintptr_t>(code + layout_->code_filename, tail);
  SetTop(Frame(0, code, 0, 0));
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  ASSERT_EQ(Run(frames, &cut), 1);
  EXPECT_EQ(Text(frames[0]), "caf\xc3\xa9\xe2\x86\x92|/job/x.py:3");
}

TEST_F(WalkTest, NoFrameNoStack) {
  RawFrame frames[kMaxPyDepth];
  bool cut = false;
  SetTop(0);
  EXPECT_EQ(Run(frames, &cut), 0);
  Put<uintptr_t>(tstate_ + layout_->tstate_cframe, 0);
  EXPECT_EQ(Run(frames, &cut), 0);
  EXPECT_EQ(WalkPyFrames(Walk(), nullptr, &texts_, frames, &cut), 0);
}

}  // namespace
}  // namespace iotap::interpose
