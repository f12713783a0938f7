// Fuzzes the JSON-lines step-log reader: any file, plain or gzip, must be
// read or refused without a crash, a hang, a leak or a sanitizer report, and
// what is read must be a well-formed StepLog. Seeds: logs in the documented
// format, with every optional field, and damaged lines.

#include <cstdint>

#include "analyzer/steps/jsonl_reader.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/step_log_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static iotap::fuzz::MemoryFile file;
  iotap::fuzz::CheckStepLog(iotap::analyzer::ReadJsonLinesLog(file.Hold(data, size)));
  return 0;
}
