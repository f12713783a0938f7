// The planted bottlenecks (issue 5): six real PyTorch jobs from examples/,
// each with one known cause, run through `iotap run` and `iotap report` by
// examples/planted/run.sh. The report must name the planted cause as its
// first finding with the right advice, and the clean job must raise nothing
// alarming. Counts the job's design fixes (steps, files, bytes, H5Dread
// calls) are checked exactly.
//
// These run one at a time (RUN_SERIAL): a job that competes with other tests
// for the two cores is a different job.

#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "iotap/report.pb.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;
using report::Finding;

constexpr int kSkip = 77;  // run.sh: the case cannot run on this machine

struct Planted {
  RunResult run;
  report::Report report;
  std::string text;  // the text report, to show when something is off
  std::string data;  // WORKDIR/data-CASE
};

class PlantedTest : public ::testing::Test {
 protected:
  // Runs the case; fills `out` and returns true, or skips/fails the test.
  bool Run(const std::string& name, Planted* out) {
    RunOptions options;
    options.env["IOTAP"] = IotapBinary();
    options.env["PYTHON"] = Python();
    options.timeout_seconds = 600;
    out->run = RunProgram({SourcePath("examples/planted/run.sh"), name, dir_.path()}, options);
    if (out->run.exit_code == kSkip) {
      ADD_FAILURE() << name << " cannot run here: " << out->run.err;
      return false;
    }
    EXPECT_EQ(out->run.exit_code, 0) << out->run.err;
    if (out->run.exit_code != 0) return false;
    std::string json = ReadFile(dir_.Sub("report-" + name + ".json"));
    auto status = google::protobuf::util::JsonStringToMessage(json, &out->report);
    EXPECT_TRUE(status.ok()) << status.ToString();
    out->text = ReadFile(dir_.Sub("report-" + name + ".txt"));
    out->data = dir_.Sub("data-" + name);
    return status.ok();
  }

  TempDir dir_;
};

// Files under `dir` (recursively) with one of the suffixes: their number and
// total size.
std::pair<int, uint64_t> FilesUnder(const std::string& dir, const std::set<std::string>& suffixes) {
  int n = 0;
  uint64_t bytes = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file() || !suffixes.count(e.path().extension().string())) continue;
    ++n;
    bytes += e.file_size();
  }
  return {n, bytes};
}

bool Alarming(const Finding& f) { return f.severity() != Finding::INFO; }

const report::File* FileNamed(const report::Report& r, const std::string& path) {
  for (const report::File& f : r.files()) {
    if (f.path() == path) return &f;
  }
  return nullptr;
}

// (a) One worker and an expensive transform: preparation-bound, and the
// other core idle, so: more workers.
TEST_F(PlantedTest, PrepBoundJobNeedsMoreWorkers) {
  Planted p;
  if (!Run("prep-bound", &p)) return;
  const report::Report& r = p.report;
  auto [images, bytes] = FilesUnder(p.data + "/images", {".png"});
  EXPECT_EQ(images, 600);
  EXPECT_EQ(r.run().steps(), 600 / 20);
  EXPECT_EQ(r.data_files().read_files(), images);
  EXPECT_EQ(r.data_files().read_bytes(), static_cast<double>(bytes));

  ASSERT_GT(r.findings_size(), 0) << p.text;
  const Finding& first = r.findings(0);
  if (first.id() == "cpu_starved_loaders") {
    // The loader waited for a CPU that something outside the job held: on a
    // busy machine the planted cause cannot be seen, and iotap says why.
    GTEST_SKIP() << "the host was busy during the job; iotap reported: " << first.summary();
  }
  EXPECT_EQ(first.id(), "too_few_workers") << p.text;
  EXPECT_TRUE(Alarming(first)) << p.text;
  EXPECT_NE(first.recommendation().find("num_workers"), std::string::npos) << p.text;
  bool prep_symptom = false;
  for (const Finding& f : r.findings()) prep_symptom |= f.id() == "data_stall_prep";
  EXPECT_TRUE(prep_symptom) << p.text;

}

// (b) Shards on network storage (a FUSE mount that answers each request
// after 1 ms), dropped from the page cache before each epoch: every read goes
// to the server. Slow storage first, with the eviction named.
TEST_F(PlantedTest, FetchBoundJobReadsFromSlowStorage) {
  Planted p;
  if (!Run("fetch-bound", &p)) return;
  const report::Report& r = p.report;
  ASSERT_GT(r.findings_size(), 0) << p.text;
  const Finding& first = r.findings(0);
  EXPECT_EQ(first.id(), "storage_slow") << p.text;
  EXPECT_TRUE(Alarming(first)) << p.text;
  EXPECT_NE(first.summary().find("POSIX_FADV_DONTNEED"), std::string::npos) << p.text;
  EXPECT_NE(first.recommendation().find("page cache"), std::string::npos) << p.text;
  bool fetch_symptom = false;
  for (const Finding& f : r.findings()) fetch_symptom |= f.id() == "data_stall_fetch";
  EXPECT_TRUE(fetch_symptom) << p.text;

  // 1024 samples of 3 x 256 x 256 bytes in 4 shards, 2 epochs of batches of
  // 32; each epoch starts by evicting the 4 shards.
  constexpr double kSample = 3 * 256 * 256;
  EXPECT_EQ(r.run().steps(), 2 * 1024 / 32);
  EXPECT_EQ(r.data_files().dontneed_advice(), 2 * 4);
  for (int s = 0; s < 4; ++s) {
    // The job reads the shards through the slow mount.
    std::string path = dir_.Sub("mnt-fetch-bound") + "/shard-000" + std::to_string(s) + ".bin";
    const report::File* f = FileNamed(r, path);
    ASSERT_NE(f, nullptr) << path;
    EXPECT_EQ(f->reads(), 2 * 256) << path;
    EXPECT_EQ(f->read_bytes(), 2 * 256 * kSample) << path;
  }
}

// (f) The fetch-bound shards read through numpy.memmap: the reads are page
// faults that wait for the slow mount, which no system call shows. Mapped
// reads first, with advice for mappings (issue 15).
TEST_F(PlantedTest, ColdMemmapDataLoaderWaitsOnPageFaults) {
  Planted p;
  if (!Run("memmap-cold", &p)) return;
  const report::Report& r = p.report;
  ASSERT_GT(r.findings_size(), 0) << p.text;
  const Finding& first = r.findings(0);
  EXPECT_EQ(first.id(), "mapped_reads_storage") << p.text;
  EXPECT_TRUE(Alarming(first)) << p.text;
  EXPECT_NE(first.recommendation().find("MADV_WILLNEED"), std::string::npos) << p.text;
  bool fetch_symptom = false, storage_slow = false;
  for (const Finding& f : r.findings()) {
    fetch_symptom |= f.id() == "data_stall_fetch";
    storage_slow |= f.id() == "storage_slow";
  }
  EXPECT_TRUE(fetch_symptom) << p.text;
  EXPECT_FALSE(storage_slow) << "the pread advice for a mapped dataset\n" << p.text;

  // 2 epochs over 1024 samples of 3 x 256 x 256 bytes, each copied out of
  // the mapping whole: the faults cover at least those bytes, and at most one
  // 64 KiB fault-around window per fault more.
  constexpr double kTouched = 2 * 1024 * 3 * 256 * 256.0;
  EXPECT_EQ(r.run().steps(), 2 * 1024 / 32);
  EXPECT_EQ(r.data_files().dontneed_advice(), 2 * 4);
  const report::Layer* mapped = nullptr;
  for (const report::Layer& l : r.layers()) {
    if (l.name() == "MAPPED") mapped = &l;
  }
  ASSERT_NE(mapped, nullptr) << p.text;
  EXPECT_GE(mapped->reads(), kTouched / (64 * 1024)) << p.text;
  EXPECT_GE(mapped->read_bytes(), kTouched) << p.text;
  EXPECT_LE(mapped->read_bytes(), kTouched + mapped->reads() * 64 * 1024) << p.text;
  EXPECT_GT(mapped->time_s(), 0) << p.text;
}

// (c) An HDF5 dataset in 64-byte chunks: each H5Dread becomes hundreds of
// tiny reads. Amplification first, with rechunking advice.
TEST_F(PlantedTest, TinyChunksAmplifyHdf5Reads) {
  Planted p;
  if (!Run("tiny-chunks", &p)) return;
  const report::Report& r = p.report;
  ASSERT_GT(r.findings_size(), 0) << p.text;
  const Finding& first = r.findings(0);
  EXPECT_EQ(first.id(), "hdf5_amplification") << p.text;
  EXPECT_TRUE(Alarming(first)) << p.text;
  EXPECT_NE(first.recommendation().find("chunk"), std::string::npos) << p.text;

  std::string file = p.data + "/images.h5";
  const report::Dataset* images = nullptr;
  for (const report::Dataset& d : r.datasets()) {
    if (d.file() == file && d.name() == "/images") images = &d;
  }
  ASSERT_NE(images, nullptr) << p.text;
  EXPECT_EQ(images->reads(), 1024);                      // one H5Dread per sample
  EXPECT_EQ(images->logical_bytes(), 1024.0 * 3 * 80 * 80);
  EXPECT_EQ(images->chunk_bytes(), 64);
  EXPECT_EQ(images->layout(), "chunked");
  // 3 x 80 x 80 bytes in 8 x 8 chunks: 300 chunks, each at least one read.
  EXPECT_GE(images->reads_per_call(), 300) << p.text;
  EXPECT_EQ(r.run().steps(), 1024 / 64);
}

// (d) 1000 files of under a kilobyte on a FUSE mount that answers each
// request after 0.2 ms, standing in for network storage: metadata-heavy, so
// pack them into shards.
TEST_F(PlantedTest, ManySmallFilesAreMetadataHeavy) {
  Planted p;
  if (!Run("small-files", &p)) return;
  const report::Report& r = p.report;
  ASSERT_GT(r.findings_size(), 0) << p.text;
  const Finding& first = r.findings(0);
  EXPECT_EQ(first.id(), "many_small_files") << p.text;
  EXPECT_TRUE(Alarming(first)) << p.text;
  EXPECT_NE(first.recommendation().find("shards"), std::string::npos) << p.text;

  auto [images, bytes] = FilesUnder(p.data + "/images", {".png"});
  EXPECT_EQ(images, 1000);
  EXPECT_EQ(r.run().steps(), 1000 / 50);
  EXPECT_EQ(r.data_files().read_files(), images);
  // The report's directories say where bytes beyond the images came from
  // (91 once in an ASan run, 2026-12-02: not found).
  EXPECT_EQ(r.data_files().read_bytes(), static_cast<double>(bytes)) << p.text;
  // The text report lists the four class directories, not 5000 files.
  EXPECT_NE(p.text.find("from    250 files"), std::string::npos) << p.text;
}

// (e) Workers that keep ahead of a costly training step: nothing alarming,
// and the verdict says so with the overlap figure.
TEST_F(PlantedTest, CleanJobRaisesNothingAlarming) {
  Planted p;
  if (!Run("clean", &p)) return;
  const report::Report& r = p.report;
  for (const Finding& f : r.findings()) EXPECT_FALSE(Alarming(f)) << f.id() << "\n" << p.text;
  bool verdict = false;
  for (const Finding& f : r.findings()) {
    if (f.id() != "no_bottleneck") continue;
    verdict = true;
    EXPECT_NE(f.summary().find("hidden behind compute"), std::string::npos) << f.summary();
  }
  EXPECT_TRUE(verdict) << p.text;
  EXPECT_EQ(r.run().steps(), 1000 / 50);
  EXPECT_EQ(r.data_files().read_files(), 1000);
}

}  // namespace
}  // namespace iotap::testing
