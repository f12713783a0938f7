// Whole synthetic runs for the tests of the outputs (HTML report, Perfetto
// and Chrome exports) and for the browser tests' reports
// (tests/viewer/make_sample_runs.cc), built with SyntheticProcess.
//
//   WriteHostileRun(dir);            // then: iotap report DIR --html out.html
//   for (const std::string& name : HostileNames()) ...   // what must stay inert

#ifndef IOTAP_ANALYZER_TESTING_SAMPLE_RUNS_H_
#define IOTAP_ANALYZER_TESTING_SAMPLE_RUNS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace iotap::analyzer {

// The run's start on the wall clock (ns), as every sample run uses it.
inline constexpr int64_t kSampleRunStartNs = 1'700'000'000'000'000'000;

// File names (the part after "/data/") meant to break whatever shows them:
// markup (`<img src=x onerror=alert(1)>.png`), a script end, quotes, a
// newline, bytes that are not UTF-8, U+2028 and U+2029.
std::vector<std::string> HostileNames();

// A trainer (pid 100, whose argv holds markup and quotes too) with 20 steps
// and their data waits, an fread of a hostile config file, a CUDA copy and an
// HDF5 read made of two POSIX reads; two forked loaders (101, 102) reading
// every hostile file in 4 KiB, 64 KiB and 1 MiB pieces on two threads each,
// with CPU samples. About 300 events in 3 files.
void WriteHostileRun(const std::string& dir);

// A job of `trainers` ranks (pids 1000, 2000, ...; rank 0, 1, ...), each with
// `loaders` forked loaders, `steps` steps of 10 ms with a data wait of 1 to
// 4 ms, and one 64 KiB read per step by a loader; the first trainer also
// copies each batch to the GPU. On `hosts` hosts (node0, node1, ...), where
// the pids repeat from host to host.
void WriteManyStepRun(const std::string& dir, int trainers, int loaders, int steps, int hosts = 1);

// A trainer (pid 500) with 10 steps of 10 ms, each waiting 3 ms for data,
// and two forked loaders: 501 maps /data/train.arrow (256 MiB) and takes one
// major page fault per step, 2 ms long, whose span is 256 KiB (10 faults,
// 2.5 MiB; perf samples, 2 faults lost); 502 submits two io_uring reads of
// 64 KiB of /data/val.bin per step in one io_uring_enter (10 calls, 20
// requests, 1.25 MiB), then one read whose completion is never seen, and 3
// requests through calls the shim did not see.
void WriteMappedRun(const std::string& dir);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_TESTING_SAMPLE_RUNS_H_
