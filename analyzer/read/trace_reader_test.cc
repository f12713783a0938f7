#include "analyzer/read/trace_reader.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"
#include "zstd.h"

namespace iotap::analyzer {
namespace {

// Builds trace files packet by packet, one zstd frame per call of Frame().
class TraceBuilder {
 public:
  TraceBuilder& Add(const Packet& packet) { return AddBytes(packet.SerializeAsString()); }
  // A packet as given bytes (hand-made wire forms).
  TraceBuilder& AddBytes(const std::string& body) {
    pending_ += '\x0a';
    uint64_t n = body.size();
    while (n >= 0x80) {
      pending_ += static_cast<char>((n & 0x7f) | 0x80);
      n >>= 7;
    }
    pending_ += static_cast<char>(n);
    pending_ += body;
    ++packets_;
    return *this;
  }
  TraceBuilder& Frame() {
    std::string out(ZSTD_compressBound(pending_.size()), '\0');
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    size_t n = ZSTD_compress2(c, out.data(), out.size(), pending_.data(), pending_.size());
    ZSTD_freeCCtx(c);
    frame_starts_.push_back(bytes_.size());
    bytes_.append(out.data(), n);
    pending_.clear();
    return *this;
  }
  const std::string& bytes() const { return bytes_; }
  const std::vector<size_t>& frame_starts() const { return frame_starts_; }

 private:
  std::string pending_;
  std::string bytes_;
  std::vector<size_t> frame_starts_;
  int packets_ = 0;
};

Packet Header(int pid) {
  Packet p;
  p.mutable_process()->set_pid(pid);
  p.mutable_process()->set_hostname("host");
  return p;
}

Packet Strings(uint32_t id, const std::string& value) {
  Packet p;
  InternedString* s = p.mutable_strings()->add_entry();
  s->set_id(id);
  s->set_value(value);
  s->set_kind(InternedString::KIND_PATH);
  return p;
}

// A chunk of `n` reads of 4096 bytes, sequential from offset 0 of file 1.
Packet Reads(int n, uint64_t first_seq) {
  Packet p;
  EventChunk* c = p.mutable_events();
  c->set_tid(7);
  c->set_base_time_ns(1000000);
  c->set_time_unit_ns(10);
  c->set_first_seq(first_seq);
  for (int i = 0; i < n; ++i) {
    c->add_op(OP_READ);
    c->add_start_gap(i == 0 ? 0 : 5);
    c->add_duration(20);
    c->add_file(1);
    c->add_offset_delta(i == 0 ? 0 : 4096);
    c->add_requested(4096);
    c->add_result(4096);
    c->add_flags(FLAG_HAS_OFFSET);
  }
  return p;
}

class Collector : public TraceVisitor {
 public:
  void OnProcess(const ProcessTrace& p) override { ++processes; }
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    for (const Event& e : b.events) events.push_back(e);
    ++chunks;
  }
  void OnPacket(const ProcessTrace& p, const Packet& packet) override { ++other; }
  int processes = 0;
  int chunks = 0;
  int other = 0;
  std::vector<Event> events;
};

// Wire bytes: a varint, and a length-delimited field.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Field(uint32_t field, const std::string& bytes) {
  return Varint(field << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string VarintField(uint32_t field, uint64_t v) { return Varint(field << 3) + Varint(v); }

class NameCollector : public TraceVisitor {
 public:
  void OnFileEnd(const ProcessTrace& p) override {
    for (uint32_t id = 0; id < 40; ++id) {
      const InternedName& n = p.Name(id);
      names.push_back({std::string(n.value), n.kind, n.defined});
    }
  }
  // Copies: a name's text lives as long as its ProcessTrace.
  struct Name {
    std::string value;
    InternedString::Kind kind;
    bool defined;
  };
  std::vector<Name> names;
};

TEST(TraceReaderTest, StringTablesReadFromTheirBytesAsLibprotobufReadsThem) {
  // Hand-made string tables (StringTable field 1 entries; InternedString
  // id = 1, value = 2, kind = 3): the usual form, then fields out of order,
  // repeated (the last wins), absent, an unknown kind, id 0, an unknown
  // field (the reader leaves that table to libprotobuf), an id too far
  // ahead, an empty table.
  std::vector<std::string> tables = {
      Field(1, VarintField(1, 1) + Field(2, "/data/a") + VarintField(3, 1)) +
          Field(1, VarintField(1, 2) + Field(2, "pipe:[7]") + VarintField(3, 2)),
      Field(1, VarintField(3, 4) + Field(2, "/dev/nvidia0") + VarintField(1, 3)),
      Field(1, VarintField(1, 4) + Field(2, "/old") + Field(2, "/new") + VarintField(3, 1) +
                   VarintField(1, 5)),
      Field(1, VarintField(1, 6)) + Field(1, VarintField(1, 7) + Field(2, "odd") +
                                             VarintField(3, 42)),
      Field(1, VarintField(1, 0) + Field(2, "/never")),
      Field(1, VarintField(1, 8) + Field(2, "/data/b") + VarintField(9, 1)) +
          Field(1, VarintField(1, 9) + Field(2, "/data/c")),
      Field(1, VarintField(1, 1u << 30) + Field(2, "/far")),
      "",
      Field(1, VarintField(1, 10) + Field(2, std::string(300, 'x')) + VarintField(3, 1)),
  };
  TraceBuilder b;
  b.Add(Header(1));
  ProcessTrace expected("expected");
  for (const std::string& table : tables) {
    b.AddBytes(Field(3, table));
    StringTable parsed;
    ASSERT_TRUE(parsed.ParseFromString(table));
    expected.AddStrings(parsed);
  }
  b.Frame();
  NameCollector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadTraceBytes("t", b.bytes(), &c, &issues).ok());
  EXPECT_TRUE(issues.empty());
  ASSERT_EQ(c.names.size(), 40u);
  for (uint32_t id = 0; id < 40; ++id) {
    SCOPED_TRACE(id);
    EXPECT_EQ(c.names[id].value, expected.Name(id).value);
    EXPECT_EQ(c.names[id].kind, expected.Name(id).kind);
    EXPECT_EQ(c.names[id].defined, expected.Name(id).defined);
  }
  // Spot checks of what libprotobuf made of them.
  EXPECT_EQ(c.names[3].value, "/dev/nvidia0");
  EXPECT_EQ(c.names[3].kind, InternedString::KIND_DEVICE);
  EXPECT_EQ(c.names[5].value, "/new");
  EXPECT_FALSE(c.names[4].defined);
  EXPECT_EQ(static_cast<int>(c.names[7].kind), 42);
  EXPECT_EQ(c.names[8].value, "/data/b");
  EXPECT_EQ(c.names[10].value.size(), 300u);
}

TEST(TraceReaderTest, DecodesEveryFieldExactly) {
  TraceBuilder b;
  b.Add(Header(42)).Add(Strings(1, "/data/x")).Add(Reads(3, 100)).Frame();
  Collector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadTraceBytes("t", b.bytes(), &c, &issues).ok());
  EXPECT_TRUE(issues.empty());
  ASSERT_EQ(c.events.size(), 3u);
  // start = previous end + gap; end = start + duration; units of 10 ns.
  EXPECT_EQ(c.events[0].start_ns, 1000000);
  EXPECT_EQ(c.events[0].end_ns, 1000200);
  EXPECT_EQ(c.events[1].start_ns, 1000250);
  EXPECT_EQ(c.events[1].end_ns, 1000450);
  EXPECT_EQ(c.events[2].start_ns, 1000500);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.events[i].offset, 4096 * i);
    EXPECT_EQ(c.events[i].seq, 100u + i);
    EXPECT_EQ(c.events[i].tid, 7u);
    EXPECT_EQ(c.events[i].result, 4096);
  }
}

TEST(TraceReaderTest, RejectsColumnsOfDifferentLengths) {
  Packet bad = Reads(3, 0);
  bad.mutable_events()->mutable_duration()->RemoveLast();
  TraceBuilder b;
  b.Add(Header(1)).Add(bad).Add(Reads(2, 3)).Frame();
  Collector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadTraceBytes("t", b.bytes(), &c, &issues).ok());
  EXPECT_EQ(c.events.size(), 2u);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_NE(issues[0].message.find("different lengths"), std::string::npos);
}

TEST(TraceReaderTest, NotATraceIsAnErrorNamingTheFile) {
  Collector c;
  std::vector<ReadIssue> issues;
  absl::Status s = ReadTraceBytes("notes.txt", "hello, world", &c, &issues);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string(s.message()).find("notes.txt"), std::string::npos);
  EXPECT_FALSE(ReadTraceBytes("empty", "", &c, &issues).ok());
}

TEST(TraceReaderTest, DamagedFrameIsSkippedAndReadingGoesOn) {
  TraceBuilder b;
  b.Add(Header(1)).Add(Strings(1, "/x")).Frame();
  b.Add(Reads(10, 0)).Frame();
  b.Add(Reads(5, 10)).Frame();
  std::string bytes = b.bytes();
  size_t second = b.frame_starts()[1];
  size_t third = b.frame_starts()[2];
  bytes[second + (third - second) / 2] ^= 0x5a;  // inside the second frame
  Collector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadTraceBytes("t", bytes, &c, &issues).ok());
  ASSERT_EQ(c.events.size(), 5u);
  EXPECT_EQ(c.events[0].seq, 10u);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].offset, second);
  EXPECT_EQ(issues[0].bytes_skipped, third - second);
}

TEST(TraceReaderTest, GarbageBetweenFramesIsSkippedToTheNextFrame) {
  TraceBuilder first, second;
  first.Add(Header(1)).Add(Reads(4, 0)).Frame();
  second.Add(Reads(6, 4)).Frame();
  std::string bytes = first.bytes() + std::string(1000, 'G') + second.bytes();
  Collector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(ReadTraceBytes("t", bytes, &c, &issues).ok());
  EXPECT_EQ(c.events.size(), 10u);
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].offset, first.bytes().size());
  EXPECT_EQ(issues[0].bytes_skipped, 1000u);
}

TEST(TraceReaderTest, CutAtEveryByteKeepsEveryCompleteFrameBeforeTheCut) {
  TraceBuilder b;
  b.Add(Header(1)).Add(Strings(1, "/x")).Frame();
  for (int f = 0; f < 6; ++f) b.Add(Reads(50, f * 50)).Frame();
  const std::string& all = b.bytes();
  const std::vector<size_t>& starts = b.frame_starts();
  for (size_t cut = 1; cut <= all.size(); ++cut) {
    Collector c;
    std::vector<ReadIssue> issues;
    absl::Status s = ReadTraceBytes("t", all.substr(0, cut), &c, &issues);
    // Frames wholly before the cut: the header frame, then 50 events each.
    size_t complete = 0;
    for (size_t i = 0; i < starts.size(); ++i) {
      size_t end = i + 1 < starts.size() ? starts[i + 1] : all.size();
      if (end <= cut) complete = i + 1;
    }
    if (complete == 0) {
      // The header's frame is cut: some packets may be salvaged, or none.
      EXPECT_TRUE(c.events.empty());
      continue;
    }
    ASSERT_TRUE(s.ok()) << "cut at " << cut << ": " << s;
    // Every event of a complete frame, in order, and nothing invented.
    ASSERT_GE(c.events.size(), (complete - 1) * 50) << "cut at " << cut;
    ASSERT_LE(c.events.size(), 300u);
    for (size_t i = 0; i < c.events.size(); ++i) ASSERT_EQ(c.events[i].seq, i);
    bool at_boundary = cut == all.size() || std::count(starts.begin(), starts.end(), cut) == 1;
    EXPECT_EQ(issues.empty(), at_boundary) << "cut at " << cut;
  }
}

// TraceFollower: a trace file read while it grows, frame by frame and cut
// anywhere, as `iotap top` reads the files of a running job.

constexpr int64_t kT0 = 1'700'000'000'000'000'000;

// Counts what it is given, and fails the test on any event seen twice.
struct OnceCollector : public TraceVisitor {
  void OnProcess(const ProcessTrace& p) override { ++processes; }
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    for (const Event& e : b.events) {
      EXPECT_TRUE(seen.insert({e.tid, e.seq}).second) << "event " << e.seq << " read twice";
    }
    events += b.size();
  }
  void OnFileEnd(const ProcessTrace& p) override { ++file_ends; }
  std::set<std::pair<uint32_t, uint64_t>> seen;
  uint64_t events = 0;
  int processes = 0;
  int file_ends = 0;
};

// A process of `n` reads on two threads.
SyntheticProcess ManyFrames(int n = 1000) {
  SyntheticProcess p(42, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  uint32_t f = p.Path("/data/a.bin");
  for (int i = 0; i < n; ++i) {
    int64_t t = kT0 + i * 1000;
    p.Read(OP_PREAD, t, t + 500, f, i * 4096, 4096, i % 2 == 0 ? 42 : 43);
  }
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 2'000'000);
  return p;
}

class TraceFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("iotap-follow-" + std::to_string(::getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".iotap"))
                .string();
    std::remove(path_.c_str());
  }
  void TearDown() override { std::remove(path_.c_str()); }
  void Append(const std::string& bytes) {
    std::FILE* f = std::fopen(path_.c_str(), "ab");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
    std::fclose(f);
  }
  std::string path_;
};

// The events of the complete frames among the first `n` bytes of `bytes`.
uint64_t EventsOfCompleteFrames(const std::string& bytes, size_t n) {
  size_t end = 0;
  for (;;) {
    size_t size = ZSTD_findFrameCompressedSize(bytes.data() + end, n - end);
    if (ZSTD_isError(size)) break;
    end += size;
  }
  if (end == 0) return 0;
  OnceCollector c;
  std::vector<ReadIssue> issues;
  EXPECT_TRUE(ReadTraceBytes("prefix", bytes.substr(0, end), &c, &issues).ok());
  EXPECT_TRUE(issues.empty());
  return c.events;
}

TEST_F(TraceFollowerTest, GrowingFileCutAnywhereYieldsEachCompleteFrameOnce) {
  const SyntheticProcess p = ManyFrames();
  const std::string bytes = p.Bytes(/*events_per_frame=*/50);
  TraceFollower follower(path_);
  OnceCollector c;
  std::vector<ReadIssue> issues;
  Append("");
  ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());  // nothing written yet
  EXPECT_FALSE(follower.started());
  size_t written = 0;
  int reads = 0;
  while (written < bytes.size()) {
    // Pieces of 1 to 61 bytes: cuts inside frame headers, frames and varints.
    size_t piece = std::min(bytes.size() - written, size_t{1} + (written * 7919) % 61);
    Append(bytes.substr(written, piece));
    written += piece;
    ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());
    ++reads;
    ASSERT_EQ(c.events, EventsOfCompleteFrames(bytes, written)) << "after " << written << " bytes";
    if (written < bytes.size()) {
      EXPECT_FALSE(follower.ended());
    }
  }
  size_t frames = 0;
  for (size_t at = 0; at < bytes.size(); ++frames) {
    at += ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
  }
  EXPECT_GE(frames, 20u);                          // 1000 events, 50 a frame
  EXPECT_GT(reads, 2 * static_cast<int>(frames));  // most frames arrived in pieces
  EXPECT_TRUE(issues.empty()) << issues.front().ToString();
  EXPECT_EQ(c.events, 1000u);
  EXPECT_EQ(c.processes, 1);
  EXPECT_EQ(follower.offset(), bytes.size());
  EXPECT_TRUE(follower.ended());
  EXPECT_EQ(follower.process().pid(), 42);
  EXPECT_EQ(c.file_ends, 0);
  ASSERT_TRUE(follower.Finish(&c, &issues).ok());
  EXPECT_EQ(c.file_ends, 1);
  EXPECT_EQ(c.events, 1000u);
  // Nothing is read after Finish.
  Append(bytes);
  ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());
  EXPECT_EQ(c.events, 1000u);
}

// A writer killed inside a frame: following waits for the frame; Finish
// salvages its complete packets, as ReadTraceFile does for the same file.
// (Frames of 20000 events span several zstd blocks, so a cut one still holds
// complete packets.)
TEST_F(TraceFollowerTest, FinishSalvagesACutLastFrameAsAWholeReadDoes) {
  const std::string bytes = ManyFrames(60000).Bytes(/*events_per_frame=*/20000);
  const size_t cut = bytes.size() - 40;
  Append(bytes.substr(0, cut));
  TraceFollower follower(path_);
  OnceCollector c;
  std::vector<ReadIssue> issues;
  ASSERT_TRUE(follower.ReadNew(&c, &issues).ok());
  EXPECT_EQ(c.events, EventsOfCompleteFrames(bytes, cut));
  EXPECT_TRUE(issues.empty());
  ASSERT_TRUE(follower.Finish(&c, &issues).ok());
  OnceCollector whole;
  std::vector<ReadIssue> whole_issues;
  ASSERT_TRUE(ReadTraceFile(path_, &whole, &whole_issues).ok());
  EXPECT_EQ(c.events, whole.events);
  EXPECT_GT(c.events, EventsOfCompleteFrames(bytes, cut));
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_TRUE(issues[0].truncated);
  EXPECT_EQ(issues[0].ToString(), whole_issues[0].ToString());
}

TEST_F(TraceFollowerTest, AFileThatIsNoTraceIsAnError) {
  Append("#!/bin/sh\n");
  TraceFollower follower(path_);
  OnceCollector c;
  std::vector<ReadIssue> issues;
  absl::Status s = follower.ReadNew(&c, &issues);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not an iotap trace"), std::string::npos) << s;
}

TEST_F(TraceFollowerTest, AMissingFileIsAnErrorNamingIt) {
  TraceFollower follower(path_);
  OnceCollector c;
  std::vector<ReadIssue> issues;
  absl::Status s = follower.ReadNew(&c, &issues);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  EXPECT_NE(s.message().find(path_), std::string::npos);
}

}  // namespace
}  // namespace iotap::analyzer
