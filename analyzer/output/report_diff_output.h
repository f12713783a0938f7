// The comparison of two runs (report_diff.h) as text for a terminal, Markdown
// for a ticket, and JSON for scripts (protobuf's JSON mapping of
// proto/iotap/diff.proto, field names as in the .proto; a figure a run lacks
// is absent, as are the changes computed from it).
//
//   std::cout << DiffToText(DiffReports(before, after));

#ifndef IOTAP_ANALYZER_OUTPUT_REPORT_DIFF_OUTPUT_H_
#define IOTAP_ANALYZER_OUTPUT_REPORT_DIFF_OUTPUT_H_

#include <string>

#include "iotap/diff.pb.h"

namespace iotap::analyzer {

std::string DiffToText(const report::ReportDiff& diff);
std::string DiffToMarkdown(const report::ReportDiff& diff);
std::string DiffToJson(const report::ReportDiff& diff);

// A figure as the outputs show it, by unit: "31.2 ms", "1.50 GiB",
// "12.5%" (a share), "1200 calls"; and a change, signed: "-11.1 ms",
// "+5.0 pp" (a share's change, in percentage points), "+20 calls".
std::string FormatFigure(double value, const std::string& unit);
std::string FormatChange(double change, const std::string& unit);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_REPORT_DIFF_OUTPUT_H_
