// Checks a Perfetto trace written by `iotap export --perfetto` with the schema
// of the fields it writes (analyzer/testing/perfetto_check.h), and that it holds
// slices and counters at all; for the trace of a real job.
//
//   check_perfetto FILE

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "analyzer/testing/perfetto_check.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: check_perfetto FILE\n");
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "FAIL: cannot read %s\n", argv[1]);
    return 1;
  }
  const iotap::analyzer::DecodedTrace t =
      iotap::analyzer::DecodePerfettoTrace(std::string((std::istreambuf_iterator<char>(in)), {}));
  size_t slices = 0, counters = 0;
  for (const auto& [track, list] : t.slices) slices += list.size();
  for (const auto& [track, n] : t.counter_values) counters += static_cast<size_t>(n);
  std::printf("%s: %llu packets, %zu tracks, %zu slices, %zu counter values\n", argv[1],
              static_cast<unsigned long long>(t.packets), t.tracks.size(), slices, counters);
  for (const std::string& p : t.problems) std::fprintf(stderr, "FAIL: %s\n", p.c_str());
  if (slices == 0 || counters == 0) std::fprintf(stderr, "FAIL: no slices or no counters\n");
  return t.problems.empty() && slices > 0 && counters > 0 ? 0 : 1;
}
