// The per-process analysis on synthetic trace files: what each scope counts
// per file, per kind of descriptor and per process, and how it words a
// process's end.

#include "analyzer/analysis/process_analysis.h"

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/read/trace_reader.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kUs = 1'000;

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("iotap-pa-" + std::to_string(::getpid()) + "-" + name))
      .string();
}

ProcessResult Analyze(const SyntheticProcess& p, AnalysisScope scope, PathTable* paths) {
  const std::string path = TempPath(::testing::UnitTest::GetInstance()->current_test_info()->name());
  p.WriteTo(path);
  ProcessAnalyzer analyzer(scope, paths, kT0, 1000);
  std::vector<ReadIssue> issues;
  absl::Status s = ReadTraceFile(path, &analyzer, &issues);
  std::filesystem::remove(path);
  EXPECT_TRUE(s.ok()) << s;
  for (const ReadIssue& i : issues) ADD_FAILURE() << i.ToString();
  return analyzer.Take();
}

// A loader that reads a data file by POSIX and STDIO calls, maps it, writes
// to /dev/null, and talks through a pipe and a socket.
SyntheticProcess Loader() {
  SyntheticProcess p(200, 100, "/usr/bin/python3", {"python3", "-c", "load"}, kT0);
  const uint32_t data = p.Path("/data/a.bin");
  const uint32_t null = p.Name("/dev/null", InternedString::KIND_DEVICE);
  const uint32_t pipe = p.Name("pipe:[7]", InternedString::KIND_PIPE);
  const uint32_t sock = p.Name("socket:[9]", InternedString::KIND_SOCKET);
  int64_t t = kT0 + 10 * kUs;
  auto at = [&t](int64_t us) {
    t += us * kUs;
    return t;
  };
  p.Add({.op = OP_OPENAT, .start_ns = at(1), .end_ns = at(1), .file = data, .result = 3});
  for (int64_t offset : {0, 4096}) {
    const int64_t start = at(1);
    p.Read(OP_PREAD, start, at(1), data, offset, 4096);
  }
  p.Add({.op = OP_FREAD, .start_ns = at(1), .end_ns = at(1), .file = data, .requested = 100,
         .result = 100});
  p.Add({.op = OP_MMAP, .start_ns = at(1), .end_ns = at(1), .file = data, .requested = 8192,
         .result = 0x7f0000000000});
  p.Add({.op = OP_PREAD, .start_ns = at(1), .end_ns = at(1), .file = data, .offset = 0,
         .requested = 10, .result = -1, .error = 5});
  p.Add({.op = OP_STAT, .start_ns = at(1), .end_ns = at(1), .file = data, .aux = 8192});
  p.Add({.op = OP_WRITE, .start_ns = at(1), .end_ns = at(1), .file = null, .requested = 30,
         .result = 30});
  p.Add({.op = OP_WRITE, .start_ns = at(1), .end_ns = at(1), .file = pipe, .requested = 8,
         .result = 8});
  p.Add({.op = OP_READ, .start_ns = at(1), .end_ns = at(1), .file = pipe, .requested = 8,
         .result = 8});
  p.Add({.op = OP_READ, .start_ns = at(1), .end_ns = at(1), .file = sock, .requested = 64,
         .result = 20});
  p.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, at(1));
  return p;
}

TEST(ProcessAnalysisTest, CountsEachFileAndEachKindOfDescriptor) {
  PathTable paths;
  ProcessResult r = Analyze(Loader(), AnalysisScope::kCounts, &paths);
  ASSERT_EQ(r.files.size(), 2u);
  ASSERT_EQ(r.file_refs.size(), 2u);
  EXPECT_EQ(paths.path(r.file_refs[0].path_id), "/data/a.bin");
  EXPECT_EQ(r.file_refs[0].kind, InternedString::KIND_PATH);
  EXPECT_EQ(paths.path(r.file_refs[1].path_id), "/dev/null");
  EXPECT_EQ(r.file_refs[1].kind, InternedString::KIND_DEVICE);

  const FileCounts& a = r.files[0];
  EXPECT_EQ(a.opens, 1u);
  EXPECT_EQ(a.posix_reads, 3u);  // the failed one included
  EXPECT_EQ(a.stdio_reads, 1u);
  EXPECT_EQ(a.read_bytes, 8292u);
  EXPECT_EQ(a.mmaps, 1u);
  EXPECT_EQ(a.mmap_bytes, 8192u);
  EXPECT_EQ(a.errors, 1u);
  EXPECT_EQ(a.metadata_ops, 2u);  // the open and the stat
  EXPECT_EQ(a.read_ns, 4 * kUs);  // 1 us each
  EXPECT_EQ(r.files[1].posix_writes, 1u);
  EXPECT_EQ(r.files[1].write_bytes, 30u);

  ASSERT_EQ(r.ipc.size(), 2u);
  const FileCounts& pipe = r.ipc.at(InternedString::KIND_PIPE);
  EXPECT_EQ(pipe.posix_reads, 1u);
  EXPECT_EQ(pipe.posix_writes, 1u);
  EXPECT_EQ(pipe.read_bytes, 8u);
  EXPECT_EQ(r.ipc.at(InternedString::KIND_SOCKET).read_bytes, 20u);

  // The process's totals take every file and descriptor.
  EXPECT_EQ(r.events, 11u);
  EXPECT_EQ(r.reads, 6u);
  EXPECT_EQ(r.read_bytes, 8292u + 8 + 20);
  EXPECT_EQ(r.write_calls, 2u);
  EXPECT_EQ(r.write_bytes, 38u);
  EXPECT_EQ(r.metadata_ops, 2u);
  EXPECT_EQ(r.header.pid(), 200);
  EXPECT_EQ(r.end, "_exit 0");
}

TEST(ProcessAnalysisTest, CountsLeaveOutWhatOnlyTheReportNeeds) {
  PathTable paths;
  ProcessResult r = Analyze(Loader(), AnalysisScope::kCounts, &paths);
  EXPECT_TRUE(r.file_details.empty());
  EXPECT_EQ(r.file_refs[0].category, nullptr);  // no category worked out
  EXPECT_EQ(r.io, nullptr);
  EXPECT_EQ(r.data_read_bytes, nullptr);
  EXPECT_EQ(r.layers[static_cast<int>(Layer::kPosix)].ops, 0u);
  EXPECT_EQ(r.summary.events(), 0);
}

TEST(ProcessAnalysisTest, FullScopeCountsTheSameAndTheDetail) {
  PathTable counts_paths, full_paths;
  ProcessResult counts = Analyze(Loader(), AnalysisScope::kCounts, &counts_paths);
  ProcessResult full = Analyze(Loader(), AnalysisScope::kFull, &full_paths);
  ASSERT_EQ(full.files.size(), counts.files.size());
  for (size_t i = 0; i < full.files.size(); ++i) {
    EXPECT_EQ(full.files[i].reads(), counts.files[i].reads());
    EXPECT_EQ(full.files[i].read_bytes, counts.files[i].read_bytes);
    EXPECT_EQ(full.files[i].errors, counts.files[i].errors);
  }
  ASSERT_EQ(full.file_details.size(), 2u);
  EXPECT_STREQ(full.file_refs[0].category, "data");
  EXPECT_STREQ(full.file_refs[1].category, "system");
  const FileDetail& a = full.file_details[0];
  EXPECT_EQ(a.size_bytes, 8192);
  EXPECT_EQ(a.read_ranges.covered(), 8192u);  // the two preads; fread has no offset
  // The first pread has nothing before it; the second follows it.
  EXPECT_EQ(a.read_pattern.consecutive, 1u);
  EXPECT_EQ(full.summary.reads(), 6);
  EXPECT_EQ(full.summary.read_bytes(), 8320);
  EXPECT_EQ(full.summary.end(), "_exit 0");
  // Busy time: the data file's calls but the mmap, each 1 or 2 us apart.
  EXPECT_GT(full.io_busy_ns, 0);
}

// A loader with two Python stack samples: the full analysis takes them, the
// counts (`iotap stats`) leave them out but count their events.
TEST(ProcessAnalysisTest, OnlyTheFullScopeTakesPythonSamples) {
  SyntheticProcess p(201, 100, "/usr/bin/python3", {"python3", "-c", "load"}, kT0);
  const uint32_t main =
      p.Name(std::string("main\0/a.py\0" "1", 12), InternedString::KIND_PY_FUNCTION);
  // One frame, varint-coded: main, at line 5 (both ids and lines under 128).
  const uint32_t id =
      p.Name(std::string{static_cast<char>(main), 5}, InternedString::KIND_PY_STACK);
  p.Add({.op = OP_PY_SAMPLER, .start_ns = kT0 + kUs, .end_ns = kT0 + kUs, .result = 1,
         .aux = 100});
  for (int64_t at : {10, 20}) {
    p.Add({.op = OP_PY_SAMPLE, .start_ns = kT0 + at * kUs, .end_ns = kT0 + (at + 10) * kUs,
           .file = id, .requested = 10 * kUs, .aux = 100});
  }
  p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 40 * kUs);
  PathTable counts_paths, full_paths;
  ProcessResult counts = Analyze(p, AnalysisScope::kCounts, &counts_paths);
  EXPECT_EQ(counts.events, 3u);
  EXPECT_FALSE(counts.py.started);
  EXPECT_TRUE(counts.py.samples.empty());
  ProcessResult full = Analyze(p, AnalysisScope::kFull, &full_paths);
  EXPECT_EQ(full.events, 3u);
  EXPECT_TRUE(full.py.started);
  ASSERT_EQ(full.py.samples.size(), 2u);
  EXPECT_EQ(full.py.samples[1].start_unix_ns, kT0 + 20 * kUs);
  EXPECT_EQ(full.py.samples[1].cpu_ns, 10 * kUs);
  EXPECT_EQ(full.py.samples[1].tid, 100u);
  ASSERT_EQ(full.py.stacks.size(), 1u);
  ASSERT_EQ(full.py.stacks[0].size(), 1u);
  EXPECT_EQ(full.py.functions[full.py.stacks[0][0]].name, "main");
}

TEST(ProcessAnalysisTest, EndTextNamesEveryReason) {
  struct Case {
    EndOfTrace::Reason reason;
    int code;
    const char* text;
  };
  const Case cases[] = {
      {EndOfTrace::REASON_EXIT, 3, "exit 3"},
      {EndOfTrace::REASON_UNDERSCORE_EXIT, 0, "_exit 0"},
      {EndOfTrace::REASON_EXEC, 0, "exec"},
      {EndOfTrace::REASON_ABORT, 0, "abort"},
      {EndOfTrace::REASON_UNLOADED, 0, "unloaded"},
      {EndOfTrace::REASON_UNSPECIFIED, 0, "unknown"},
  };
  for (const Case& c : cases) {
    SyntheticProcess p(300, 1, "/bin/true", {"true"}, kT0);
    p.End(c.reason, c.code, kT0 + kUs);
    PathTable paths;
    EXPECT_EQ(Analyze(p, AnalysisScope::kCounts, &paths).end, c.text) << c.reason;
  }
  SyntheticProcess killed(301, 1, "/bin/true", {"true"}, kT0);
  PathTable paths;
  EXPECT_EQ(Analyze(killed, AnalysisScope::kCounts, &paths).end, "killed (no end record)");
}

}  // namespace
}  // namespace iotap::analyzer
