// Units of the timeline's series, over the sample run of sample_runs.h.

#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/sample_runs.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(TimelineTest, CpuSeriesAreCoresAndReadSeriesBytesPerSecond) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("iotap-timeline-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  WriteHostileRun(dir.string());
  absl::StatusOr<report::Report> r = AnalyzeRun(dir.string(), AnalysisOptions());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  const report::Timeline& t = r->timeline();
  // Integrated over the run, cores give CPU seconds and bytes/s give bytes:
  // the trainer used 0.6 s of CPU, its two loaders 0.45 s each, and they read
  // 6 files x 12 reads x (4 KiB, 64 KiB or 1 MiB) each, in pairs; the
  // trainer read 8 KiB through HDF5, a 700-byte config file and 4 KiB of a
  // TFRecord shard.
  std::map<std::string, double> integral;
  for (const report::Series& s : t.series()) {
    for (double v : s.values()) integral[s.name()] += v * t.bin_width_s();
  }
  EXPECT_NEAR(integral["CPU of trainer 100"], 0.6, 0.006);
  EXPECT_NEAR(integral["CPU of the loaders of 100"], 0.9, 0.009);
  const double loader_bytes = 2 * 12 * 2 * (4096 + 65536 + (1 << 20));
  EXPECT_NEAR(integral["read by trainer 100 and its loaders"], loader_bytes + 8192 + 700 + 4096,
              loader_bytes * 1e-6);
}

}  // namespace
}  // namespace iotap::analyzer
