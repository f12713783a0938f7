// The report as text for a terminal, Markdown for a ticket, and JSON for
// scripts (protobuf's JSON mapping of proto/iotap/report.proto, field names
// as in the .proto, every field present).
//
//   std::cout << ReportToText(report);

#ifndef IOTAP_ANALYZER_OUTPUT_REPORT_OUTPUT_H_
#define IOTAP_ANALYZER_OUTPUT_REPORT_OUTPUT_H_

#include <string>

#include "iotap/report.pb.h"

namespace iotap::analyzer {

std::string ReportToText(const report::Report& report);
std::string ReportToMarkdown(const report::Report& report);
std::string ReportToJson(const report::Report& report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_REPORT_OUTPUT_H_
