// `iotap export`: a run's events for trace viewers (Perfetto, chrome://tracing).

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/text.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/output/export/chrome_json_export.h"
#include "analyzer/output/export/perfetto_export.h"

namespace iotap::cli {

namespace {

constexpr char kExportHelp[] =
    "usage: iotap export PATH [--perfetto FILE] [--chrome-json FILE [--max-events N]]\n"
    "\n"
    "Writes every traced call of the run at PATH, one slice per call on a track\n"
    "per thread, with the training steps, their data waits and counters of\n"
    "bandwidth, CPU use and waiting over time, for a trace viewer.\n"
    "\n"
    "  --perfetto FILE     a Perfetto trace (TrackEvent protobuf): open it in the\n"
    "                      Perfetto UI (ui.perfetto.dev loads it inside the\n"
    "                      browser, nothing is uploaded) or trace_processor\n"
    "  --chrome-json FILE  Chrome's trace-event JSON (chrome://tracing), for small\n"
    "                      runs: refused beyond --max-events events\n"
    "  --max-events N      the limit for --chrome-json (default 1000000; 0: none)\n"
    "\n"
    "Exit codes: 0 done, 1 bad usage or the run is too large for --chrome-json,\n"
    "2 nothing readable at PATH.\n";

void Summarize(const std::string& path, const analyzer::ExportStats& s) {
  std::fprintf(
      stderr,
      "iotap export: wrote %s (%s): %llu processes, %llu tracks, %llu slices, %llu counter "
      "values%s\n",
      path.c_str(), analyzer::HumanBytes(static_cast<double>(s.bytes)).c_str(),
      static_cast<unsigned long long>(s.processes), static_cast<unsigned long long>(s.tracks),
      static_cast<unsigned long long>(s.slices), static_cast<unsigned long long>(s.counters),
      s.clipped == 0 ? ""
                     : absl::StrFormat("; %d slices overlapped the end of the call around "
                                       "them and were cut there",
                                       s.clipped)
                           .c_str());
}

}  // namespace

int ExportCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kExportHelp)) return kExitOk;
  auto args = Args::Parse(
      argc, argv,
      {{"", "--perfetto", true}, {"", "--chrome-json", true}, {"", "--max-events", true}});
  uint64_t max_events = analyzer::kDefaultChromeJsonMaxEvents;
  std::string problem;
  if (!args.ok()) {
    problem = std::string(args.status().message());
  } else if (args->positional().size() != 1) {
    problem = "give one PATH";
  } else if (!args->Has("--perfetto") && !args->Has("--chrome-json")) {
    problem = "say what to write: --perfetto FILE or --chrome-json FILE";
  } else if (args->Has("--max-events") &&
             !absl::SimpleAtoi(args->Get("--max-events"), &max_events)) {
    problem = "bad --max-events";
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "iotap export: %s\n\n%s", problem.c_str(), kExportHelp);
    return kExitUsage;
  }
  const std::string run = args->positional()[0];
  analyzer::ExportOptions options;
  for (const char* flag : {"--perfetto", "--chrome-json"}) {
    if (!args->Has(flag)) continue;
    const std::string out = args->Get(flag);
    analyzer::ExportStats stats;
    absl::Status s = std::string(flag) == "--perfetto"
                         ? analyzer::ExportPerfetto(run, out, options, &stats)
                         : analyzer::ExportChromeJson(run, out, options, max_events, &stats);
    if (!s.ok()) {
      std::fprintf(stderr, "iotap export: %s\n", std::string(s.message()).c_str());
      // The analysis says "nothing readable" (or that PATH holds no trace)
      // before anything is written; every other failure is the output's.
      return stats.processes == 0 && !absl::IsFailedPrecondition(s) && s.message().find(out) != 0
                 ? kExitNoInput
                 : kExitUsage;
    }
    Summarize(out, stats);
  }
  return kExitOk;
}

}  // namespace iotap::cli
