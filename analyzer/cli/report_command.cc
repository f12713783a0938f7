// `iotap report`: the analysis of a run, for a terminal, a ticket or a script.

#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/strings/numbers.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/findings/findings.h"
#include "analyzer/output/report_html.h"
#include "analyzer/output/report_output.h"

namespace iotap::cli {

namespace {

constexpr char kReportHelp[] =
    "usage: iotap report PATH [--steps LOG]... [--format text|markdown|json]\n"
    "                         [-o FILE] [--html FILE] [--top N]\n"
    "\n"
    "Analyses every trace under PATH, with the framework's step logs if given,\n"
    "and says whether the job waits for data, why, and what to change.\n"
    "\n"
    "  --steps LOG   a TensorBoard event file, a PyTorch profiler trace (.json or\n"
    "                .json.gz) or a JSON-lines step log (repeatable); without one,\n"
    "                steps come from iotap's markers (iotap run --torch-steps)\n"
    "  --format F    text (default), markdown (for a ticket), json (schema:\n"
    "                proto/iotap/report.proto)\n"
    "  -o FILE       write to FILE instead of standard output\n"
    "  --html FILE   also write the report as one self-contained web page\n"
    "                (charts, zoomable timeline, sortable tables; opens offline)\n"
    "  --top N       files listed one by one (default 50)\n"
    "  --rules FILE  findings' thresholds and wording (a copy of the built-in\n"
    "                analyzer/findings/findings.textproto, edited)\n"
    "\n"
    "Exit codes: 0 done, 1 bad usage, 2 nothing readable at PATH.\n";

// Writes `contents` to `path`; says why on stderr if it cannot.
bool WriteFile(const std::string& path, const std::string& contents) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  bool ok = f != nullptr && std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok) std::perror(("iotap report: " + path).c_str());
  return ok;
}

}  // namespace

int ReportCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kReportHelp)) return kExitOk;
  auto args = Args::Parse(argc, argv,
                          {{"", "--steps", true},
                           {"", "--format", true},
                           {"-o", "--output", true},
                           {"", "--top", true},
                           {"", "--html", true},
                           {"", "--rules", true}});
  std::string format = args.ok() ? args->Get("--format", "text") : "";
  int top = 50;
  bool usage_ok = args.ok() && args->positional().size() == 1 &&
                  (format == "text" || format == "markdown" || format == "json") &&
                  absl::SimpleAtoi(args.ok() ? args->Get("--top", "50") : "50", &top) && top >= 0;
  if (!usage_ok) {
    std::fprintf(stderr, "iotap report: %s\n\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                 : args->positional().size() != 1 ? "give one PATH"
                                                  : "bad --format or --top",
                 kReportHelp);
    return kExitUsage;
  }
  analyzer::AnalysisOptions options;
  rules::RuleSet rules;
  if (args->Has("--rules")) {
    absl::StatusOr<rules::RuleSet> loaded = analyzer::LoadRules(args->Get("--rules"));
    if (!loaded.ok()) {
      std::fprintf(stderr, "iotap report: %s\n", std::string(loaded.status().message()).c_str());
      return kExitUsage;
    }
    rules = std::move(*loaded);
    options.rules = &rules;
  }
  options.step_logs = args->GetAll("--steps");
  options.top_files = top;
  bool tty = isatty(2) != 0;
  if (tty) {
    options.progress = [](size_t done, size_t total) {
      std::fprintf(stderr, "\riotap: reading traces %zu/%zu", done, total);
      if (done == total) std::fputs("\n", stderr);
    };
  }
  absl::StatusOr<report::Report> report = analyzer::AnalyzeRun(args->positional()[0], options);
  if (!report.ok()) {
    std::fprintf(stderr, "iotap report: %s\n", std::string(report.status().message()).c_str());
    return kExitNoInput;
  }
  if (args->Has("--html") && !WriteFile(args->Get("--html"), analyzer::ReportToHtml(*report))) {
    return kExitUsage;
  }
  std::string text = format == "json"       ? analyzer::ReportToJson(*report)
                     : format == "markdown" ? analyzer::ReportToMarkdown(*report)
                                            : analyzer::ReportToText(*report);
  std::string out = args->Get("--output");
  if (out.empty() || out == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return kExitOk;
  }
  return WriteFile(out, text) ? kExitOk : kExitUsage;
}

}  // namespace iotap::cli
