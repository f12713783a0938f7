// The HTML report: one self-contained page that opens offline, from a ticket
// attachment, with no request to any network.
//
//   std::string page = ReportToHtml(report);   // write it to report.html
//
// The page is viewer/report.html with viewer/report.css and viewer/js/*.js
// inside it (embedded into this binary at build time) and the report, first
// condensed (report_condense.h), as JSON in a
// <script type="application/json" id="iotap-report"> element that the
// page's script reads and draws. See viewer/README.md.
//
// Safety: the JSON is protobuf's JSON of the report with '<', '>', '&',
// U+2028 and U+2029 written as \u escapes (EmbeddableJson), so no string in it
// can end the element or start markup; the page's script inserts text only
// as text; the page's Content-Security-Policy allows only its own script and
// style (by hash) and no request to anything.

#ifndef IOTAP_ANALYZER_OUTPUT_REPORT_HTML_H_
#define IOTAP_ANALYZER_OUTPUT_REPORT_HTML_H_

#include <string>
#include <string_view>

#include "analyzer/output/report_condense.h"
#include "iotap/report.pb.h"

namespace iotap::analyzer {

// The page for `report`, condensed with `options`.
std::string ReportToHtml(const report::Report& report, const CondenseOptions& options = {});

// `json` (any JSON text) with every '<', '>', '&', U+2028 and U+2029 replaced
// by its \uXXXX escape. These characters can only occur inside JSON strings,
// where the escape means the same character, so the result parses to the same
// value, and it contains no "</script", "<!--" or other markup.
std::string EmbeddableJson(std::string_view json);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_REPORT_HTML_H_
