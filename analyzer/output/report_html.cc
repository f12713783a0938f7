#include "analyzer/output/report_html.h"

#include "absl/strings/str_cat.h"
#include "analyzer/output/viewer_assets.h"
#include "google/protobuf/util/json_util.h"

namespace iotap::analyzer {

std::string EmbeddableJson(std::string_view json) {
  std::string out;
  out.reserve(json.size() + json.size() / 16);
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
        if (static_cast<unsigned char>(c) == 0xE2 && i + 2 < json.size() &&
            static_cast<unsigned char>(json[i + 1]) == 0x80 &&
            (static_cast<unsigned char>(json[i + 2]) == 0xA8 ||
             static_cast<unsigned char>(json[i + 2]) == 0xA9)) {
          out += static_cast<unsigned char>(json[i + 2]) == 0xA8 ? "\\u2028" : "\\u2029";
          i += 2;
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string ReportToHtml(const report::Report& report, const CondenseOptions& options) {
  report::Report condensed = CondenseReport(report, options);
  google::protobuf::util::JsonPrintOptions print;
  print.add_whitespace = false;
  print.preserve_proto_field_names = true;
  // Zeros and empty fields are left out (the page reads them as proto3
  // defaults): a third of the size of a report with every field present.
  print.always_print_primitive_fields = false;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(condensed, &json, print);
  if (!status.ok()) {
    // Only invalid UTF-8 in a string field could get here, and every string
    // the analysis stores goes through ValidUtf8 first.
    json = absl::StrCat(
        "{\"notes\":[{\"level\":\"WARNING\",\"message\":\"the report could not be "
        "written as JSON\"}]}");
  }
  std::string page;
  const std::string embedded = EmbeddableJson(json);
  page.reserve(internal::kViewerPageHead.size() + embedded.size() +
               internal::kViewerPageTail.size());
  page.append(internal::kViewerPageHead);
  page.append(embedded);
  page.append(internal::kViewerPageTail);
  return page;
}

}  // namespace iotap::analyzer
