// Writes a synthetic job's traces for the analyzer's scale benchmarks: one
// trainer and loaders that read many files in 4 KiB and 128 KiB pieces, with
// step markers, as many processes and events as asked.
//
//   generate_traces DIR PROCESSES EVENTS_PER_PROCESS
//
// Events are regular like a real data loader's (sequential reads with small
// gaps), so the files compress as real traces do.

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "analyzer/synthetic_trace.h"

using iotap::analyzer::SyntheticProcess;

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: generate_traces DIR PROCESSES EVENTS_PER_PROCESS\n");
    return 1;
  }
  std::string dir = argv[1];
  int processes = std::atoi(argv[2]);
  long events = std::atol(argv[3]);
  std::filesystem::create_directories(dir);
  const int64_t t0 = 1'700'000'000'000'000'000;
  for (int p = 0; p < processes; ++p) {
    bool trainer = p == 0;
    SyntheticProcess proc(1000 + p, trainer ? 1 : 1000, "/usr/bin/python3",
                          {"python3", "train.py"}, t0,
                          trainer ? iotap::ProcessHeader::ORIGIN_EXEC : iotap::ProcessHeader::ORIGIN_FORK);
    int64_t t = t0 + 1000;
    if (trainer) {
      for (long s = 0; s < events / 3; ++s) {
        proc.Marker(iotap::OP_STEP_BEGIN, t, t, s);
        proc.Marker(iotap::OP_DATA_WAIT, t, t + 20'000, s);
        proc.Marker(iotap::OP_STEP_END, t + 100'000, t + 100'000, s);
        t += 100'000;
      }
    } else {
      long files = std::max(1L, events / 64);
      long made = 0;
      for (long f = 0; f < files && made < events; ++f) {
        uint32_t id = proc.Path("/data/shard-" + std::to_string(p) + "-" + std::to_string(f) + ".bin");
        int64_t offset = 0;
        for (int k = 0; k < 64 && made < events; ++k, ++made) {
          uint64_t size = (k % 8 == 0) ? 131072 : 4096;
          int64_t d = 2'000 + (k * 37 % 500);
          proc.Read(iotap::OP_PREAD, t, t + d, id, offset, size);
          offset += static_cast<int64_t>(size);
          t += d + 300 + (k * 13 % 200);
        }
        if (f % 10 == 0) proc.Cpu(t, static_cast<uint64_t>((t - t0) / 2));
      }
    }
    proc.End(iotap::EndOfTrace::REASON_EXIT, 0, t);
    proc.WriteTo(dir + "/p" + std::to_string(p) + ".iotap");
  }
  return 0;
}
