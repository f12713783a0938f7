// The CUDA layer against the test doubles (tests/integration/cuda_fake/):
// every wrapped entry point, reached each way a program reaches it, records
// exactly the event its call describes, and returns what it returned
// untraced, with the same data.

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/cuda_expect.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

std::string CallsLibrary() { return std::string(IOTAP_BINARY_DIR) + "/lib/libiotap_cuda_calls.so"; }

// Whether a call's line has an injected failure (calls.h: every seventh
// call, code 100 + its number) among those that take one.
bool Injectable(const std::string& symbol) {
  SymbolKind k = CudaSymbols().at(symbol).kind;
  return k == SymbolKind::kCopy || k == SymbolKind::kCufileRead || k == SymbolKind::kCufileWrite ||
         k == SymbolKind::kCufileBatch;
}

class CudaTest : public ::testing::Test {
 protected:
  // Runs `argv` (whose last argument is the cuFile scratch file) untraced and
  // traced, checks both print the same and every event, returns the lines.
  std::vector<CallLine> RunAndCheck(const std::vector<std::string>& argv) {
    RunResult plain = RunProgram(argv);
    RunResult traced = RunPreloaded(argv, trace_);
    EXPECT_EQ(plain.exit_code, 0) << plain.err;
    EXPECT_EQ(traced.exit_code, 0) << traced.err;
    EXPECT_EQ(traced.out, plain.out);
    std::vector<CallLine> lines = ParseCallLines(traced.out);
    LoadedRun run = LoadRun(trace_);
    auto opens = run.On(argv.back(), OP_OPEN);
    EXPECT_EQ(opens.size(), 1u);
    int64_t fd = opens.empty() ? -1 : opens[0]->result;
    ExpectEventsMatch(lines, CudaEvents(run), argv.back(), fd);
    for (size_t i = 0; i < lines.size(); ++i) {
      bool fails = i % 7 == 6 && Injectable(lines[i].symbol);
      EXPECT_EQ(lines[i].rc, fails ? static_cast<long>(100 + i) : 0) << lines[i].text;
    }
    return lines;
  }

  std::set<std::string> Symbols(const std::vector<CallLine>& lines) {
    std::set<std::string> s;
    for (const CallLine& l : lines) s.insert(l.symbol);
    return s;
  }

  TempDir dir_;
  std::string trace_ = dir_.Sub("trace");
  std::string file_ = dir_.Sub("cufile.bin");
};

TEST_F(CudaTest, MapAndTestsNameTheSameSymbols) {
  std::set<std::string> tested;
  for (const auto& [symbol, facts] : CudaSymbols()) tested.insert(symbol);
  tested.insert("dlsym");  // cuda_dlsym_test
  EXPECT_EQ(MapCudaSymbols(), tested);
  EXPECT_EQ(tested.size(), 70u);
}

TEST_F(CudaTest, EveryEntryPointCalledDirectly) {
  std::vector<CallLine> lines = RunAndCheck({TestProgram("cuda_calls"), "direct", file_});
  ASSERT_EQ(lines.size(), 71u);  // two each of cudaFreeHost and cuMemFreeHost
  std::set<std::string> all;
  for (const auto& [symbol, facts] : CudaSymbols()) all.insert(symbol);
  EXPECT_EQ(Symbols(lines), all);
}

TEST_F(CudaTest, EveryEntryPointThroughDlsym) {
  std::vector<CallLine> lines = RunAndCheck({TestProgram("cuda_calls"), "dlsym", file_});
  EXPECT_EQ(lines.size(), 71u);
}

TEST_F(CudaTest, DriverThroughCuGetProcAddress) {
  std::vector<CallLine> lines = RunAndCheck({TestProgram("cuda_calls"), "procaddress", file_});
  // The driver's copies in both stream modes and its pinned-memory calls.
  EXPECT_EQ(lines.size(), 34u);
  RunResult traced =
      RunPreloaded({TestProgram("cuda_calls"), "procaddress", file_}, dir_.Sub("again"));
  // A version older than the wrapper's ABI gets the driver's own function,
  // and a name the driver lacks fails as it does untraced.
  EXPECT_TRUE(absl::StrContains(traced.out, "procaddress cuMemcpyHtoD@3010 rc=0 same=1\n"))
      << traced.out;
  EXPECT_TRUE(
      absl::StrContains(traced.out, "procaddress cuNoSuchFunction rc=500 null=1 status=1\n"));
}

// The CUDA libraries loaded by a library that was itself loaded with
// RTLD_LOCAL: dlsym(RTLD_NEXT) cannot see them.
TEST_F(CudaTest, PrivatelyLoadedLibrariesCalledDirectly) {
  std::vector<CallLine> lines =
      RunAndCheck({TestProgram("cuda_calls_private"), CallsLibrary(), "direct", file_});
  EXPECT_EQ(lines.size(), 71u);
}

TEST_F(CudaTest, PrivatelyLoadedLibrariesThroughDlsym) {
  std::vector<CallLine> lines =
      RunAndCheck({TestProgram("cuda_calls_private"), CallsLibrary(), "dlsym", file_});
  EXPECT_EQ(lines.size(), 71u);
}

TEST_F(CudaTest, PrivatelyLoadedDriverThroughCuGetProcAddress) {
  std::vector<CallLine> lines =
      RunAndCheck({TestProgram("cuda_calls_private"), CallsLibrary(), "procaddress", file_});
  EXPECT_EQ(lines.size(), 34u);
}

// `iotap stats --json` of a run: its "cuda_copies" groups by key, and the
// cuFile counts of the scratch file.
struct CopyGroup {
  uint64_t calls = 0, failed = 0, bytes = 0;
  bool operator==(const CopyGroup&) const = default;
};
using GroupKey = std::tuple<std::string, std::string, std::string>;

TEST_F(CudaTest, StatsAddUpEveryCopyAndFileTransfer) {
  std::vector<CallLine> lines = RunAndCheck({TestProgram("cuda_calls"), "direct", file_});
  std::map<GroupKey, CopyGroup> expected;
  uint64_t gds_reads = 0, gds_writes = 0, gds_read_bytes = 0;
  for (const CallLine& l : lines) {
    const SymbolFacts& facts = CudaSymbols().at(l.symbol);
    if (facts.kind == SymbolKind::kCufileRead) {
      ++gds_reads;
      if (l.rc == 0) gds_read_bytes += l.Number("bytes");
    }
    if (facts.kind == SymbolKind::kCufileWrite) ++gds_writes;
    if (facts.kind == SymbolKind::kCufileBatch) {
      ++gds_reads;
      ++gds_writes;
      if (l.rc == 0) gds_read_bytes += std::stoull(l.Field("bytes"));  // the read's, first
    }
    if (facts.kind != SymbolKind::kCopy) continue;
    std::string kind = l.Field("kind"), host = l.Field("host");
    std::string direction = kind == "Peer" ? "peer" : kind == "Default" ? "default" : kind;
    std::string memory = host == "pinned"                          ? "pinned"
                         : host == "pageable" && kind != "Default" ? "pageable"
                         : kind == "DtoD" || kind == "Peer"        ? "none"
                                                                   : "unknown";
    CopyGroup& g = expected[{direction, memory, facts.async ? "async" : "sync"}];
    ++g.calls;
    if (l.rc != 0) {
      ++g.failed;
    } else {
      g.bytes += l.Number("bytes");
    }
  }
  RunResult stats = RunProgram({IotapBinary(), "stats", "--json", trace_});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(stats.out, &root).ok());
  std::map<GroupKey, CopyGroup> actual;
  for (const auto& v : root.fields().at("cuda_copies").list_value().values()) {
    const auto& f = v.struct_value().fields();
    CopyGroup& g = actual[{f.at("direction").string_value(), f.at("host_memory").string_value(),
                           f.at("mode").string_value()}];
    g.calls = static_cast<uint64_t>(f.at("calls").number_value());
    g.failed = static_cast<uint64_t>(f.at("failed_calls").number_value());
    g.bytes = static_cast<uint64_t>(f.at("bytes").number_value());
  }
  EXPECT_EQ(actual, expected);
  int found = 0;
  for (const auto& v : root.fields().at("files").list_value().values()) {
    const auto& f = v.struct_value().fields();
    if (f.at("path").string_value() != file_) continue;
    ++found;
    EXPECT_EQ(f.at("gds_reads").number_value(), gds_reads);
    EXPECT_EQ(f.at("gds_writes").number_value(), gds_writes);
    EXPECT_EQ(f.at("reads").number_value(), gds_reads);  // nothing else reads it
    EXPECT_EQ(f.at("read_bytes").number_value(), gds_read_bytes);
  }
  EXPECT_EQ(found, 1);
}

TEST_F(CudaTest, CudaLayerLeftOutRecordsNoCudaEvents) {
  std::vector<std::string> argv = {TestProgram("cuda_calls"), "direct", file_};
  RunResult plain = RunProgram(argv);
  RunOptions options;
  options.env["IOTAP_LAYERS"] = "posix,stdio";
  RunResult traced = RunPreloaded(argv, trace_, options);
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  LoadedRun run = LoadRun(trace_);
  EXPECT_EQ(CudaEvents(run).size(), 0u);
  EXPECT_EQ(run.On(file_, OP_OPEN).size(), 1u);
}

TEST_F(CudaTest, NoCudaLibraryInTheProcess) {
  // A program that uses no CUDA: traced as usual, nothing CUDA recorded.
  WriteFile(file_, "data");
  RunResult cat = RunPreloaded({"cat", file_}, trace_);
  EXPECT_EQ(cat.out, "data");
  LoadedRun run = LoadRun(trace_);
  EXPECT_EQ(CudaEvents(run).size(), 0u);
  EXPECT_EQ(run.On(file_, OP_OPEN).size(), 1u);
  // A program that finds the shim's cudaMemcpy in the global scope with no
  // runtime loaded gets an error back (cudaErrorSymbolNotFound), not a crash.
  EXPECT_EQ(RunProgram({TestProgram("cuda_calls_private"), "none"}).out,
            "probe cudaMemcpy absent\n");
  RunResult probe = RunPreloaded({TestProgram("cuda_calls_private"), "none"}, dir_.Sub("probe"));
  EXPECT_EQ(probe.exit_code, 0);
  EXPECT_EQ(probe.out, "probe cudaMemcpy rc=500\n");
  std::vector<LoadedEvent> events = CudaEvents(LoadRun(dir_.Sub("probe")));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].op, OP_CUDA_MEMCPY_HTOH);
  EXPECT_EQ(events[0].requested, 16u);
  EXPECT_EQ(events[0].result, 500);
}

}  // namespace
}  // namespace iotap::testing
