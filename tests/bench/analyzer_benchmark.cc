// Read-and-aggregate throughput of the analyzer on one synthetic trace of
// regular reads: decoding alone, `iotap stats`' aggregation, and the full
// per-process analysis. Reported as events per second on one core.

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "analyzer/analysis/process_analysis.h"
#include "analyzer/analysis/stats.h"
#include "analyzer/read/path_table.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/testing/synthetic_trace.h"
#include "benchmark/benchmark.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr long kEvents = 1'000'000;

const std::string& TraceBytes() {
  static const std::string* bytes = [] {
    SyntheticProcess p(7, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0,
                       ProcessHeader::ORIGIN_FORK);
    int64_t t = kT0 + 1000;
    for (long i = 0; i < kEvents; ++i) {
      if (i % 64 == 0) p.Path("/data/f" + std::to_string(i / 64));
      uint32_t file = static_cast<uint32_t>(i / 64 + 1);
      int64_t d = 2'000 + (i * 37 % 500);
      p.Read(OP_PREAD, t, t + d, file, (i % 64) * 4096, 4096);
      t += d + 300;
    }
    return new std::string(p.Bytes());
  }();
  return *bytes;
}

class Counter : public TraceVisitor {
 public:
  void OnEvents(const ProcessTrace&, const EventBatch& b) override { events += b.size(); }
  size_t events = 0;
};

// IOTAP_BENCH_TRACE=FILE: a trace of one's own instead (a file that
// generate_traces wrote, or a real one).
const std::string& FileBytes() {
  static const std::string* bytes = [] {
    const char* path = std::getenv("IOTAP_BENCH_TRACE");
    auto* s = new std::string;
    if (path == nullptr) return s;
    std::ifstream in(path, std::ios::binary);
    s->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    return s;
  }();
  return *bytes;
}

template <typename Visitor, typename... Args>
void Run(benchmark::State& state, const std::string& bytes, Args... args) {
  if (bytes.empty()) {
    state.SkipWithError("IOTAP_BENCH_TRACE is not set or names an empty file");
    return;
  }
  Counter count;
  std::vector<ReadIssue> ignored;
  auto counted = ReadTraceBytes("bench", bytes, &count, &ignored);
  benchmark::DoNotOptimize(counted);
  for (auto _ : state) {
    Visitor v(args...);
    std::vector<ReadIssue> issues;
    auto s = ReadTraceBytes("bench", bytes, &v, &issues);
    benchmark::DoNotOptimize(s);
  }
  const auto events = static_cast<int64_t>(count.events);
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["bytes_per_event"] = static_cast<double>(bytes.size()) / events;
}

void BM_Decode(benchmark::State& state) { Run<Counter>(state, TraceBytes()); }
void BM_Stats(benchmark::State& state) { Run<StatsCollector>(state, TraceBytes()); }
// The run's path table, shared by every process's analysis as in a run: a
// path is added and classified once, by the first process that touches it.
PathTable* RunPaths() {
  static auto* paths = new PathTable;
  return paths;
}

void BM_ProcessAnalysis(benchmark::State& state) {
  Run<ProcessAnalyzer>(state, TraceBytes(), kT0, int64_t{1000}, RunPaths());
}
void BM_DecodeFile(benchmark::State& state) { Run<Counter>(state, FileBytes()); }
void BM_StatsFile(benchmark::State& state) { Run<StatsCollector>(state, FileBytes()); }
void BM_ProcessAnalysisFile(benchmark::State& state) {
  Run<ProcessAnalyzer>(state, FileBytes(), kT0, int64_t{1000}, RunPaths());
}

BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stats)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProcessAnalysis)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeFile)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StatsFile)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProcessAnalysisFile)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace iotap::analyzer

BENCHMARK_MAIN();
