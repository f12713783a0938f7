// Reports saved by `iotap report --format json`, read back, so that a run
// analysed once can be compared later without its traces (`iotap diff`).
//
//   if (LooksLikeSavedReport(path)) {
//     absl::StatusOr<report::Report> r = ReadSavedReport(path);
//   }

#ifndef IOTAP_ANALYZER_OUTPUT_SAVED_REPORT_H_
#define IOTAP_ANALYZER_OUTPUT_SAVED_REPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// Whether `path` is a regular file whose first non-blank byte is '{'. Trace
// files start with zstd's magic number (28 b5 2f fd), so the two never mix.
bool LooksLikeSavedReport(const std::string& path);

// The report in the JSON file at `path` (protobuf's JSON mapping of
// proto/iotap/report.proto). Fields this iotap does not know (a newer
// iotap's) are ignored. Fails, naming the file, when it cannot be read, is
// not JSON of that schema, or has no schema_version (JSON, but not a report).
absl::StatusOr<report::Report> ReadSavedReport(const std::string& path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_SAVED_REPORT_H_
