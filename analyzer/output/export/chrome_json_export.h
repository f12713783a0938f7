// A run as a Chrome trace-event JSON file (chrome://tracing, Perfetto UI,
// speedscope): the same tracks and slices as the Perfetto export
// (perfetto_export.h), as complete ("X") events, counters ("C") and
// process and thread names ("M").
//
//   ExportStats stats;
//   absl::Status s = ExportChromeJson("run/", "run.json", {}, kDefaultChromeJsonMaxEvents, &stats);
//
// JSON repeats every name and path in every event, about 150 bytes each, and
// viewers load the whole file into memory: it is meant for small runs. A run
// with more events than `max_events` is refused before anything is written,
// with an error that gives the count and suggests --perfetto; 0 means no
// limit.

#ifndef IOTAP_ANALYZER_OUTPUT_EXPORT_CHROME_JSON_EXPORT_H_
#define IOTAP_ANALYZER_OUTPUT_EXPORT_CHROME_JSON_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "analyzer/output/export/export_model.h"
#include "analyzer/output/export/perfetto_export.h"

namespace iotap::analyzer {

inline constexpr uint64_t kDefaultChromeJsonMaxEvents = 1'000'000;

absl::Status ExportChromeJson(const std::string& run_path, const std::string& out_path,
                              const ExportOptions& options, uint64_t max_events,
                              ExportStats* stats);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_EXPORT_CHROME_JSON_EXPORT_H_
