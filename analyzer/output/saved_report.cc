#include "analyzer/output/saved_report.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"

namespace iotap::analyzer {

bool LooksLikeSavedReport(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  std::ifstream in(path, std::ios::binary);
  char c;
  while (in.get(c)) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return c == '{';
  }
  return false;
}

absl::StatusOr<report::Report> ReadSavedReport(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": cannot read"));
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  report::Report r;
  auto status = google::protobuf::util::JsonStringToMessage(text.str(), &r, options);
  if (!status.ok()) {
    // The parser's first line says what is wrong; the rest points at it.
    std::string why = status.message().as_string();
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a report saved by `iotap report --format json` (",
                     why.substr(0, why.find('\n')), ")"));
  }
  if (r.schema_version() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ": JSON, but not an iotap report (it has no schema_version); save one with "
                     "`iotap report PATH --format json -o FILE`"));
  }
  return r;
}

}  // namespace iotap::analyzer
