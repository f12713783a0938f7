// The report's Python profiles (report::PyProfile) as text and Markdown
// tables: preparation's costs, its functions, and the trainer's hot spots.
//
//   absl::StrAppend(&out, PyProfilesToText(report));

#ifndef IOTAP_ANALYZER_OUTPUT_PY_PROFILE_OUTPUT_H_
#define IOTAP_ANALYZER_OUTPUT_PY_PROFILE_OUTPUT_H_

#include <string>

#include "iotap/report.pb.h"

namespace iotap::analyzer {

// "" when the report has no profile.
std::string PyProfilesToText(const report::Report& report);
std::string PyProfilesToMarkdown(const report::Report& report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_PY_PROFILE_OUTPUT_H_
