// Read-and-aggregate throughput of the analyzer, on one core, in events per
// second, on two traces:
//
//   BM_Decode...           reading and decoding alone (a visitor that counts)
//   BM_Stats...            what `iotap stats` does: reading, the per-process
//                          counting and the run-wide merge (CountTraceFiles,
//                          one thread), into the stats it prints, every
//                          file's row made as the printing makes it
//   BM_ProcessAnalysis...  the report's per-process analysis of the file
//                          (AnalysisScope::kFull: busy time, series, access
//                          patterns too)
//
// The plain names run on a built-in trace of regular reads (64 reads of 4 KiB
// per file, 1,000,000 events); the ...ManyFiles ones on a built-in trace of
// 100,000 files of 5 events each (what a new file costs); the ...File ones on
// the trace file
// IOTAP_BENCH_TRACE names, such as a DataLoader worker's of the scale job
// (tests/bench/run-analyzer-scale.sh), which opens a new file every ~25
// events:
//
//   IOTAP_BENCH_TRACE=/tmp/iotap-scale/KEY/node01.2040.iotap build/bin/analyzer_benchmark
//       --benchmark_filter=File   (one command line)

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "analyzer/analysis/process_analysis.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/read/path_table.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/testing/synthetic_trace.h"
#include "benchmark/benchmark.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr long kEvents = 1'000'000;

// A built-in trace: a DataLoader worker's process whose events `fill` adds,
// written to a file of this benchmark's own (named after `name`), removed
// at exit.
std::string WriteTrace(const std::string& name, int pid,
                       const std::function<void(SyntheticProcess&)>& fill) {
  static std::vector<std::string>* written = [] {
    std::atexit([] {
      for (const std::string& path : *written) unlink(path.c_str());
    });
    return new std::vector<std::string>;
  }();
  SyntheticProcess p(pid, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0,
                     ProcessHeader::ORIGIN_FORK);
  fill(p);
  std::string path =
      "/tmp/iotap-analyzer-benchmark-" + name + "-" + std::to_string(getpid()) + ".iotap";
  p.WriteTo(path);
  written->push_back(path);
  return path;
}

// The regular trace: 64 reads of 4 KiB per file.
const std::string& RegularTrace() {
  static const std::string path = WriteTrace("regular", 7, [](SyntheticProcess& p) {
    int64_t t = kT0 + 1000;
    for (long i = 0; i < kEvents; ++i) {
      if (i % 64 == 0) p.Path("/data/f" + std::to_string(i / 64));
      uint32_t file = static_cast<uint32_t>(i / 64 + 1);
      int64_t d = 2'000 + (i * 37 % 500);
      p.Read(OP_PREAD, t, t + d, file, (i % 64) * 4096, 4096);
      t += d + 300;
    }
  });
  return path;
}

// A trace of many files and few events each (open, fstat, two reads, close
// of each of kManyFiles files), where what is done once per new file
// (interning its path, its slot, its row in the stats) outweighs the
// counting: its items per second, times 5, are new files per second.
constexpr long kManyFiles = 100'000;
const std::string& ManyFilesTrace() {
  static const std::string path = WriteTrace("files", 8, [](SyntheticProcess& p) {
    int64_t t = kT0 + 1000;
    char name[64];
    for (long i = 0; i < kManyFiles; ++i) {
      snprintf(name, sizeof(name), "/datasets/imagenet/train/n%05ld/%08ld.JPEG", i % 1000, i);
      const uint32_t file = p.Path(name);
      const uint64_t size = 60'000 + static_cast<uint64_t>(i * 7919 % 200'000);
      p.Add({.op = OP_OPENAT, .start_ns = t, .end_ns = t + 20'000, .file = file, .result = 11});
      p.Add({.op = OP_FSTAT, .start_ns = t + 21'000, .end_ns = t + 22'000, .file = file,
             .aux = size});
      p.Read(OP_READ, t + 23'000, t + 60'000, file, 0, size);
      p.Read(OP_READ, t + 61'000, t + 63'000, file, static_cast<int64_t>(size), 0);
      p.Add({.op = OP_CLOSE, .start_ns = t + 64'000, .end_ns = t + 66'000, .file = file});
      t += 100'000;
    }
  });
  return path;
}

// IOTAP_BENCH_TRACE, or "" when unset.
const std::string& FileTrace() {
  static const std::string path = std::getenv("IOTAP_BENCH_TRACE") ? std::getenv("IOTAP_BENCH_TRACE") : "";
  return path;
}

class Counter : public TraceVisitor {
 public:
  void OnEvents(const ProcessTrace&, const EventBatch& b) override {
    events += b.size();
    ++batches;
  }
  size_t events = 0;
  size_t batches = 0;
};

// Runs `work(path)` per iteration; events per second from the file's events.
template <typename Work>
void Run(benchmark::State& state, const std::string& path, Work work) {
  if (path.empty()) {
    state.SkipWithError("IOTAP_BENCH_TRACE is not set");
    return;
  }
  Counter count;
  std::vector<ReadIssue> issues;
  if (!ReadTraceFile(path, &count, &issues).ok() || count.events == 0) {
    state.SkipWithError("the trace cannot be read, or holds no event");
    return;
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const auto file_bytes = static_cast<double>(in.tellg());
  for (auto _ : state) work(path);
  const auto events = static_cast<int64_t>(count.events);
  state.SetItemsProcessed(state.iterations() * events);
  state.counters["bytes_per_event"] = file_bytes / static_cast<double>(events);
  state.counters["events_per_batch"] =
      static_cast<double>(events) / static_cast<double>(std::max<size_t>(1, count.batches));
}

void Decode(const std::string& path) {
  Counter v;
  std::vector<ReadIssue> issues;
  benchmark::DoNotOptimize(ReadTraceFile(path, &v, &issues));
}

void Stats(const std::string& path) {
  AnalysisOptions options;
  options.threads = 1;
  RunCounts counts = CountTraceFiles({path}, options);
  // Every file's row, as `iotap stats` makes each to print it.
  stats::File row;
  for (size_t i = 0; i < counts.file_rows(); ++i) {
    counts.FillFileRow(i, &row);
    benchmark::DoNotOptimize(row);
  }
  benchmark::DoNotOptimize(counts);
}

// The run's path table, shared by every process's analysis as in a run: a
// path is added and classified once, by the first process that touches it.
PathTable* RunPaths() {
  static auto* paths = new PathTable;
  return paths;
}

void ProcessAnalysis(const std::string& path) {
  ProcessAnalyzer v(AnalysisScope::kFull, RunPaths(), kT0, int64_t{1000});
  std::vector<ReadIssue> issues;
  benchmark::DoNotOptimize(ReadTraceFile(path, &v, &issues));
  benchmark::DoNotOptimize(v.Take());
}

void BM_Decode(benchmark::State& state) { Run(state, RegularTrace(), Decode); }
void BM_Stats(benchmark::State& state) { Run(state, RegularTrace(), Stats); }
void BM_ProcessAnalysis(benchmark::State& state) { Run(state, RegularTrace(), ProcessAnalysis); }
void BM_DecodeManyFiles(benchmark::State& state) { Run(state, ManyFilesTrace(), Decode); }
void BM_StatsManyFiles(benchmark::State& state) { Run(state, ManyFilesTrace(), Stats); }
void BM_DecodeFile(benchmark::State& state) { Run(state, FileTrace(), Decode); }
void BM_StatsFile(benchmark::State& state) { Run(state, FileTrace(), Stats); }
void BM_ProcessAnalysisFile(benchmark::State& state) { Run(state, FileTrace(), ProcessAnalysis); }

BENCHMARK(BM_Decode)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stats)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProcessAnalysis)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeManyFiles)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StatsManyFiles)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeFile)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StatsFile)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProcessAnalysisFile)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace iotap::analyzer

BENCHMARK_MAIN();
