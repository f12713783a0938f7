// The report's layers, and its reads no system call shows (mapped reads and
// io_uring requests, issue 15), as text and Markdown: each layer counted in
// its own unit (calls, page faults, requests), the mapped files and io_uring
// files with the caveats the analysis gave.
//
//   absl::StrAppend(&out, LayersToText(report), MappedReadsToText(report));

#ifndef IOTAP_ANALYZER_OUTPUT_REPORT_MAPPED_OUTPUT_H_
#define IOTAP_ANALYZER_OUTPUT_REPORT_MAPPED_OUTPUT_H_

#include <string>

#include "iotap/report.pb.h"

namespace iotap::analyzer {

// The "Layers" section, its heading included.
std::string LayersToText(const report::Report& report);
std::string LayersToMarkdown(const report::Report& report);

// Rows of a file table in Markdown (a ticket's length), whatever --top
// kept: the report's top files, mapped files and io_uring files alike.
inline constexpr int kMarkdownFileRows = 20;

// The "Mapped reads" and "io_uring requests" sections; "" for a run with
// neither. The Markdown tables stop at kMarkdownFileRows rows.
std::string MappedReadsToText(const report::Report& report);
std::string MappedReadsToMarkdown(const report::Report& report);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_REPORT_MAPPED_OUTPUT_H_
