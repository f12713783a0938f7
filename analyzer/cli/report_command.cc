// `iotap report`: the analysis of a run, for a terminal, a ticket or a script.

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/output.h"
#ifdef IOTAP_WITH_MPI
#include "analyzer/cluster/mpi_run.h"
#endif
#include "analyzer/findings/findings.h"
#include "analyzer/output/report_html.h"
#include "analyzer/output/report_output.h"

namespace iotap::cli {

namespace {

constexpr char kReportHelp[] =
    "usage: iotap report PATH [--steps LOG]... [--format text|markdown|json]\n"
    "                         [-o FILE] [--html FILE] [--top N] [--rules FILE]\n"
    "                         [--from S] [--to S] [--no-clock-correction]\n"
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
    "  --from S, --to S  analyse only seconds S to S after the run's start: the\n"
    "                events and steps that end in that range (default: all)\n"
    "  --rules FILE  findings' thresholds and wording (a copy of the built-in\n"
    "                analyzer/findings/findings.textproto, edited)\n"
    "  --no-clock-correction\n"
    "                leave each host's times on its own clock (by default a run\n"
    "                on several hosts is put on one clock, fitted from the step\n"
    "                ends of its ranks; the report says how)\n"
    "\n"
    "Exit codes: 0 done, 1 bad usage or the output not written whole (a full disk),\n"
    "2 nothing readable at PATH.\n";

// --from and --to, in seconds (decimals allowed) from the run's start.
absl::StatusOr<analyzer::TimeRange> ParseRange(const Args& args) {
  analyzer::TimeRange range;
  for (const char* flag : {"--from", "--to"}) {
    if (!args.Has(flag)) continue;
    double s = 0;
    if (!absl::SimpleAtod(args.Get(flag), &s) || !(s >= 0) || s > 1e9) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, " takes seconds from the run's start (0 or more), not '",
                       args.Get(flag), "'"));
    }
    int64_t ns = static_cast<int64_t>(std::llround(s * 1e9));
    (std::string_view(flag) == "--from" ? range.from_ns : range.to_ns) = ns;
  }
  if (range.to_ns <= range.from_ns) {
    return absl::InvalidArgumentError("--to must be later than --from");
  }
  return range;
}

// The report of the run at `path`: under an MPI launcher, from the ranks
// of the job (rank 0 gets it, the others nullopt); otherwise from this
// process alone.
absl::StatusOr<std::optional<report::Report>> AnalyzeHereOrOnRanks(
    const std::string& path, const analyzer::AnalysisOptions& options) {
#ifdef IOTAP_WITH_MPI
  if (analyzer::cluster::StartedByLauncher()) {
    return analyzer::cluster::AnalyzeRunOnRanks(path, options);
  }
#endif
  absl::StatusOr<report::Report> r = analyzer::AnalyzeRun(path, options);
  if (!r.ok()) return r.status();
  return std::optional<report::Report>(std::move(*r));
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
                           {"", "--rules", true},
                           {"", "--from", true},
                           {"", "--to", true},
                           {"", "--no-clock-correction", false}});
  std::string format = args.ok() ? args->Get("--format", "text") : "";
  int top = 50;
  absl::StatusOr<analyzer::TimeRange> range =
      args.ok() ? ParseRange(*args) : analyzer::TimeRange();
  bool usage_ok = args.ok() && args->positional().size() == 1 &&
                  (format == "text" || format == "markdown" || format == "json") &&
                  absl::SimpleAtoi(args.ok() ? args->Get("--top", "50") : "50", &top) &&
                  top >= 0 && range.ok();
  if (!usage_ok) {
    std::fprintf(stderr, "iotap report: %s\n\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                 : args->positional().size() != 1 ? "give one PATH"
                 : !range.ok()                    ? std::string(range.status().message()).c_str()
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
  options.correct_clocks = !args->Has("--no-clock-correction");
  options.range = *range;
  bool tty = isatty(2) != 0;
  if (tty) {
    options.progress = [](size_t done, size_t total) {
      std::fprintf(stderr, "\riotap: reading traces %zu/%zu", done, total);
      if (done == total) std::fputs("\n", stderr);
    };
  }
  absl::StatusOr<std::optional<report::Report>> report =
      AnalyzeHereOrOnRanks(args->positional()[0], options);
  if (!report.ok()) {
    std::fprintf(stderr, "iotap report: %s\n", std::string(report.status().message()).c_str());
    return kExitNoInput;
  }
  if (!report->has_value()) return kExitOk;  // a rank other than 0: rank 0 writes
  if (args->Has("--html") &&
      !WriteOutput("iotap report", args->Get("--html"), analyzer::ReportToHtml(**report))) {
    return kExitUsage;
  }
  std::string text = format == "json"       ? analyzer::ReportToJson(**report)
                     : format == "markdown" ? analyzer::ReportToMarkdown(**report)
                                            : analyzer::ReportToText(**report);
  return WriteOutput("iotap report", args->Get("--output"), text) ? kExitOk : kExitUsage;
}

}  // namespace iotap::cli
