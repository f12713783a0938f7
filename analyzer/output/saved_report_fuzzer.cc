// Fuzzes reading a saved report back (`iotap diff` takes reports saved with
// `iotap report --format json`, possibly from someone else): any file must be
// read or refused without a crash, a hang, a leak or a sanitizer report, and
// a report that is read must come out of `iotap diff` (against itself, and
// against an empty run, so that every finding is new or resolved) inert: the
// text and Markdown as valid UTF-8 with no control character but line
// breaks, the Markdown with no raw HTML but its footer, the JSON as valid
// UTF-8 with no '<' or '>'. The error for a refused file is inert too.
// Seeds: reports of the test traces and of hand-made runs
// (tests/fuzz/make-corpus.py).

#include <algorithm>
#include <cstdint>
#include <string>

#include "analyzer/output/report_diff.h"
#include "analyzer/output/report_diff_output.h"
#include "analyzer/output/saved_report.h"
#include "tests/fuzz/fuzz_support.h"

namespace iotap::analyzer {
namespace {

void CheckInert(const std::string& text) {
  FUZZ_CHECK(fuzz::IsValidUtf8(text));
  FUZZ_CHECK(!fuzz::HasControl(text, "\n"));
}

void CheckDiff(const report::ReportDiff& diff) {
  CheckInert(DiffToText(diff));
  std::string md = DiffToMarkdown(diff);
  CheckInert(md);
  // The only markup is the footer's <sub>...</sub>.
  FUZZ_CHECK(std::count(md.begin(), md.end(), '<') == 2);
  FUZZ_CHECK(std::count(md.begin(), md.end(), '>') == 2);
  std::string json = DiffToJson(diff);
  FUZZ_CHECK(fuzz::IsValidUtf8(json));
  FUZZ_CHECK(json.find_first_of("<>") == std::string::npos);
}

}  // namespace
}  // namespace iotap::analyzer

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace iotap::analyzer;
  static iotap::fuzz::MemoryFile file;
  absl::StatusOr<iotap::report::Report> r = ReadSavedReport(file.Hold(data, size));
  if (!r.ok()) {
    CheckInert(std::string(r.status().message()));
    return 0;
  }
  CheckDiff(DiffReports(*r, *r));
  CheckDiff(DiffReports(iotap::report::Report(), *r));
  return 0;
}
