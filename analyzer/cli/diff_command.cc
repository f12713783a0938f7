// `iotap diff`: two runs side by side, for a before/after tuning ticket.

#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/base/text.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/output.h"
#include "analyzer/findings/findings.h"
#include "analyzer/output/report_diff.h"
#include "analyzer/output/report_diff_output.h"
#include "analyzer/output/saved_report.h"

namespace iotap::cli {

namespace {

constexpr char kDiffHelp[] =
    "usage: iotap diff RUN_A RUN_B [--steps-a LOG]... [--steps-b LOG]...\n"
    "                  [--rules FILE] [--format text|markdown|json] [-o FILE]\n"
    "                  [--no-clock-correction]\n"
    "\n"
    "Compares two runs, A (before) and B (after): their key figures side by side\n"
    "with the change (step times and rate, data stalls and their split, exposed\n"
    "and hidden I/O, bytes, calls, read sizes and latency, loaders' CPU), and\n"
    "which findings were resolved, are new, or persist.\n"
    "\n"
    "Each RUN is a trace directory or file (analysed as `iotap report` does) or\n"
    "a report saved with `iotap report PATH --format json -o FILE`.\n"
    "\n"
    "  --steps-a LOG  a step log of run A (repeatable; see `iotap report --help`)\n"
    "  --steps-b LOG  the same for run B\n"
    "  --rules FILE   findings' thresholds for both runs; saved reports get their\n"
    "                 findings computed again with them (without --rules they keep\n"
    "                 the findings they were saved with)\n"
    "  --format F     text (default), markdown (for a ticket), json (schema:\n"
    "                 proto/iotap/diff.proto)\n"
    "  -o FILE        write to FILE instead of standard output\n"
    "  --no-clock-correction\n"
    "                 leave each host's times on its own clock (see `iotap report\n"
    "                 --help`)\n"
    "\n"
    "A change is \"better\" or \"worse\" where the direction is obvious (a lower\n"
    "stall share is better), \"same\" below 2% (1 percentage point for shares);\n"
    "totals such as the duration are judged only when both runs ran the same\n"
    "number of steps. A figure a run cannot give (no steps, no reads) is n/a.\n"
    "\n"
    "Exit codes: 0 done, 1 bad usage or the output not written whole (a full disk),\n"
    "2 nothing readable at RUN_A or RUN_B.\n";

// Run `label` ("A" or "B") at `path`: a saved report (`saved`), or traces
// analysed now. On failure, says why and returns the exit code.
int Load(const char* label, const std::string& path, bool saved,
         const std::vector<std::string>& step_logs, const rules::RuleSet* rules,
         bool correct_clocks, report::Report* out) {
  absl::StatusOr<report::Report> r;
  if (saved) {
    r = analyzer::ReadSavedReport(path);
    // Both runs judged by the same rules: the saved findings are replaced.
    if (r.ok() && rules != nullptr) analyzer::AddFindings(*rules, &*r);
  } else {
    analyzer::AnalysisOptions options;
    options.step_logs = step_logs;
    options.rules = rules;
    options.correct_clocks = correct_clocks;
    if (isatty(2) != 0) {
      options.progress = [label](size_t done, size_t total) {
        std::fprintf(stderr, "\riotap: reading traces of %s %zu/%zu", label, done, total);
        if (done == total) std::fputs("\n", stderr);
      };
    }
    r = analyzer::AnalyzeRun(path, options);
  }
  if (!r.ok()) {
    std::string message(r.status().message());
    if (message.find(path) == std::string::npos) message = absl::StrCat(path, ": ", message);
    std::fprintf(stderr, "iotap diff: run %s: %s\n", label, message.c_str());
    return kExitNoInput;
  }
  *out = std::move(*r);
  return kExitOk;
}

}  // namespace

int DiffCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kDiffHelp)) return kExitOk;
  auto args = Args::Parse(argc, argv,
                          {{"", "--steps-a", true},
                           {"", "--steps-b", true},
                           {"", "--format", true},
                           {"-o", "--output", true},
                           {"", "--rules", true},
                           {"", "--no-clock-correction", false}});
  std::string format = args.ok() ? args->Get("--format", "text") : "";
  bool usage_ok = args.ok() && args->positional().size() == 2 &&
                  (format == "text" || format == "markdown" || format == "json");
  if (!usage_ok) {
    std::fprintf(stderr, "iotap diff: %s\n\n%s",
                 !args.ok()                       ? std::string(args.status().message()).c_str()
                 : args->positional().size() != 2 ? "give two runs, RUN_A and RUN_B"
                                                  : "bad --format",
                 kDiffHelp);
    return kExitUsage;
  }
  const std::string& path_a = args->positional()[0];
  const std::string& path_b = args->positional()[1];
  std::vector<std::string> steps_a = args->GetAll("--steps-a");
  std::vector<std::string> steps_b = args->GetAll("--steps-b");
  bool saved_a = analyzer::LooksLikeSavedReport(path_a);
  bool saved_b = analyzer::LooksLikeSavedReport(path_b);
  // Step logs go with traces: a saved report's steps were fixed when it was made.
  auto steps_misplaced = [](bool saved, const std::vector<std::string>& steps, const char* flag,
                            const std::string& path) {
    if (!saved || steps.empty()) return false;
    std::fprintf(stderr, "iotap diff: %s: %s is a saved report; step logs go with traces\n", flag,
                 path.c_str());
    return true;
  };
  if (steps_misplaced(saved_a, steps_a, "--steps-a", path_a) ||
      steps_misplaced(saved_b, steps_b, "--steps-b", path_b)) {
    return kExitUsage;
  }
  rules::RuleSet rules;
  if (args->Has("--rules")) {
    absl::StatusOr<rules::RuleSet> loaded = analyzer::LoadRules(args->Get("--rules"));
    if (!loaded.ok()) {
      std::fprintf(stderr, "iotap diff: %s\n", std::string(loaded.status().message()).c_str());
      return kExitUsage;
    }
    rules = std::move(*loaded);
  }
  const rules::RuleSet* rules_used = args->Has("--rules") ? &rules : nullptr;
  report::Report a, b;
  const bool correct_clocks = !args->Has("--no-clock-correction");
  if (int code = Load("A", path_a, saved_a, steps_a, rules_used, correct_clocks, &a);
      code != kExitOk) {
    return code;
  }
  if (int code = Load("B", path_b, saved_b, steps_b, rules_used, correct_clocks, &b);
      code != kExitOk) {
    return code;
  }

  report::ReportDiff diff = analyzer::DiffReports(a, b);
  diff.mutable_a()->set_path(analyzer::ValidUtf8(path_a));
  diff.mutable_a()->set_source(saved_a ? "saved report" : "traces");
  diff.mutable_b()->set_path(analyzer::ValidUtf8(path_b));
  diff.mutable_b()->set_source(saved_b ? "saved report" : "traces");
  std::string text = format == "json"       ? analyzer::DiffToJson(diff)
                     : format == "markdown" ? analyzer::DiffToMarkdown(diff)
                                            : analyzer::DiffToText(diff);
  return WriteOutput("iotap diff", args->Get("--output"), text) ? kExitOk : kExitUsage;
}

}  // namespace iotap::cli
