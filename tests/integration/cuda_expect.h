// What the shim must record for each line the cuda_calls programs print
// (tests/integration/programs/cuda_calls/calls.h).
//
//   std::vector<CallLine> lines = ParseCallLines(result.out);
//   ExpectEventsMatch(lines, CudaEvents(LoadRun(trace_dir)), scratch_file);
//
// The program's line gives each call's inputs and return code; kCudaSymbols
// gives what the entry point is (runtime or driver, synchronous or not,
// legacy or per-thread default stream, which op). The two together say
// exactly what the event must hold.

#ifndef IOTAP_TESTS_INTEGRATION_CUDA_EXPECT_H_
#define IOTAP_TESTS_INTEGRATION_CUDA_EXPECT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/testing.h"

namespace iotap::testing {

struct CallLine {
  std::string symbol;
  std::map<std::string, std::string> fields;  // "kind" -> "HtoD", "bytes" -> "304", ...
  long rc = 0;
  std::string data;  // "ok", "bad" or "-"
  std::string text;  // the whole line, for messages

  const std::string& Field(const std::string& name) const;
  uint64_t Number(const std::string& name) const;  // decimal or 0x hex
};

// The lines of a run that describe calls (not the "procaddress ..." and
// "lifecycle ..." lines).
std::vector<CallLine> ParseCallLines(const std::string& out);

enum class SymbolKind {
  kCopy,  // the op follows the line's kind=
  kHostAlloc,
  kHostFree,
  kHostRegister,
  kHostUnregister,
  kCufileRegister,
  kCufileDeregister,
  kCufileRead,
  kCufileWrite,
  kCufileBatch,
};

struct SymbolFacts {
  SymbolKind kind;
  bool driver = false;      // FLAG_CUDA_DRIVER_API
  bool async = false;       // FLAG_CUDA_ASYNC
  bool per_thread = false;  // stream 0 is recorded as 2
};

// Every CUDA symbol libiotap.so exports (but dlsym), with its facts.
const std::map<std::string, SymbolFacts>& CudaSymbols();

// The CUDA and GPUDirect Storage events of every process, in order.
std::vector<LoadedEvent> CudaEvents(const LoadedRun& run);

// Checks that `events` are exactly the events of `lines`, one by one (a
// batch line has one event per request). `file` is the cuFile calls' file
// and `fd` the descriptor it was registered with.
void ExpectEventsMatch(const std::vector<CallLine>& lines, const std::vector<LoadedEvent>& events,
                       const std::string& file, int64_t fd);

// The symbols named in libiotap.map's CUDA section.
std::set<std::string> MapCudaSymbols();

}  // namespace iotap::testing

#endif  // IOTAP_TESTS_INTEGRATION_CUDA_EXPECT_H_
