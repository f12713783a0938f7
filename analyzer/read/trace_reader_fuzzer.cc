// Fuzzes the trace reader and everything that consumes what it reads: any
// bytes handed over as a trace file must be read, or refused with an error,
// by `iotap stats`, `iotap dump` and `iotap report` without a crash, a hang,
// a leak or a sanitizer report, and their JSON must stay valid.
//
// The first byte chooses how the rest is used:
// - even: the rest is the file as it is (zstd framing, resynchronisation,
//   truncated frames);
// - odd: the rest is what a frame decompresses to (packets), compressed here
//   into one well-formed frame with its checksum, so that mutations reach the
//   packet and event-chunk decoding instead of dying at the frame checksum.
// Seeds (tests/fuzz/corpus/trace_reader_fuzzer) hold real traces in both
// forms.

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/output/export/dump.h"
#include "analyzer/output/report_output.h"
#include "analyzer/output/stats_output.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/json_tokenizer.h"
#include "tests/fuzz/fuzz_support.h"
#include "zstd.h"

namespace iotap::analyzer {
namespace {

// Whether `text` is exactly one JSON document.
bool IsJson(const std::string& text) {
  JsonTokenizer json(text);
  JsonToken t;
  do {
    if (!json.Next(&t).ok()) return false;
  } while (t.type != JsonToken::kEnd);
  return true;
}

std::string Frame(const uint8_t* data, size_t size) {
  std::string frame(ZSTD_compressBound(size), '\0');
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), data, size);
  ZSTD_freeCCtx(cctx);
  FUZZ_CHECK(!ZSTD_isError(n));
  frame.resize(n);
  return frame;
}

}  // namespace
}  // namespace iotap::analyzer

using namespace iotap::analyzer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes = data[0] % 2 == 0
                          ? std::string(reinterpret_cast<const char*>(data + 1), size - 1)
                          : Frame(data + 1, size - 1);
  static std::FILE* null = std::fopen("/dev/null", "w");
  DumpWriter dump(null);
  std::vector<ReadIssue> issues;
  (void)ReadTraceBytes("fuzz.iotap", bytes, &dump, &issues);
  for (const ReadIssue& issue : issues) (void)issue.ToString();

  // `iotap stats` and `iotap report`, as they run, on the same bytes.
  static iotap::fuzz::MemoryFile file;
  AnalysisOptions options;
  options.threads = 1;
  const uint8_t* start = reinterpret_cast<const uint8_t*>(bytes.data());
  const std::string path = file.Hold(start, bytes.size());
  RunCounts counts = CountTraceFiles({path}, options);
  const StatsFileRows rows{counts.file_rows(),
                           [&](size_t i, iotap::stats::File* row) { counts.FillFileRow(i, row); }};
  std::string json;
  StatsToJson(counts.stats, rows, [&json](std::string_view piece) { json += piece; });
  FUZZ_CHECK(iotap::fuzz::IsValidUtf8(json));
  FUZZ_CHECK(IsJson(json));
  (void)StatsToText(counts.stats, rows);
  if (counts.files_read == 0) return 0;
  absl::StatusOr<iotap::report::Report> analysis = AnalyzeTraceFiles({path}, options);
  if (!analysis.ok()) return 0;
  (void)ReportToText(*analysis);
  std::string markdown = ReportToMarkdown(*analysis);
  FUZZ_CHECK(iotap::fuzz::IsValidUtf8(markdown));
  std::string report_json = ReportToJson(*analysis);
  FUZZ_CHECK(IsJson(report_json));
  return 0;
}
