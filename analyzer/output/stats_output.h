// `iotap stats` as JSON for scripts (every field of proto/iotap/stats.proto,
// with its name as key, in its order) and as text for a terminal: the files
// with most bytes, pipes and sockets, CUDA copies, HDF5 datasets, TFRecord
// files, processes, and what could not be read.
//
//   stats::Stats stats;  // as the analysis fills it (CountTraceFiles, run_analysis.h)
//   std::cout << StatsToText(stats);

#ifndef IOTAP_ANALYZER_OUTPUT_STATS_OUTPUT_H_
#define IOTAP_ANALYZER_OUTPUT_STATS_OUTPUT_H_

#include <functional>
#include <string>
#include <string_view>

#include "iotap/stats.pb.h"

namespace iotap::analyzer {

std::string StatsToJson(const stats::Stats& stats);
// The same text handed to `sink` in pieces as it is made, for a run too
// large to keep it whole (a million files: half a gigabyte).
void StatsToJson(const stats::Stats& stats, const std::function<void(std::string_view)>& sink);
std::string StatsToText(const stats::Stats& stats);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_STATS_OUTPUT_H_
