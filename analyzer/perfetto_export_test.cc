// The Perfetto export, decoded with the schema of the fields it writes
// (proto/perfetto/trace.proto): every field known, every interned id defined
// on its sequence before use, every slice begun and ended on its track in
// time order, and the exact slices of known synthetic runs. Also the Chrome
// JSON export of the same runs.

#include "analyzer/perfetto_export.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/chrome_json_export.h"
#include "analyzer/sample_runs.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "perfetto/trace.pb.h"

namespace iotap::analyzer {
namespace {

namespace pf = ::perfetto::protos;
using ::testing::Contains;
using ::testing::ElementsAre;

// Whether `m` or any message inside it holds a field the schema lacks.
bool HasUnknownFields(const google::protobuf::Message& m) {
  const google::protobuf::Reflection* r = m.GetReflection();
  if (!r->GetUnknownFields(m).empty()) return true;
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (f->is_repeated()) {
      for (int i = 0; i < r->FieldSize(m, f); ++i) {
        if (HasUnknownFields(r->GetRepeatedMessage(m, f, i))) return true;
      }
    } else if (HasUnknownFields(r->GetMessage(m, f))) {
      return true;
    }
  }
  return false;
}

// One slice as the trace says it: its name, file, and what it was inside.
struct DecodedSlice {
  std::string name;
  std::string parent;  // the name of the slice open around it on its track, "" if none
  std::string file;
  uint64_t bytes = 0;
};

struct Decoded {
  std::map<uint64_t, pf::TrackDescriptor> tracks;
  std::map<uint64_t, std::vector<DecodedSlice>> slices;  // by track
  std::map<uint64_t, int> counter_values;                // by track
};

// Decodes the trace and checks the rules every Perfetto trace must keep.
Decoded DecodeAndCheck(const std::string& path) {
  Decoded d;
  pf::Trace trace;
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_TRUE(trace.ParseFromString(bytes)) << path;
  EXPECT_FALSE(HasUnknownFields(trace));
  struct Sequence {
    std::map<uint64_t, std::string> names, categories, annotation_names, values;
    bool cleared = false;
  };
  std::map<uint32_t, Sequence> sequences;
  std::map<uint64_t, std::vector<DecodedSlice>> open;  // per track, the begun slices
  std::map<uint64_t, uint64_t> last_ts;
  for (const pf::TracePacket& p : trace.packet()) {
    EXPECT_TRUE(p.has_trusted_packet_sequence_id());
    Sequence& seq = sequences[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      seq = Sequence();
      seq.cleared = true;
    }
    for (const auto& n : p.interned_data().event_names()) seq.names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().event_categories()) seq.categories[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_names()) seq.annotation_names[n.iid()] = n.name();
    for (const auto& n : p.interned_data().debug_annotation_string_values()) seq.values[n.iid()] = n.str();
    if (p.has_track_descriptor()) {
      EXPECT_EQ(d.tracks.count(p.track_descriptor().uuid()), 0u) << "track declared twice";
      d.tracks[p.track_descriptor().uuid()] = p.track_descriptor();
      continue;
    }
    EXPECT_TRUE(p.has_track_event());
    const pf::TrackEvent& e = p.track_event();
    EXPECT_EQ(d.tracks.count(e.track_uuid()), 1u) << "event before its track's descriptor";
    const bool counter_track = d.tracks[e.track_uuid()].has_counter();
    EXPECT_GE(p.timestamp(), last_ts[e.track_uuid()]) << "events out of order on their track";
    last_ts[e.track_uuid()] = p.timestamp();
    std::vector<DecodedSlice>& stack = open[e.track_uuid()];
    switch (e.type()) {
      case pf::TrackEvent::TYPE_COUNTER:
        EXPECT_TRUE(counter_track);
        EXPECT_TRUE(e.has_double_counter_value());
        ++d.counter_values[e.track_uuid()];
        break;
      case pf::TrackEvent::TYPE_SLICE_END:
        EXPECT_FALSE(stack.empty()) << "an end without a begin";
        if (!stack.empty()) stack.pop_back();
        break;
      case pf::TrackEvent::TYPE_SLICE_BEGIN:
      case pf::TrackEvent::TYPE_INSTANT: {
        EXPECT_FALSE(counter_track);
        EXPECT_TRUE(seq.cleared) << "interned data used before the sequence was cleared";
        EXPECT_TRUE(p.sequence_flags() & pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
        EXPECT_EQ(seq.names.count(e.name_iid()), 1u) << "name iid not interned";
        for (uint64_t c : e.category_iids()) EXPECT_EQ(seq.categories.count(c), 1u);
        DecodedSlice s;
        s.name = seq.names[e.name_iid()];
        s.parent = stack.empty() ? "" : stack.back().name;
        for (const pf::DebugAnnotation& a : e.debug_annotations()) {
          EXPECT_EQ(seq.annotation_names.count(a.name_iid()), 1u);
          const std::string& key = seq.annotation_names[a.name_iid()];
          if (key == "file") {
            EXPECT_EQ(seq.values.count(a.string_value_iid()), 1u);
            s.file = seq.values[a.string_value_iid()];
          }
          if (key == "bytes") s.bytes = a.uint_value();
        }
        d.slices[e.track_uuid()].push_back(s);
        if (e.type() == pf::TrackEvent::TYPE_SLICE_BEGIN) stack.push_back(s);
        break;
      }
      default:
        ADD_FAILURE() << "event of no type";
    }
  }
  for (const auto& [track, stack] : open) EXPECT_TRUE(stack.empty()) << "slices left open";
  return d;
}

// The track of thread `tid` of process `pid` (as the trace numbers them).
uint64_t ThreadTrack(const Decoded& d, int pid, int tid) {
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
  Decoded d = DecodeAndCheck(Out("t.pftrace"));
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
  std::vector<std::string> files = Names(d.slices[ThreadTrack(d, 101, 101)], "pread", &DecodedSlice::file);
  EXPECT_THAT(files, Contains("/data/<img src=x onerror=alert(1)>.png"));
  EXPECT_THAT(files, Contains("/data/bad-\\xff\\xfe-utf8.bin"));
  EXPECT_THAT(files, Contains("/data/new\nline\tand\rreturn.bin"));

  // The trainer's thread: the HDF5 read holds its two POSIX reads.
  const std::vector<DecodedSlice>& main = d.slices[ThreadTrack(d, 100, 100)];
  EXPECT_THAT(Names(main, "pread", &DecodedSlice::parent), ElementsAre("H5Dread", "H5Dread"));
  EXPECT_THAT(Names(main, "H5Dread", &DecodedSlice::file), ElementsAre("/data/h5 <i>x</i>.h5:/images"));
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
  Decoded d = DecodeAndCheck(Out("t.pftrace"));
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
