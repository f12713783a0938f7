// The Perfetto export, decoded with the schema of the fields it writes
// (proto/perfetto/trace.proto) by perfetto_check.h, which checks every field
// is known, every interned id defined on its sequence before use, and every
// slice begun and ended on its track in time order; then the exact slices of
// known synthetic runs. Also the Chrome JSON export of the same runs.

#include "analyzer/output/export/perfetto_export.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/output/export/chrome_json_export.h"
#include "analyzer/testing/perfetto_check.h"
#include "analyzer/testing/sample_runs.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;

// Decodes the trace at `path`; every broken rule fails the test.
DecodedTrace DecodeAndCheck(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  DecodedTrace d = DecodePerfettoTrace(std::string((std::istreambuf_iterator<char>(in)), {}));
  EXPECT_THAT(d.problems, ::testing::IsEmpty());
  EXPECT_GT(d.packets, 0u);
  return d;
}

// The track of thread `tid` of process `pid` (as the trace numbers them).
uint64_t ThreadTrack(const DecodedTrace& d, int pid, int tid) {
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_thread() && t.thread().pid() == pid && t.thread().tid() == tid) return uuid;
  }
  return 0;
}

std::vector<std::string> Names(const std::vector<DecodedSlice>& slices, const std::string& name,
                               std::string DecodedSlice::*field) {
  std::vector<std::string> out;
  for (const DecodedSlice& s : slices) {
    if (s.name == name) out.push_back(s.*field);
  }
  return out;
}

class ExportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-export-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "run");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Run() const { return (dir_ / "run").string(); }
  std::string Out(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

TEST_F(ExportTest, PerfettoTraceOfTheHostileRunDecodesInOrder) {
  WriteHostileRun(Run());
  ExportStats stats;
  ASSERT_TRUE(ExportPerfetto(Run(), Out("t.pftrace"), ExportOptions{}, &stats).ok());
  DecodedTrace d = DecodeAndCheck(Out("t.pftrace"));
  EXPECT_EQ(stats.processes, 3u);
  EXPECT_EQ(stats.clipped, 0u);
  EXPECT_EQ(stats.bytes, std::filesystem::file_size(Out("t.pftrace")));

  // Each loader thread: its 36 reads, of the hostile files, named as they are.
  for (int tid : {101, 1101}) {
    const std::vector<DecodedSlice>& s = d.slices[ThreadTrack(d, 101, tid)];
    ASSERT_EQ(s.size(), 36u) << tid;
    EXPECT_EQ(s[0].name, "pread");
    EXPECT_EQ(s[0].parent, "");
  }
  std::vector<std::string> files =
      Names(d.slices[ThreadTrack(d, 101, 101)], "pread", &DecodedSlice::file);
  EXPECT_THAT(files, Contains("/data/<img src=x onerror=alert(1)>.png"));
  EXPECT_THAT(files, Contains("/data/bad-\\xff\\xfe-utf8.bin"));
  EXPECT_THAT(files, Contains("/data/new\nline\tand\rreturn.bin"));

  // The trainer's thread: the HDF5 read holds its two POSIX reads.
  const std::vector<DecodedSlice>& main = d.slices[ThreadTrack(d, 100, 100)];
  EXPECT_THAT(Names(main, "pread", &DecodedSlice::parent), ElementsAre("H5Dread", "H5Dread"));
  EXPECT_THAT(Names(main, "H5Dread", &DecodedSlice::file),
              ElementsAre("/data/h5 <i>x</i>.h5:/images"));
  EXPECT_EQ(Names(main, "cudaMemcpyHtoD", &DecodedSlice::file).size(), 1u);
  EXPECT_EQ(Names(main, "fread", &DecodedSlice::file).size(), 1u);

  // Its steps, each wait inside its step.
  uint64_t steps = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name() == "training steps") steps = uuid;
  }
  ASSERT_NE(steps, 0u);
  EXPECT_EQ(Names(d.slices[steps], "step", &DecodedSlice::parent).size(), 20u);
  EXPECT_THAT(Names(d.slices[steps], "waiting for data", &DecodedSlice::parent),
              ::testing::Each(std::string("step")));

  // Counters of the analysis' series, bandwidth per layer among them.
  std::set<std::string> counters;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_counter()) {
      counters.insert(t.name());
      EXPECT_GT(d.counter_values[uuid], 0) << t.name();
    }
  }
  EXPECT_THAT(counters, Contains("read POSIX (bytes/s)"));
  EXPECT_THAT(counters, Contains("CUDA copies (bytes/s)"));
}

TEST_F(ExportTest, PerfettoGivesProcessesOfDifferentHostsDifferentPids) {
  WriteManyStepRun(Run(), /*trainers=*/2, /*loaders=*/1, /*steps=*/10, /*hosts=*/2);
  ExportStats stats;
  ASSERT_TRUE(ExportPerfetto(Run(), Out("t.pftrace"), ExportOptions{}, &stats).ok());
  DecodedTrace d = DecodeAndCheck(Out("t.pftrace"));
  std::set<int> pids;
  std::set<std::pair<int, int>> threads;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process()) pids.insert(t.process().pid());
    if (t.has_thread()) threads.insert({t.thread().pid(), t.thread().tid()});
  }
  EXPECT_EQ(pids.size(), 4u);
  EXPECT_EQ(pids.count(1000), 1u);
  EXPECT_EQ(threads.size(), 4u);
}

TEST_F(ExportTest, PerfettoLeavesNoFileWhenTheRunCannotBeRead) {
  ExportStats stats;
  absl::Status s = ExportPerfetto(Out("no-such-run"), Out("t.pftrace"), ExportOptions{}, &stats);
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(std::filesystem::exists(Out("t.pftrace")));
}

TEST_F(ExportTest, ChromeJsonHoldsTheSameSlices) {
  WriteHostileRun(Run());
  ExportStats stats;
  ASSERT_TRUE(ExportChromeJson(Run(), Out("t.json"), ExportOptions{}, 0, &stats).ok());
  std::ifstream in(Out("t.json"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(text, &doc).ok());
  const auto& events = doc.fields().at("traceEvents").list_value().values();
  int complete = 0, instants = 0;
  std::vector<std::string> files;
  for (const auto& v : events) {
    const auto& f = v.struct_value().fields();
    const std::string ph = f.at("ph").string_value();
    if (ph == "X") ++complete;
    if (ph == "i") ++instants;
    if (ph == "X" && f.at("args").struct_value().fields().count("file")) {
      files.push_back(f.at("args").struct_value().fields().at("file").string_value());
    }
  }
  EXPECT_EQ(static_cast<uint64_t>(complete + instants), stats.slices);
  EXPECT_EQ(instants, 40);  // 20 step begins and 20 step ends
  EXPECT_THAT(files, Contains("/data/</script><script>alert(2)</script>.bin"));
  EXPECT_THAT(files, Contains("/data/bad-\\xff\\xfe-utf8.bin"));
}

TEST_F(ExportTest, ChromeJsonRefusesLargeRunsBeforeWritingAnything) {
  WriteHostileRun(Run());
  ExportStats stats;
  absl::Status s = ExportChromeJson(Run(), Out("t.json"), ExportOptions{}, 10, &stats);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("--perfetto"));
  EXPECT_FALSE(std::filesystem::exists(Out("t.json")));
}

}  // namespace
}  // namespace iotap::analyzer
