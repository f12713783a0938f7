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

#include "absl/strings/str_cat.h"
#include "analyzer/output/export/chrome_json_export.h"
#include "analyzer/testing/perfetto_check.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/synthetic_trace.h"
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

// A process whose thread 301 reads through a mapping (a minor fault, then a
// major one) and whose thread 300 submits four io_uring reads, three of them
// in flight at once.
constexpr int64_t kT0 = 1'000'000'000;
void WriteMappedAndUringRun(const std::string& dir) {
  SyntheticProcess p(300, 1, "/usr/bin/python3", {"python3", "load.py"}, kT0);
  const uint32_t shards = p.Path("/data/shards.arrow");
  const uint32_t ring = p.Path("anon_inode:[io_uring]");
  p.Add({.op = OP_MMAP,
         .start_ns = kT0 + 10'000,
         .end_ns = kT0 + 12'000,
         .file = shards,
         .offset = 0,
         .requested = 1 << 20,
         .result = 0x7f0000000000});
  p.Add({.op = OP_MAPPED_READ,
         .start_ns = kT0 + 100'000,
         .end_ns = kT0 + 100'000,
         .file = shards,
         .offset = 0,
         .requested = 4096,
         .result = 65536,
         .aux = 4096,
         .tid = 301});
  p.Add({.op = OP_MAPPED_READ,
         .start_ns = kT0 + 200'000,
         .end_ns = kT0 + 260'000,
         .file = shards,
         .offset = 65536,
         .requested = 4096,
         .result = 131072,
         .flags = FLAG_MAJOR_FAULT,
         .aux = 65536 + 8192,
         .tid = 301});
  p.Add({.op = OP_URING_ENTER,
         .start_ns = kT0 + 300'000,
         .end_ns = kT0 + 310'000,
         .file = ring,
         .requested = 3,
         .result = 3});
  const int64_t ends[] = {400'000, 350'000, 500'000};
  for (int k = 0; k < 3; ++k) {
    p.Add({.op = OP_URING_READ,
           .start_ns = kT0 + 300'000,
           .end_ns = kT0 + ends[k],
           .file = shards,
           .offset = 4096 * k,
           .requested = 4096,
           .result = 4096,
           .aux = 22});
  }
  p.Add({.op = OP_URING_ENTER,
         .start_ns = kT0 + 450'000,
         .end_ns = kT0 + 455'000,
         .file = ring,
         .requested = 1,
         .result = 1});
  p.Add({.op = OP_URING_READ,
         .start_ns = kT0 + 450'000,
         .end_ns = kT0 + 460'000,
         .file = shards,
         .offset = 1 << 19,
         .requested = 8192,
         .result = 8192,
         .aux = 22});
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 1'000'000);
  p.WriteTo(dir + "/p300.iotap");
}

TEST_F(ExportTest, PerfettoHasMappedReadsOnTheirThreadAndRequestsInFlightBesideIt) {
  WriteMappedAndUringRun(Run());
  ExportStats stats;
  ASSERT_TRUE(ExportPerfetto(Run(), Out("t.pftrace"), ExportOptions{}, &stats).ok());
  DecodedTrace d = DecodeAndCheck(Out("t.pftrace"));
  EXPECT_EQ(stats.clipped, 0u);

  // The faults: file, span start, span bytes, major, times, as recorded.
  const std::vector<DecodedSlice>& faults = d.slices[ThreadTrack(d, 300, 301)];
  ASSERT_EQ(faults.size(), 2u);
  for (const DecodedSlice& f : faults) {
    EXPECT_EQ(f.name, "mapped_read");
    EXPECT_EQ(f.file, "/data/shards.arrow");
  }
  EXPECT_EQ(faults[0].offset, 0);
  EXPECT_EQ(faults[0].bytes, 65536u);
  EXPECT_EQ(faults[0].major, 0);
  EXPECT_EQ(faults[0].end_ns - faults[0].start_ns, 0u);
  EXPECT_EQ(faults[1].offset, 65536);
  EXPECT_EQ(faults[1].bytes, 131072u);
  EXPECT_EQ(faults[1].major, 1);
  EXPECT_EQ(faults[1].end_ns - faults[1].start_ns, 60'000u);

  // The submitting thread holds its calls, none of the requests.
  std::vector<std::string> calls;
  for (const DecodedSlice& s : d.slices[ThreadTrack(d, 300, 300)]) calls.push_back(s.name);
  EXPECT_THAT(calls, ElementsAre("mmap", "uring_enter", "uring_enter"));

  // The requests, on three tracks (three were in flight at once), each whole.
  std::map<std::string, std::vector<DecodedSlice>> lanes;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name().rfind("io_uring requests of ", 0) == 0) lanes[t.name()] = d.slices[uuid];
  }
  ASSERT_EQ(lanes.size(), 3u);
  const std::vector<DecodedSlice>& first = lanes["io_uring requests of thread 300 [1 of 3]"];
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].offset, 0);
  EXPECT_EQ(first[0].end_ns - first[0].start_ns, 100'000u);
  EXPECT_EQ(first[1].offset, 1 << 19);
  EXPECT_EQ(first[1].bytes, 8192u);
  EXPECT_EQ(first[1].start_ns - first[0].start_ns, 150'000u);
  EXPECT_EQ(first[1].end_ns - first[1].start_ns, 10'000u);
  const std::vector<DecodedSlice>& second = lanes["io_uring requests of thread 300 [2 of 3]"];
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].offset, 4096);
  EXPECT_EQ(second[0].end_ns - second[0].start_ns, 50'000u);
  const std::vector<DecodedSlice>& third = lanes["io_uring requests of thread 300 [3 of 3]"];
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].offset, 8192);
  EXPECT_EQ(third[0].end_ns - third[0].start_ns, 200'000u);
  uint64_t bytes = 0;
  for (const auto& [name, slices] : lanes) {
    for (const DecodedSlice& s : slices) {
      EXPECT_EQ(s.name, "uring_read");
      EXPECT_EQ(s.file, "/data/shards.arrow");
      EXPECT_EQ(s.parent, "");
      bytes += s.bytes;
    }
  }
  EXPECT_EQ(bytes, 3u * 4096 + 8192);
}

TEST_F(ExportTest, ChromeJsonHasTheFaultsAndRequestsToo) {
  WriteMappedAndUringRun(Run());
  ExportStats stats;
  ASSERT_TRUE(ExportChromeJson(Run(), Out("t.json"), ExportOptions{}, 0, &stats).ok());
  std::ifstream in(Out("t.json"));
  google::protobuf::Struct doc;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(
                  std::string((std::istreambuf_iterator<char>(in)), {}), &doc)
                  .ok());
  std::vector<std::string> faults;                 // "offset bytes major dur"
  std::map<double, std::vector<double>> requests;  // tid -> request offsets
  std::set<std::string> threads;
  for (const auto& v : doc.fields().at("traceEvents").list_value().values()) {
    const auto& f = v.struct_value().fields();
    if (f.at("ph").string_value() == "M" && f.at("name").string_value() == "thread_name") {
      threads.insert(f.at("args").struct_value().fields().at("name").string_value());
    }
    if (f.at("ph").string_value() != "X") continue;
    const auto& args = f.at("args").struct_value().fields();
    if (f.at("cat").string_value() == "MAPPED") {
      faults.push_back(
          absl::StrCat(args.at("offset").number_value(), " ", args.at("bytes").number_value(), " ",
                       args.at("major").bool_value(), " ", f.at("dur").number_value()));
    }
    if (f.at("name").string_value() == "uring_read") {
      requests[f.at("tid").number_value()].push_back(args.at("offset").number_value());
    }
  }
  EXPECT_THAT(faults, ElementsAre("0 65536 0 0", "65536 131072 1 60"));
  EXPECT_EQ(requests.size(), 3u);
  EXPECT_THAT(threads, Contains("io_uring requests of thread 300 [1 of 3]"));
  std::multiset<double> offsets;
  for (const auto& [tid, list] : requests) offsets.insert(list.begin(), list.end());
  EXPECT_THAT(offsets, ElementsAre(0, 4096, 8192, 1 << 19));
}

// A fault whose span the shim could not measure and an io_uring request
// whose completion it never saw: the exports say so rather than showing a
// measured span or a request that moved nothing in no time.
void WriteIncompleteRun(const std::string& dir) {
  SyntheticProcess p(300, 1, "/usr/bin/python3", {"python3", "load.py"}, kT0);
  const uint32_t shards = p.Path("/data/shards.arrow");
  p.Add({.op = OP_MAPPED_READ,
         .start_ns = kT0 + 100'000,
         .end_ns = kT0 + 100'000,
         .file = shards,
         .offset = 0,
         .requested = 4096,
         .result = 65536,
         .flags = FLAG_INCOMPLETE,
         .aux = 4096});
  p.Add({.op = OP_URING_READ,
         .start_ns = kT0 + 200'000,
         .end_ns = kT0 + 200'000,
         .file = shards,
         .offset = 8192,
         .requested = 4096,
         .flags = FLAG_INCOMPLETE,
         .aux = 22});
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 1'000'000);
  p.WriteTo(dir + "/p300.iotap");
}

TEST_F(ExportTest, AnEstimatedSpanAndAnUnseenCompletionAreSaid) {
  WriteIncompleteRun(Run());
  ExportStats stats;
  ASSERT_TRUE(ExportPerfetto(Run(), Out("t.pftrace"), ExportOptions{}, &stats).ok());
  DecodedTrace d = DecodeAndCheck(Out("t.pftrace"));
  const std::vector<DecodedSlice>& faults = d.slices[ThreadTrack(d, 300, 300)];
  ASSERT_EQ(faults.size(), 1u);
  EXPECT_EQ(faults[0].name, "mapped_read");
  EXPECT_EQ(faults[0].span_estimated, 1);
  EXPECT_EQ(faults[0].completion_seen, -1);
  int requests = 0;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.name().rfind("io_uring requests of ", 0) != 0) continue;
    for (const DecodedSlice& s : d.slices[uuid]) {
      ++requests;
      EXPECT_EQ(s.name, "uring_read");
      EXPECT_EQ(s.completion_seen, 0);
      EXPECT_EQ(s.span_estimated, -1);
    }
  }
  EXPECT_EQ(requests, 1);

  ASSERT_TRUE(ExportChromeJson(Run(), Out("t.json"), ExportOptions{}, 0, &stats).ok());
  std::ifstream in(Out("t.json"));
  const std::string json((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(json.find("\"major\":false,\"span_estimated\":true"), std::string::npos) << json;
  EXPECT_NE(json.find("\"completion_seen\":false"), std::string::npos) << json;
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
