// What `iotap stats` prints, built from the analysis (CountTraceFiles, then
// BuildStats) on synthetic runs: exact counts per file, process, dataset,
// CUDA group and TFRecord file; issues in the order of the files; and the
// figures `iotap report` prints too, which must be the same numbers.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kUs = 1'000;

class StatsTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-stats-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string File(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

Packet Description(uint32_t id, Hdf5Dataset::Layout layout) {
  Packet packet;
  Hdf5Dataset* d = packet.mutable_hdf5_dataset();
  d->set_id(id);
  d->set_element_size(4);
  d->add_dims(100);
  d->set_layout(layout);
  if (layout == Hdf5Dataset::LAYOUT_CHUNKED) d->add_chunk_dims(10);
  d->set_type_class("float");
  return packet;
}

// A trainer that copies to and from the GPU (one copy fails), reads two
// HDF5 datasets and is unloaded; a loader that reads a data file and writes
// to /dev/null, and exits.
void WriteRun(const std::string& trainer_path, const std::string& loader_path) {
  SyntheticProcess t(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  int64_t at = kT0 + 10 * kUs;
  auto next = [&at](int64_t us) { return at += us * kUs; };
  auto copy = [&](Op op, uint32_t flags, uint64_t bytes, int64_t result) {
    int64_t start = next(1);
    t.Add({.op = op, .start_ns = start, .end_ns = next(2), .requested = bytes, .result = result,
           .flags = flags});
  };
  copy(OP_CUDA_MEMCPY_HTOD, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 4096, 0);
  copy(OP_CUDA_MEMCPY_HTOD, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 1 << 20, 1);  // failed
  copy(OP_CUDA_MEMCPY_DTOD, 0, 2048, 0);                                      // no host side
  copy(OP_CUDA_MEMCPY_HTOD, 0, 100, 0);  // a host side not classified

  const uint32_t h5 = t.Path("/d/x.h5");
  const uint32_t images = t.Name("/d/x.h5:/images", InternedString::KIND_DATASET);
  const uint32_t labels = t.Name("/d/x.h5:/labels", InternedString::KIND_DATASET);
  t.Packet(Description(images, Hdf5Dataset::LAYOUT_CHUNKED));
  t.Packet(Description(labels, Hdf5Dataset::LAYOUT_VIRTUAL));
  // H5Dread (call 7) of 100 elements: two POSIX reads and one STDIO read
  // beneath it, then its own event.
  int64_t call_start = next(1);
  t.Add({.op = OP_PREAD, .start_ns = next(1), .end_ns = next(1), .file = h5, .offset = 0,
         .requested = 200, .result = 200, .flags = FLAG_HAS_OFFSET, .parent = 7});
  t.Add({.op = OP_PREAD, .start_ns = next(1), .end_ns = next(1), .file = h5, .offset = 200,
         .requested = 200, .result = 200, .flags = FLAG_HAS_OFFSET, .parent = 7});
  t.Add({.op = OP_FREAD, .start_ns = next(1), .end_ns = next(1), .file = h5, .requested = 50,
         .result = 50, .parent = 7});
  t.Add({.op = OP_H5D_READ, .start_ns = call_start, .end_ns = next(1), .file = images,
         .requested = 400, .result = 100, .aux = 7});
  // A failed H5Dread (call 8): it returned no data.
  call_start = next(1);
  t.Add({.op = OP_H5D_READ, .start_ns = call_start, .end_ns = next(1), .file = images,
         .requested = 400, .result = -1, .aux = 8});
  // H5Dread_chunk (call 9) of a 40-byte stored chunk, one POSIX read.
  call_start = next(1);
  t.Add({.op = OP_PREAD, .start_ns = next(1), .end_ns = next(1), .file = h5, .offset = 400,
         .requested = 40, .result = 40, .flags = FLAG_HAS_OFFSET, .parent = 9});
  t.Add({.op = OP_H5D_READ_CHUNK, .start_ns = call_start, .end_ns = next(1), .file = images,
         .requested = 40, .result = 40, .aux = 9});
  // The labels are opened and read once (call 10), nothing beneath.
  t.Add({.op = OP_H5D_OPEN, .start_ns = next(1), .end_ns = next(1), .file = labels, .result = 1,
         .aux = 11});
  call_start = next(1);
  t.Add({.op = OP_H5D_READ, .start_ns = call_start, .end_ns = next(1), .file = labels,
         .requested = 40, .result = 10, .aux = 10});
  t.End(EndOfTrace::REASON_UNLOADED, 0, next(1));
  t.WriteTo(trainer_path);

  SyntheticProcess l(101, 100, "/usr/bin/python3", {"python3", "train.py"}, kT0,
                     ProcessHeader::ORIGIN_FORK);
  const uint32_t data = l.Path("/data/a.bin");
  const uint32_t null = l.Name("/dev/null", InternedString::KIND_DEVICE);
  at = kT0 + 10 * kUs;
  for (int64_t offset : {0, 65536}) {
    const int64_t start = next(1);
    l.Read(OP_PREAD, start, next(4), data, offset, 65536);
  }
  l.Add({.op = OP_WRITE, .start_ns = next(1), .end_ns = next(1), .file = null, .requested = 10,
         .result = 10});
  l.End(EndOfTrace::REASON_EXIT, 0, next(1));
  l.WriteTo(loader_path);
}

AnalysisOptions Threads(int n) {
  AnalysisOptions o;
  o.threads = n;
  return o;
}

const stats::File* StatsFile(const stats::Stats& s, const std::string& path) {
  for (const stats::File& f : s.files()) {
    if (f.path() == path) return &f;
  }
  return nullptr;
}

const report::File* ReportFile(const report::Report& r, const std::string& path) {
  for (const report::File& f : r.files()) {
    if (f.path() == path) return &f;
  }
  return nullptr;
}

TEST_F(StatsTablesTest, CountsEveryFileProcessAndIssueInTheOrderOfTheFiles) {
  WriteRun(File("t.iotap"), File("l.iotap"));
  std::ofstream(File("junk.iotap")) << "not a trace";
  std::ofstream(File("empty.iotap"));
  const std::vector<std::string> files = {File("junk.iotap"), File("t.iotap"), File("l.iotap"),
                                          File("empty.iotap")};
  RunCounts counts = CountTraceFiles(files, Threads(4));
  const stats::Stats& s = counts.WithFileRows();
  EXPECT_EQ(counts.files_read, 2);
  EXPECT_EQ(s.processes(), 2u);
  EXPECT_EQ(s.events(), 13u + 3u);

  // Files: most bytes first.
  ASSERT_EQ(s.files_size(), 3);
  EXPECT_EQ(s.files(0).path(), "/data/a.bin");
  EXPECT_EQ(s.files(0).kind(), "file");
  EXPECT_EQ(s.files(0).posix_reads(), 2u);
  EXPECT_EQ(s.files(0).read_bytes(), 131072u);
  EXPECT_DOUBLE_EQ(s.files(0).read_seconds(), 8e-6);
  EXPECT_EQ(s.files(0).processes(), 1u);
  EXPECT_EQ(s.files(1).path(), "/d/x.h5");
  EXPECT_EQ(s.files(1).posix_reads(), 3u);
  EXPECT_EQ(s.files(1).stdio_reads(), 1u);
  EXPECT_EQ(s.files(1).read_bytes(), 490u);
  EXPECT_EQ(s.files(2).path(), "/dev/null");
  EXPECT_EQ(s.files(2).kind(), "device");
  EXPECT_EQ(s.files(2).write_bytes(), 10u);

  // Processes by host, then pid.
  ASSERT_EQ(s.process_list_size(), 2);
  EXPECT_EQ(s.process_list(0).pid(), 100);
  EXPECT_EQ(s.process_list(0).end(), "unloaded");
  EXPECT_EQ(s.process_list(0).reads(), 4u);
  EXPECT_EQ(s.process_list(0).read_bytes(), 490u);
  EXPECT_EQ(s.process_list(0).trace_file(), File("t.iotap"));
  EXPECT_EQ(s.process_list(1).pid(), 101);
  EXPECT_EQ(s.process_list(1).end(), "exit 0");
  EXPECT_EQ(s.process_list(1).writes(), 1u);

  // The files that could not be read, in the order given, whichever thread
  // read them.
  ASSERT_EQ(s.issues_size(), 2);
  EXPECT_EQ(s.issues(0).file(), File("junk.iotap"));
  EXPECT_EQ(s.issues(1).file(), File("empty.iotap"));
  EXPECT_EQ(CountTraceFiles(files, Threads(1)).WithFileRows().SerializeAsString(),
            s.SerializeAsString());
}

// The files section is most bytes first, then by path, whatever order the
// processes first touched the files in (the order their rows are made in):
// two processes, whose files' bytes and first touches disagree.
TEST_F(StatsTablesTest, FilesMostBytesFirstThenByPathWhateverOrderTheyCameIn) {
  SyntheticProcess a(10, 1, "/usr/bin/python3", {"python3", "a.py"}, kT0);
  SyntheticProcess b(11, 1, "/usr/bin/python3", {"python3", "b.py"}, kT0);
  int64_t at = kT0 + kUs;
  auto read = [&at](SyntheticProcess& p, const std::string& path, uint64_t bytes) {
    p.Read(OP_PREAD, at, at + kUs, p.Path(path), 0, bytes);
    at += 2 * kUs;
  };
  read(a, "/d/small", 10);
  read(a, "/d/tie-b", 500);
  read(a, "/d/large", 1000);
  read(b, "/d/tie-a", 500);
  read(b, "/d/small", 5);   // 15 in all
  read(b, "/d/middle", 700);
  read(b, "/d/large", 1);   // 1001 in all
  read(a, "/d/empty", 0);
  a.WriteTo(File("a.iotap"));
  b.WriteTo(File("b.iotap"));
  const stats::Stats s =
      CountTraceFiles({File("a.iotap"), File("b.iotap")}, Threads(1)).WithFileRows();
  std::vector<std::pair<std::string, uint64_t>> files;
  for (const stats::File& f : s.files()) files.emplace_back(f.path(), f.read_bytes());
  const std::vector<std::pair<std::string, uint64_t>> expected = {
      {"/d/large", 1001}, {"/d/middle", 700}, {"/d/tie-a", 500},
      {"/d/tie-b", 500},  {"/d/small", 15},   {"/d/empty", 0}};
  EXPECT_EQ(files, expected);
  EXPECT_EQ(StatsFile(s, "/d/large")->processes(), 2u);
  EXPECT_EQ(StatsFile(s, "/d/large")->reads(), 2u);
  EXPECT_EQ(StatsFile(s, "/d/tie-b")->processes(), 1u);
}

TEST_F(StatsTablesTest, DatasetsCudaAndTheirCounts) {
  WriteRun(File("t.iotap"), File("l.iotap"));
  const stats::Stats s =
      CountTraceFiles({File("t.iotap"), File("l.iotap")}, Threads(2)).WithFileRows();
  ASSERT_EQ(s.datasets_size(), 2);
  const stats::Dataset& images = s.datasets(0);  // most logical bytes first
  EXPECT_EQ(images.dataset(), "/d/x.h5:/images");
  EXPECT_EQ(images.file(), "/d/x.h5");
  EXPECT_EQ(images.name(), "/images");
  EXPECT_EQ(images.layout(), "chunked");
  EXPECT_EQ(images.chunk_bytes(), 40u);
  EXPECT_EQ(images.reads(), 2u);
  EXPECT_EQ(images.read_elements(), 100u);
  EXPECT_EQ(images.read_logical_bytes(), 400u);  // the failed read returned nothing
  EXPECT_EQ(images.posix_reads(), 4u);           // STDIO included; beneath the chunk read too
  EXPECT_EQ(images.posix_read_bytes(), 490u);
  EXPECT_EQ(images.min_posix_reads_per_read(), 0u);
  EXPECT_EQ(images.max_posix_reads_per_read(), 3u);
  EXPECT_EQ(images.chunk_reads(), 1u);
  EXPECT_EQ(images.chunk_read_bytes(), 40u);
  EXPECT_EQ(images.failed_calls(), 1u);
  EXPECT_EQ(images.processes(), 1u);
  const stats::Dataset& labels = s.datasets(1);
  EXPECT_EQ(labels.layout(), "virtual");
  EXPECT_EQ(labels.opens(), 1u);
  EXPECT_EQ(labels.read_logical_bytes(), 40u);

  ASSERT_EQ(s.cuda_copies_size(), 3);
  EXPECT_EQ(s.cuda_copies(0).direction(), "HtoD");
  EXPECT_EQ(s.cuda_copies(0).host_memory(), "pinned");
  EXPECT_EQ(s.cuda_copies(0).mode(), "async");
  EXPECT_EQ(s.cuda_copies(0).calls(), 2u);
  EXPECT_EQ(s.cuda_copies(0).failed_calls(), 1u);
  EXPECT_EQ(s.cuda_copies(0).bytes(), 4096u);
  EXPECT_DOUBLE_EQ(s.cuda_copies(0).seconds(), 4e-6);
  EXPECT_EQ(s.cuda_copies(1).host_memory(), "none");
  EXPECT_EQ(s.cuda_copies(1).bytes(), 2048u);
  EXPECT_EQ(s.cuda_copies(2).host_memory(), "unknown");
  EXPECT_EQ(s.cuda_copies(2).bytes(), 100u);
}

// `iotap report` and `iotap stats` on the same run print the same figures.
class AgreementTest : public StatsTablesTest {
 protected:
  void SetUp() override {
    StatsTablesTest::SetUp();
    WriteRun(File("t.iotap"), File("l.iotap"));
    absl::StatusOr<report::Report> r = AnalyzeRun(dir_.string(), AnalysisOptions());
    ASSERT_TRUE(r.ok()) << r.status();
    report_ = *r;
    stats_ = CountTraceFiles({File("l.iotap"), File("t.iotap")}, AnalysisOptions()).WithFileRows();
  }
  report::Report report_;
  stats::Stats stats_;
};

TEST_F(AgreementTest, EndReasons) {
  ASSERT_EQ(report_.processes_size(), 2);
  for (const report::Process& p : report_.processes()) {
    const stats::Process& q = stats_.process_list(p.pid() == 100 ? 0 : 1);
    EXPECT_EQ(p.end(), q.end()) << p.pid();
  }
  EXPECT_EQ(stats_.process_list(0).end(), "unloaded");
}

TEST_F(AgreementTest, CudaCopiesHostMemoryAndBytesOfFailedCopies) {
  ASSERT_EQ(report_.cuda_copies_size(), stats_.cuda_copies_size());
  for (const report::CudaCopies& c : report_.cuda_copies()) {
    bool found = false;
    for (const stats::CudaCopies& d : stats_.cuda_copies()) {
      if (d.direction() != c.direction() || d.host_memory() != c.host_memory() ||
          d.mode() != (c.async() ? "async" : "sync")) {
        continue;
      }
      found = true;
      EXPECT_EQ(c.copies(), static_cast<double>(d.calls()));
      EXPECT_EQ(c.bytes(), static_cast<double>(d.bytes())) << c.direction() << c.host_memory();
      EXPECT_EQ(c.time_s(), d.seconds());
    }
    EXPECT_TRUE(found) << c.direction() << " " << c.host_memory();
  }
}

TEST_F(AgreementTest, HdfLayoutsAndPosixReadsBeneath) {
  ASSERT_EQ(report_.datasets_size(), 2);
  for (const report::Dataset& d : report_.datasets()) {
    const stats::Dataset& e = stats_.datasets(d.name() == "/images" ? 0 : 1);
    EXPECT_EQ(d.file(), e.file());
    EXPECT_EQ(d.name(), e.name());
    EXPECT_EQ(d.layout(), e.layout());
    EXPECT_EQ(d.posix_reads(), static_cast<double>(e.posix_reads()));
    EXPECT_EQ(d.posix_bytes(), static_cast<double>(e.posix_read_bytes()));
    // The report's reads take H5Dread_chunk calls with H5Dread calls.
    EXPECT_EQ(d.reads(), static_cast<double>(e.reads() + e.chunk_reads()));
    EXPECT_EQ(d.logical_bytes(),
              static_cast<double>(e.read_logical_bytes() + e.chunk_read_bytes()));
  }
}

TEST_F(AgreementTest, FilesKindsAndCounts) {
  for (const stats::File& f : stats_.files()) {
    const report::File* g = ReportFile(report_, f.path());
    ASSERT_NE(g, nullptr) << f.path();
    EXPECT_EQ(g->kind(), f.kind()) << f.path();
    EXPECT_EQ(g->opens(), static_cast<double>(f.opens()));
    EXPECT_EQ(g->reads(), static_cast<double>(f.reads()));
    EXPECT_EQ(g->read_bytes(), static_cast<double>(f.read_bytes()));
    EXPECT_EQ(g->writes(), static_cast<double>(f.writes()));
    EXPECT_EQ(g->write_bytes(), static_cast<double>(f.write_bytes()));
    EXPECT_EQ(g->metadata_ops(), static_cast<double>(f.metadata_ops()));
    EXPECT_EQ(g->processes(), static_cast<double>(f.processes()));
  }
  EXPECT_EQ(StatsFile(stats_, "/dev/null")->kind(), "device");
  for (const report::Process& p : report_.processes()) {
    const stats::Process& q = stats_.process_list(p.pid() == 100 ? 0 : 1);
    EXPECT_EQ(p.reads(), static_cast<double>(q.reads()));
    EXPECT_EQ(p.read_bytes(), static_cast<double>(q.read_bytes()));
    EXPECT_EQ(p.writes(), static_cast<double>(q.writes()));
    EXPECT_EQ(p.events(), static_cast<double>(q.events()));
  }
}

}  // namespace
}  // namespace iotap::analyzer
