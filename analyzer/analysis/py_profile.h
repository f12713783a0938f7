// Python stack samples (OP_PY_SAMPLE, OP_PY_SAMPLER in trace.proto): what
// one trace file holds, collected while it is read, and how a stack is
// grouped into the costs the report names (a transform, decoding,
// collate_fn, the dataset's __getitem__).
//
//   PySampleCollector collector;              // one per trace file
//   collector.OnEvent(process, event, offset);  // OP_PY_SAMPLE / OP_PY_SAMPLER
//   PySamples samples = collector.Take();       // at the file's end
//
// The run analysis turns the samples of a trainer's group into a
// report::PyProfile (BuildPyProfiles, run_state.h).

#ifndef IOTAP_ANALYZER_ANALYSIS_PY_PROFILE_H_
#define IOTAP_ANALYZER_ANALYSIS_PY_PROFILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/read/event.h"
#include "analyzer/read/process_trace.h"

namespace iotap::analyzer {

// A Python function as the sampler interned it.
struct PyFunction {
  std::string name;  // qualified name: "RandomResizedCrop.forward"
  std::string file;
  int line = 0;      // first line
};

// Splits a KIND_PY_FUNCTION string ("QUALNAME\0FILE\0FIRSTLINE").
PyFunction ParsePyFunction(std::string_view text);

// The qualified names of the functions of KIND_PY_STACK string `id` of
// `process`, outermost first; empty if `id` is no stack.
std::vector<std::string> PyStackFunctions(const ProcessTrace& process, uint32_t id);

struct PySample {
  int64_t start_unix_ns = 0;  // the window over which the thread used cpu_ns
  int64_t end_unix_ns = 0;
  int64_t cpu_ns = 0;
  uint32_t stack = 0;  // index in PySamples::stacks
  uint32_t tid = 0;
};

// One process's samples.
struct PySamples {
  std::vector<PyFunction> functions;
  // Function indices, outermost frame first.
  std::vector<std::vector<uint32_t>> stacks;
  std::vector<PySample> samples;
  bool started = false;      // an OP_PY_SAMPLER said it started
  std::string unavailable;   // what an OP_PY_SAMPLER said when it could not
  // Why it samples with the GIL (from some time on), where it said so:
  // CPU in C code that holds the GIL then goes to the Python code after it.
  std::string with_gil;
};

class PySampleCollector {
 public:
  // `offset` turns the event's CLOCK_MONOTONIC times into wall-clock ns.
  void OnEvent(const ProcessTrace& process, const Event& e, int64_t offset);
  PySamples Take() { return std::move(out_); }

 private:
  uint32_t Stack(const ProcessTrace& process, uint32_t id);
  uint32_t Function(const ProcessTrace& process, uint32_t id);

  PySamples out_;
  absl::flat_hash_map<uint32_t, uint32_t> stack_of_id_;     // trace id -> index
  absl::flat_hash_map<uint32_t, uint32_t> function_of_id_;  // trace id -> index
};

// What a sample's CPU time is charged to in the report's preparation costs.
struct PyCostGroup {
  const char* kind;  // "transform", "decoding", "collate", "getitem", "other"
  std::string name;
};

// The group of a stack (outermost frame first): the innermost frame that is
// decoding (PIL's ImageFile.load, torchvision.io's decoders), a transform
// (a class in torchvision/transforms, or the object Compose called),
// collate_fn (a function whose name holds "collate") or a dataset's
// __getitem__ decides; "other" if none.
PyCostGroup ClassifyPyStack(const std::vector<const PyFunction*>& stack);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_PY_PROFILE_H_
