// `iotap stats` and `iotap dump`: the first looks at a trace.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/base/text.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/output.h"
#ifdef IOTAP_WITH_MPI
#include "analyzer/cluster/mpi_run.h"
#endif
#include "analyzer/output/export/dump.h"
#include "analyzer/output/stats_output.h"
#include "analyzer/read/trace_set.h"

namespace iotap::cli {

namespace {

constexpr char kStatsHelp[] =
    "usage: iotap stats PATH [--json] [-o FILE] [--strict]\n"
    "\n"
    "Counts per file (reads, bytes read, writes, bytes written, opens, metadata\n"
    "calls) and per process, summed over every process of the run.\n"
    "\n"
    "  --json      JSON instead of a table\n"
    "  -o FILE     write to FILE instead of standard output\n"
    "  --strict    exit with 3 if any trace was damaged or cut short\n"
    "\n"
    "Damaged or truncated traces are read up to the damage; what was skipped is\n"
    "reported on standard error (and under \"issues\" in JSON).\n"
    "Exit codes: 0 done, 1 bad usage or the output not written whole (a full disk),\n"
    "2 nothing readable, 3 damage with --strict.\n";

constexpr char kDumpHelp[] =
    "usage: iotap dump PATH [-o FILE]\n"
    "\n"
    "Every recorded event as one line of text, per process, in the order each\n"
    "thread recorded them: time since the process started, duration, pid, tid,\n"
    "layer, call, offset, bytes requested, result, errno, file.\n"
    "\n"
    "Exit codes: 0 done, 1 bad usage or the output not written whole (a full disk),\n"
    "2 nothing readable at PATH.\n";

void ReportIssues(const std::vector<analyzer::ReadIssue>& issues) {
  for (const analyzer::ReadIssue& i : issues) {
    std::fprintf(stderr, "iotap: warning: %s\n", analyzer::DisplayName(i.ToString()).c_str());
  }
}

}  // namespace

int StatsCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kStatsHelp)) return kExitOk;
  auto args = Args::Parse(argc, argv,
                          {{"", "--json", false}, {"-o", "--output", true}, {"", "--strict", false}});
  if (!args.ok() || args->positional().size() != 1) {
    std::fprintf(stderr, "iotap stats: %s\n\n%s",
                 args.ok() ? "give one PATH" : std::string(args.status().message()).c_str(),
                 kStatsHelp);
    return kExitUsage;
  }
  auto files = analyzer::ListTraceFiles(args->positional()[0]);
  if (!files.ok()) {
    std::fprintf(stderr, "iotap stats: %s\n", std::string(files.status().message()).c_str());
    return kExitNoInput;
  }
  std::optional<analyzer::RunCounts> counted;  // RunCounts are moved, not assigned
#ifdef IOTAP_WITH_MPI
  // Under an MPI launcher, the ranks of the job count the files; rank 0
  // prints.
  if (analyzer::cluster::StartedByLauncher()) {
    absl::StatusOr<std::optional<analyzer::RunCounts>> on_ranks =
        analyzer::cluster::CountOnRanks(*files, analyzer::AnalysisOptions());
    if (!on_ranks.ok()) {
      std::fprintf(stderr, "iotap stats: %s\n", std::string(on_ranks.status().message()).c_str());
      return kExitNoInput;
    }
    if (!on_ranks->has_value()) return kExitOk;
    counted.emplace(std::move(**on_ranks));
  } else {
    counted.emplace(analyzer::CountTraceFiles(*files, analyzer::AnalysisOptions()));
  }
#else
  counted.emplace(analyzer::CountTraceFiles(*files, analyzer::AnalysisOptions()));
#endif
  const analyzer::RunCounts& counts = *counted;
  for (const stats::Issue& i : counts.stats.issues()) {
    std::fprintf(stderr, "iotap: warning: %s\n", analyzer::DisplayName(i.text()).c_str());
  }
  if (counts.files_read == 0) {
    std::fprintf(stderr, "iotap stats: no trace under %s could be read\n",
                 args->positional()[0].c_str());
    return kExitNoInput;
  }
  bool damaged = counts.stats.issues_size() > 0;
  Output out("iotap stats", args->Get("--output"));
  if (!out.ok()) return kExitUsage;
  const analyzer::StatsFileRows rows{
      counts.file_rows(), [&counts](size_t i, stats::File* row) { counts.FillFileRow(i, row); }};
  if (args->Has("--json")) {
    analyzer::StatsToJson(counts.stats, rows, [&out](std::string_view piece) { out.Write(piece); });
  } else {
    out.Write(analyzer::StatsToText(counts.stats, rows));
  }
  if (!out.Close()) return kExitUsage;
  return damaged && args->Has("--strict") ? kExitDamaged : kExitOk;
}

int DumpCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kDumpHelp)) return kExitOk;
  auto args = Args::Parse(argc, argv, {{"-o", "--output", true}});
  if (!args.ok() || args->positional().size() != 1) {
    std::fprintf(stderr, "iotap dump: %s\n\n%s",
                 args.ok() ? "give one PATH" : std::string(args.status().message()).c_str(),
                 kDumpHelp);
    return kExitUsage;
  }
  auto files = analyzer::ListTraceFiles(args->positional()[0]);
  if (!files.ok()) {
    std::fprintf(stderr, "iotap dump: %s\n", std::string(files.status().message()).c_str());
    return kExitNoInput;
  }
  Output out("iotap dump", args->Get("--output"));
  if (!out.ok()) return kExitUsage;
  analyzer::DumpWriter writer(out.file());
  analyzer::TraceSetResult read = analyzer::ReadTraceSet(*files, &writer);
  const bool written = out.Close();
  ReportIssues(read.issues);
  if (read.files_read == 0) return kExitNoInput;
  return written ? kExitOk : kExitUsage;
}

}  // namespace iotap::cli
