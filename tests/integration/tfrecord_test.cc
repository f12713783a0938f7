// TFRecord ground truth: files written by others (the shared fixtures, and
// 10,000 records from @roboflow/tfrecords) read by a buffered sequential
// reader, a per-record reader and index-driven random access, through POSIX
// and STDIO. The records iotap reports, with their offsets and lengths, equal
// the file's record table parsed here, exactly; each record names the read
// that completed it and how many reads delivered it; compressed files are
// reported as such.

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"
#include "tests/integration/tfrecord_fixtures.h"

namespace iotap::testing {
namespace {

constexpr int kNpmRecords = 10000;

bool IsRead(Op op) {
  return op == OP_READ || op == OP_PREAD || op == OP_READV || op == OP_PREADV ||
         op == OP_PREADV2 || op == OP_FREAD;
}

class TfRecordTest : public ::testing::Test {
 protected:
  // Copies `source` to the test's directory as `name` and writes its index.
  std::string Stage(const std::string& source, const std::string& name) {
    std::string contents = ReadFile(source);
    EXPECT_FALSE(contents.empty()) << source;
    table_ = RecordTable(contents);
    std::string path = dir_.Sub(name);
    WriteFile(path, contents);
    WriteFile(path + ".idx", IndexFile(table_));
    return path;
  }

  // A file from the npm writer, or "" (with npm_missing_ saying why) when
  // npm cannot provide it: the tests then skip.
  std::string Npm(int records = kNpmRecords, const std::string& compression = "none") {
    return NpmTfRecordFile(records, 7, compression, &npm_missing_);
  }

  // Runs the reader in `mode` on `path` under the shim.
  LoadedRun Read(const std::string& mode, const std::string& path) {
    std::vector<std::string> argv = {TestProgram("tfrecord_reader"), mode, path};
    if (mode.find("indexed") != std::string::npos) {
      argv.push_back(path + ".idx");
      argv.push_back("42");
    }
    std::string trace = dir_.Sub("trace-" + std::to_string(++runs_) + "-" + mode);
    RunResult r = RunPreloaded(argv, trace);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "records " + std::to_string(table_.size()) + " bytes " +
                         std::to_string(DataBytes()) + "\n");
    LoadedRun run = LoadRun(trace);
    EXPECT_EQ(run.processes.size(), 1u);
    if (!run.processes.empty()) {
      EXPECT_EQ(run.processes[0].dropped, 0u);
    }
    return run;
  }

  uint64_t DataBytes() const {
    uint64_t n = 0;
    for (const TrueRecord& r : table_) n += r.length;
    return n;
  }

  // The records in the order the reader must meet them.
  std::vector<TrueRecord> ExpectedOrder(const std::string& mode) const {
    if (mode.find("indexed") == std::string::npos) return table_;
    // The reader's shuffle, replayed: srand(42) and the same Fisher-Yates.
    std::vector<TrueRecord> order = table_;
    srand(42);
    for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rand() % i]);
    return order;
  }

  // Every record event on `path` against the record table, the reads they
  // name, and the reads that covered them.
  void ExpectRecords(const LoadedRun& run, const std::string& path, const std::string& mode) {
    ASSERT_EQ(run.processes.size(), 1u);
    const LoadedProcess& p = run.processes[0];
    std::map<uint64_t, const LoadedEvent*> reads;  // (tid << 40 | seq) -> read
    std::vector<const LoadedEvent*> records;
    for (const LoadedEvent& e : p.events) {
      if (e.name != path) continue;
      if (IsRead(e.op)) reads[(uint64_t{e.tid} << 40) | e.seq] = &e;
      if (e.op == OP_TFRECORD_RECORD) records.push_back(&e);
    }
    // The reads' byte ranges, in file order; the readers never read a byte
    // twice, so the ranges are disjoint.
    std::vector<std::pair<int64_t, int64_t>> spans;
    for (const auto& [id, e] : reads) {
      if (e->result > 0) spans.emplace_back(e->offset, e->offset + e->result);
    }
    std::sort(spans.begin(), spans.end());
    for (size_t i = 1; i < spans.size(); ++i) ASSERT_LE(spans[i - 1].second, spans[i].first);
    std::vector<TrueRecord> expected = ExpectedOrder(mode);
    ASSERT_EQ(records.size(), expected.size()) << mode;
    std::map<int64_t, uint64_t> index_of;
    for (size_t i = 0; i < table_.size(); ++i) index_of[table_[i].offset] = i;
    for (size_t k = 0; k < records.size(); ++k) {
      const LoadedEvent& r = *records[k];
      const TrueRecord& t = expected[k];
      ASSERT_EQ(r.offset, t.offset) << mode << " record " << k;
      ASSERT_EQ(r.requested, t.length) << mode << " record " << k;
      ASSERT_TRUE(r.flags & FLAG_TFRECORD_CRC_OK);
      if (r.flags & FLAG_TFRECORD_INDEX_UNKNOWN) {
        EXPECT_EQ(r.aux, 0u);
      } else {
        EXPECT_EQ(r.aux, index_of[t.offset]) << mode << " record " << k;
      }
      // The completing read delivered the data's last byte.
      auto it = reads.find(r.parent);
      ASSERT_NE(it, reads.end()) << mode << " record " << k << " names no read";
      const LoadedEvent& read = *it->second;
      EXPECT_LT(read.offset, t.End());
      EXPECT_GE(read.offset + read.result, t.End());
      // Every read that delivered bytes of the header and data is counted.
      int64_t covering = 0;
      auto after = std::lower_bound(spans.begin(), spans.end(), std::make_pair(t.End(), int64_t{0}));
      for (auto s = after; s != spans.begin() && (s - 1)->second > t.offset; --s) ++covering;
      EXPECT_EQ(r.result, covering) << mode << " record " << k;
      EXPECT_EQ((r.flags & FLAG_TFRECORD_SPANNED) != 0, covering > 1);
    }
  }

  // The TfRecordFile packet for `path`.
  static TfRecordFile Described(const LoadedRun& run, const std::string& path) {
    for (const LoadedProcess& p : run.processes) {
      for (const Packet& packet : p.packets) {
        if (packet.has_tfrecord_file()) {
          for (const LoadedEvent& e : p.events) {
            if (e.file == packet.tfrecord_file().file() && e.name == path) {
              return packet.tfrecord_file();
            }
          }
        }
      }
    }
    ADD_FAILURE() << "no TfRecordFile packet for " << path;
    return TfRecordFile();
  }

  TempDir dir_;
  std::vector<TrueRecord> table_;
  int runs_ = 0;
  std::string npm_missing_;
};

const char* const kModes[] = {"buffered", "per-record", "indexed", "stdio-buffered",
                              "stdio-indexed"};

TEST_F(TfRecordTest, SharedFixturesEveryReader) {
  for (const char* name : {"singles.tfrecords", "data.tfrecord"}) {
    std::string path = Stage(SourcePath(std::string("../shared/fixtures/tfrecord/") + name), name);
    ASSERT_EQ(table_.size(), std::string(name) == "data.tfrecord" ? 1u : 3u);
    for (const char* mode : kModes) {
      LoadedRun run = Read(mode, path);
      ExpectRecords(run, path, mode);
      TfRecordFile f = Described(run, path);
      EXPECT_TRUE(f.detected_by_suffix());
      EXPECT_EQ(f.compression(), TfRecordFile::COMPRESSION_NONE);
    }
  }
}

class NpmTfRecordTest : public TfRecordTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(NpmTfRecordTest, TenThousandRecords) {
  std::string source = Npm();
  if (source.empty()) GTEST_SKIP() << npm_missing_;
  std::string path = Stage(source, "train.tfrecord");
  ASSERT_EQ(table_.size(), static_cast<size_t>(kNpmRecords));
  LoadedRun run = Read(GetParam(), path);
  ExpectRecords(run, path, GetParam());
  TfRecordFile f = Described(run, path);
  EXPECT_TRUE(f.detected_by_suffix());
  EXPECT_TRUE(f.note().empty());
}

INSTANTIATE_TEST_SUITE_P(Readers, NpmTfRecordTest, ::testing::ValuesIn(kModes),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

TEST_F(TfRecordTest, UnnamedFileRecognisedByItsFirstHeader) {
  std::string source = Npm();
  if (source.empty()) GTEST_SKIP() << npm_missing_;
  std::string path = Stage(source, "train-00000-of-00001");
  for (const char* mode : {"buffered", "per-record"}) {
    LoadedRun run = Read(mode, path);
    ExpectRecords(run, path, mode);
    TfRecordFile f = Described(run, path);
    EXPECT_FALSE(f.detected_by_suffix());
    EXPECT_TRUE(f.detected_by_header());
  }
}

// A file that is not named as TFRecord is probed while its reads at offset
// 0 have not completed a record header, for 16 reads at most: a reader
// peeking at one byte again and again stops being probed, and its later
// reads pass by unparsed even though the file holds records. A file named
// as TFRecord keeps being parsed.
TEST_F(TfRecordTest, ProbingStopsAfterSixteenUndecidedReads) {
  std::string source = SourcePath("../shared/fixtures/tfrecord/singles.tfrecords");
  struct Case {
    std::string name;
    int peeks;
    size_t records;
  };
  for (const Case& c : {Case{"peeked-15", 15, 3}, Case{"peeked-16", 16, 0},
                        Case{"peeked-40", 40, 0}, Case{"peeked-40.tfrecord", 40, 3}}) {
    SCOPED_TRACE(c.name);
    std::string path = Stage(source, c.name);
    ASSERT_EQ(table_.size(), 3u);
    std::string trace = dir_.Sub("trace-" + c.name);
    RunResult r = RunPreloaded(
        {TestProgram("tfrecord_reader"), "probe", path, std::to_string(c.peeks)}, trace);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "records 3 bytes " + std::to_string(DataBytes()) + "\n");
    LoadedRun run = LoadRun(trace);
    EXPECT_EQ(run.Count(OP_PREAD, path), c.peeks);
    std::vector<const LoadedEvent*> records;
    for (const LoadedEvent& e : run.processes.at(0).events) {
      if (e.name == path && e.op == OP_TFRECORD_RECORD) records.push_back(&e);
    }
    ASSERT_EQ(records.size(), c.records);
    for (size_t k = 0; k < records.size(); ++k) {
      EXPECT_EQ(records[k]->offset, table_[k].offset);
      EXPECT_EQ(records[k]->requested, table_[k].length);
      EXPECT_EQ(records[k]->aux, k);
    }
  }
}

TEST_F(TfRecordTest, CompressedFilesAreReportedNotParsed) {
  for (const std::string compression : {"gzip", "zlib"}) {
    std::string path = Npm(100, compression);
    if (path.empty()) GTEST_SKIP() << npm_missing_;
    std::string trace = dir_.Sub("trace-" + compression);
    RunResult r = RunPreloaded({TestProgram("tfrecord_reader"), "buffered", path}, trace);
    ASSERT_NE(r.exit_code, 2) << r.err;  // it reads compressed bytes: framing errors are fine
    LoadedRun run = LoadRun(trace);
    EXPECT_EQ(run.Count(OP_TFRECORD_RECORD, path), 0);
    TfRecordFile f = Described(run, path);
    EXPECT_EQ(f.compression(), compression == "gzip" ? TfRecordFile::COMPRESSION_GZIP
                                                     : TfRecordFile::COMPRESSION_ZLIB);
    EXPECT_NE(f.note().find("cannot be attributed"), std::string::npos) << f.note();
  }
}

TEST_F(TfRecordTest, StatsSayInOrderOrShuffled) {
  std::string source = Npm();
  if (source.empty()) GTEST_SKIP() << npm_missing_;
  std::string path = Stage(source, "train.tfrecord");
  for (const char* mode : {"buffered", "indexed"}) {
    Read(mode, path);
    RunResult r = RunProgram(
        {IotapBinary(), "stats", "--json", dir_.Sub("trace-" + std::to_string(runs_) + "-" + mode)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string order = std::string(mode) == "buffered" ? "in order" : "shuffled";
    EXPECT_NE(r.out.find("\"order\": \"" + order + "\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("\"records\": " + std::to_string(kNpmRecords)), std::string::npos);
  }
}

}  // namespace
}  // namespace iotap::testing
