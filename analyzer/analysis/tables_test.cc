// The report's tables (tables.cc) on synthetic runs: files listed and the
// rest summed, the kind of a path processes name differently, the datasets
// read, and CUDA copies.

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kUs = 1'000;

class TablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-tables-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  report::Report Analyze(const std::vector<std::string>& files, int top_files = 50) {
    AnalysisOptions options;
    options.top_files = top_files;
    absl::StatusOr<report::Report> r = AnalyzeTraceFiles(files, options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  }

  std::filesystem::path dir_;
};

// A process that reads `bytes` of each of `paths` (one pread each) and
// writes 5 bytes to /dev/null, naming it as a `null_kind`.
void WriteReader(const std::string& file, int pid, const std::vector<std::string>& paths,
                 uint64_t bytes, InternedString::Kind null_kind) {
  SyntheticProcess p(pid, 1, "/usr/bin/python3", {"python3"}, kT0);
  int64_t at = kT0 + 10 * kUs;
  for (const std::string& path : paths) {
    p.Read(OP_PREAD, at, at + kUs, p.Path(path), 0, bytes);
    at += 2 * kUs;
  }
  p.Add({.op = OP_WRITE, .start_ns = at, .end_ns = at + kUs,
         .file = p.Name("/dev/null", null_kind), .requested = 5, .result = 5});
  p.End(EndOfTrace::REASON_EXIT, 0, at + 2 * kUs);
  p.WriteTo(file);
}

TEST_F(TablesTest, ListsTheTopDataFilesAndSumsTheRest) {
  WriteReader(File("a.iotap"), 100, {"/data/big.bin", "/data/small.bin"}, 1000,
              InternedString::KIND_DEVICE);
  WriteReader(File("b.iotap"), 101, {"/data/big.bin"}, 3000, InternedString::KIND_DEVICE);
  report::Report r = Analyze({File("a.iotap"), File("b.iotap")}, /*top_files=*/1);
  ASSERT_EQ(r.files_size(), 1);
  EXPECT_EQ(r.files(0).path(), "/data/big.bin");
  EXPECT_EQ(r.files(0).processes(), 2);
  EXPECT_EQ(r.files(0).reads(), 2);
  EXPECT_EQ(r.files(0).read_bytes(), 4000);
  EXPECT_EQ(r.files(0).category(), "data");
  // /data/small.bin and /dev/null.
  EXPECT_EQ(r.other_files().files(), 2);
  EXPECT_EQ(r.other_files().reads(), 1);
  EXPECT_EQ(r.other_files().read_bytes(), 1000);
  EXPECT_EQ(r.other_files().writes(), 2);
  EXPECT_EQ(r.other_files().write_bytes(), 10);
}

TEST_F(TablesTest, TheProcessRankedLastSaysWhatKindAPathIs) {
  // One process names /dev/null a file, the other a device: the file given
  // last says, whichever thread reads it first.
  WriteReader(File("a.iotap"), 100, {}, 0, InternedString::KIND_PATH);
  WriteReader(File("b.iotap"), 101, {}, 0, InternedString::KIND_DEVICE);
  for (int i = 0; i < 5; ++i) {
    report::Report ab = Analyze({File("a.iotap"), File("b.iotap")});
    ASSERT_EQ(ab.files_size(), 1);
    EXPECT_EQ(ab.files(0).kind(), "device");
    EXPECT_EQ(ab.files(0).processes(), 2);
    report::Report ba = Analyze({File("b.iotap"), File("a.iotap")});
    ASSERT_EQ(ba.files_size(), 1);
    EXPECT_EQ(ba.files(0).kind(), "file");
  }
}

TEST_F(TablesTest, DatasetsReadAndTheirAmplification) {
  SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3"}, kT0);
  const uint32_t h5 = p.Path("/d/x.h5");
  const uint32_t images = p.Name("/d/x.h5:/images", InternedString::KIND_DATASET);
  const uint32_t written = p.Name("/d/x.h5:/out", InternedString::KIND_DATASET);
  int64_t at = kT0 + 10 * kUs;
  auto next = [&at] { return at += kUs; };
  // H5Dread (call 1): 100 bytes read as two POSIX reads of 4096.
  int64_t start = next();
  p.Add({.op = OP_PREAD, .start_ns = next(), .end_ns = next(), .file = h5, .offset = 0,
         .requested = 4096, .result = 4096, .flags = FLAG_HAS_OFFSET, .parent = 1});
  p.Add({.op = OP_PREAD, .start_ns = next(), .end_ns = next(), .file = h5, .offset = 4096,
         .requested = 4096, .result = 4096, .flags = FLAG_HAS_OFFSET, .parent = 1});
  p.Add({.op = OP_H5D_READ, .start_ns = start, .end_ns = next(), .file = images,
         .requested = 100, .result = 25, .aux = 1});
  // H5Dread_chunk (call 2) of 60 stored bytes.
  start = next();
  p.Add({.op = OP_PREAD, .start_ns = next(), .end_ns = next(), .file = h5, .offset = 8192,
         .requested = 60, .result = 60, .flags = FLAG_HAS_OFFSET, .parent = 2});
  p.Add({.op = OP_H5D_READ_CHUNK, .start_ns = start, .end_ns = next(), .file = images,
         .requested = 60, .result = 60, .aux = 2});
  // A dataset only written: not in the report's table of datasets read.
  start = next();
  p.Add({.op = OP_H5D_WRITE, .start_ns = start, .end_ns = next(), .file = written,
         .requested = 8, .result = 2, .aux = 3});
  p.End(EndOfTrace::REASON_EXIT, 0, next());
  p.WriteTo(File("p.iotap"));

  report::Report r = Analyze({File("p.iotap")});
  ASSERT_EQ(r.datasets_size(), 1);
  const report::Dataset& d = r.datasets(0);
  EXPECT_EQ(d.file(), "/d/x.h5");
  EXPECT_EQ(d.name(), "/images");
  EXPECT_EQ(d.reads(), 2);
  EXPECT_EQ(d.logical_bytes(), 160);
  EXPECT_EQ(d.posix_reads(), 3);
  EXPECT_EQ(d.posix_bytes(), 8252);
  EXPECT_DOUBLE_EQ(d.read_time_s(), 8e-6);  // 5 us and 3 us
  EXPECT_DOUBLE_EQ(d.byte_amplification(), 8252.0 / 160);
  EXPECT_DOUBLE_EQ(d.reads_per_call(), 1.5);
  EXPECT_EQ(d.layout(), "");  // not described
}

TEST_F(TablesTest, CudaCopiesCountBytesOfCopiesThatSucceeded) {
  SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3"}, kT0);
  int64_t at = kT0 + 10 * kUs;
  for (int64_t result : {0, 0, 700}) {  // the last one failed (cudaErrorInvalidValue etc.)
    p.Add({.op = OP_CUDA_MEMCPY_DTOH, .start_ns = at, .end_ns = at + kUs, .requested = 1000,
           .result = result, .flags = FLAG_CUDA_PAGEABLE});
    at += 2 * kUs;
  }
  p.Add({.op = OP_CUDA_MEMCPY_DTOD, .start_ns = at, .end_ns = at + kUs, .requested = 64});
  p.End(EndOfTrace::REASON_EXIT, 0, at + 2 * kUs);
  p.WriteTo(File("p.iotap"));
  report::Report r = Analyze({File("p.iotap")});
  ASSERT_EQ(r.cuda_copies_size(), 2);
  // By direction, then host memory.
  EXPECT_EQ(r.cuda_copies(0).direction(), "DtoD");
  EXPECT_EQ(r.cuda_copies(0).host_memory(), "none");
  EXPECT_EQ(r.cuda_copies(0).bytes(), 64);
  EXPECT_EQ(r.cuda_copies(1).direction(), "DtoH");
  EXPECT_EQ(r.cuda_copies(1).host_memory(), "pageable");
  EXPECT_FALSE(r.cuda_copies(1).async());
  EXPECT_EQ(r.cuda_copies(1).copies(), 3);
  EXPECT_EQ(r.cuda_copies(1).bytes(), 2000);
  EXPECT_DOUBLE_EQ(r.cuda_copies(1).time_s(), 3e-6);
}

}  // namespace
}  // namespace iotap::analyzer
