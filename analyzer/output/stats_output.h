// `iotap stats` as JSON for scripts (every field of proto/iotap/stats.proto,
// with its name as key, in its order) and as text for a terminal: the files
// with most bytes, pipes and sockets, CUDA copies, HDF5 datasets, TFRecord
// files, processes, and what could not be read.
//
//   stats::Stats stats;  // as the analysis fills it (RunCounts, run_analysis.h)
//   std::vector<stats::File> files = ...;  // or the analysis's RunCounts::FillFileRow
//   StatsFileRows rows{files.size(), [&](size_t i, stats::File* row) { *row = files[i]; }};
//   std::cout << StatsToText(stats, rows);

#ifndef IOTAP_ANALYZER_OUTPUT_STATS_OUTPUT_H_
#define IOTAP_ANALYZER_OUTPUT_STATS_OUTPUT_H_

#include <functional>
#include <string>
#include <string_view>

#include "iotap/stats.pb.h"

namespace iotap::analyzer {

// The rows of the files section, made one at a time as they are written:
// `size` rows, and fill(i, row) sets every field of `row` to the i-th (the
// analysis keeps a run's files as its own figures, not as messages;
// RunCounts::FillFileRow). Without them, the stats' own `files`.
struct StatsFileRows {
  size_t size = 0;
  std::function<void(size_t, stats::File*)> fill;
};
// The rows of stats.files.
StatsFileRows RowsOf(const stats::Stats& stats);

std::string StatsToJson(const stats::Stats& stats);
// The same text handed to `sink` in pieces as it is made, for a run too
// large to keep it whole (a million files: half a gigabyte), with the files
// section's rows from `files`.
void StatsToJson(const stats::Stats& stats, const StatsFileRows& files,
                 const std::function<void(std::string_view)>& sink);
std::string StatsToText(const stats::Stats& stats);
std::string StatsToText(const stats::Stats& stats, const StatsFileRows& files);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_STATS_OUTPUT_H_
