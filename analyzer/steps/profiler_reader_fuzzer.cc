// Fuzzes the PyTorch profiler trace reader: any file, plain or gzip, must be
// read or refused without a crash, a hang, a leak or a sanitizer report, and
// what is read must be a well-formed StepLog. Seeds: the Kineto fixtures
// (../shared/fixtures/kineto) and Debian's PyTorch 1.13 flavour, cut down.

#include <cstdint>

#include "analyzer/steps/profiler_reader.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/step_log_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static iotap::fuzz::MemoryFile file;
  iotap::fuzz::CheckStepLog(iotap::analyzer::ReadProfilerTrace(file.Hold(data, size)));
  return 0;
}
