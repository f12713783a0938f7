// Writes the synthetic runs the browser tests and the viewer benchmark report
// on (analyzer/testing/sample_runs.h):
//
//   make_sample_runs DIR [--wide]
//
// DIR/hostile: file names and arguments meant to break the page;
// DIR/many-steps: 4 trainers of 2 loaders each, 1500 steps each, more steps
// than the HTML report carries one by one (it carries buckets of them);
// with --wide, also DIR/wide: 64 trainers of 40 loaders each on 8 hosts
// (2624 processes, pids repeating from host to host), 200 steps each, more
// processes and trainer groups than the report carries one by one;
// DIR/mapped: a trainer whose loaders read through a file mapping (page
// faults) and io_uring requests.

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "analyzer/testing/sample_runs.h"

int main(int argc, char** argv) {
  const bool wide = argc == 3 && std::strcmp(argv[2], "--wide") == 0;
  if (argc != 2 && !wide) {
    std::fprintf(stderr, "usage: make_sample_runs DIR [--wide]\n");
    return 1;
  }
  const std::filesystem::path dir = argv[1];
  for (const char* name : {"hostile", "many-steps", "wide", "mapped"}) {
    std::filesystem::remove_all(dir / name);
    std::filesystem::create_directories(dir / name);
  }
  iotap::analyzer::WriteHostileRun((dir / "hostile").string());
  iotap::analyzer::WriteManyStepRun((dir / "many-steps").string(), 4, 2, 1500);
  iotap::analyzer::WriteMappedRun((dir / "mapped").string());
  if (wide) iotap::analyzer::WriteManyStepRun((dir / "wide").string(), 64, 40, 200, 8);
  return 0;
}
