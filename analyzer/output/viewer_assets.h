// The HTML report's page, embedded at build time from viewer/ by
// viewer/embed.cmake (the generated viewer_assets.cc in the build tree).
// Internal to report_html.cc and its tests.

#ifndef IOTAP_ANALYZER_OUTPUT_VIEWER_ASSETS_H_
#define IOTAP_ANALYZER_OUTPUT_VIEWER_ASSETS_H_

#include <string_view>

namespace iotap::analyzer::internal {

// The page up to the inside of <script type="application/json" id="iotap-report">,
// and from its closing tag to the end: the report's JSON goes in between.
extern const std::string_view kViewerPageHead;
extern const std::string_view kViewerPageTail;
// Base64 SHA-256 of the embedded script and style, as the page's
// Content-Security-Policy names them.
extern const std::string_view kViewerScriptSha256;
extern const std::string_view kViewerStyleSha256;

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_OUTPUT_VIEWER_ASSETS_H_
