// Read-and-aggregate throughput of the analyzer on one synthetic trace of
// regular reads: decoding alone, `iotap stats`' aggregation, and the full
// per-process analysis. Reported as events per second on one core.

#include <string>

#include "analyzer/process_analysis.h"
#include "analyzer/stats.h"
#include "analyzer/synthetic_trace.h"
#include "analyzer/trace_reader.h"
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

template <typename Visitor, typename... Args>
void Run(benchmark::State& state, Args... args) {
  const std::string& bytes = TraceBytes();
  for (auto _ : state) {
    Visitor v(args...);
    std::vector<ReadIssue> issues;
    auto s = ReadTraceBytes("bench", bytes, &v, &issues);
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * kEvents);
  state.counters["bytes_per_event"] = static_cast<double>(bytes.size()) / kEvents;
}

void BM_Decode(benchmark::State& state) { Run<Counter>(state); }
void BM_Stats(benchmark::State& state) { Run<StatsCollector>(state); }
void BM_ProcessAnalysis(benchmark::State& state) {
  Run<ProcessAnalyzer>(state, kT0, int64_t{1000});
}

BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stats)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProcessAnalysis)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace iotap::analyzer

BENCHMARK_MAIN();
