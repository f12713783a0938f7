// Fuzzes the TensorBoard event-file reader: any file, plain or gzip, must be
// read or refused without a crash, a hang, a leak or a sanitizer report, and
// what is read must be a well-formed StepLog.
//
// The first byte chooses how the rest is used:
// - even: the rest is the file as it is (framing, CRCs, gzip);
// - odd: the rest is a list of records, each a 2-byte little-endian length
//   and that many bytes of Event, framed here with correct CRCs, so that
//   mutations reach the Event decoding instead of failing the CRC check.
// Seeds (tests/fuzz/corpus/tensorboard_reader_fuzzer): the PyTorch and TF2
// fixtures (../shared/fixtures/tfevents), cut down, in both forms.

#include <cstdint>
#include <cstring>
#include <string>

#include "analyzer/steps/tensorboard_reader.h"
#include "proto/wire/crc32c.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/fuzz/step_log_check.h"

namespace {

void AppendLe(std::string* out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}

std::string Records(const uint8_t* data, size_t size) {
  using iotap::wire::Crc32c;
  using iotap::wire::MaskCrc32c;
  std::string file;
  size_t i = 0;
  while (i + 2 <= size) {
    size_t n = data[i] | static_cast<size_t>(data[i + 1]) << 8;
    i += 2;
    if (n > size - i) n = size - i;
    std::string header;
    AppendLe(&header, n, 8);
    file += header;
    AppendLe(&file, MaskCrc32c(Crc32c(header.data(), 8)), 4);
    file.append(reinterpret_cast<const char*>(data + i), n);
    AppendLe(&file, MaskCrc32c(Crc32c(data + i, n)), 4);
    i += n;
  }
  return file;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static iotap::fuzz::MemoryFile file;
  std::string bytes = data[0] % 2 == 0
                          ? std::string(reinterpret_cast<const char*>(data + 1), size - 1)
                          : Records(data + 1, size - 1);
  const std::string& path = file.Hold(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  iotap::fuzz::CheckStepLog(iotap::analyzer::ReadTensorBoardLog(path));
  return 0;
}
