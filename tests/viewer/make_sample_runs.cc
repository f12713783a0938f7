// Writes the synthetic runs the browser tests report on (analyzer/sample_runs.h):
//
//   make_sample_runs DIR
//
// DIR/hostile: file names and arguments meant to break the page;
// DIR/many-steps: 4 trainers of 2 loaders each, 1500 steps each, more steps
// than the HTML report carries one by one (it carries buckets of them).

#include <cstdio>
#include <filesystem>
#include <string>

#include "analyzer/sample_runs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_sample_runs DIR\n");
    return 1;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::remove_all(dir / "hostile");
  std::filesystem::remove_all(dir / "many-steps");
  std::filesystem::create_directories(dir / "hostile");
  std::filesystem::create_directories(dir / "many-steps");
  iotap::analyzer::WriteHostileRun((dir / "hostile").string());
  iotap::analyzer::WriteManyStepRun((dir / "many-steps").string(), 4, 2, 1500);
  return 0;
}
