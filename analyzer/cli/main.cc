// iotap: trace a training job's I/O and tell why it waits for data.

#include <cstdio>
#include <cstring>
#include <string>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/version.h"

namespace {

constexpr char kUsage[] =
    "usage: iotap COMMAND [ARGS]\n"
    "\n"
    "Record:\n"
    "  run [-o DIR] [OPTIONS] -- COMMAND [ARGS]   trace COMMAND and every process it starts\n"
    "\n"
    "Look:\n"
    "  report PATH [--steps LOG] [--format F]     why the job waits for data, and what to change\n"
    "         [--html FILE]                       ... and as a web page with charts\n"
    "  export PATH --perfetto FILE                every call on a timeline, for the Perfetto UI\n"
    "  stats PATH [--json]                        counts per file and per process\n"
    "  dump PATH                                  every event, one line each\n"
    "  diff RUN_A RUN_B [--format F]              two runs (or saved reports) side by side\n"
    "  top DIR [--window S] [--listen ADDR:PORT]  a running job's data stall, live (or --replay)\n"
    "\n"
    "PATH is a trace file or a directory of them (what `iotap run` wrote).\n"
    "`iotap COMMAND --help` describes each command; `iotap --version` prints the\n"
    "version and the commit built.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return iotap::cli::kExitUsage;
  }
  // `iotap --help`, `iotap -h`, `iotap help`.
  if (iotap::cli::IsHelpWord(argv[1]) || std::strcmp(argv[1], "help") == 0) {
    std::fputs(kUsage, stdout);
    return iotap::cli::kExitOk;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::printf("iotap %s (commit %s)\n", iotap::cli::kVersion, iotap::cli::kCommit);
    return iotap::cli::kExitOk;
  }
  std::string command = argv[1];
  int sub_argc = argc - 2;
  char** sub_argv = argv + 2;
  if (command == "run") return iotap::cli::RunCommand(sub_argc, sub_argv);
  if (command == "diff") return iotap::cli::DiffCommand(sub_argc, sub_argv);
  if (command == "stats") return iotap::cli::StatsCommand(sub_argc, sub_argv);
  if (command == "dump") return iotap::cli::DumpCommand(sub_argc, sub_argv);
  if (command == "report") return iotap::cli::ReportCommand(sub_argc, sub_argv);
  if (command == "export") return iotap::cli::ExportCommand(sub_argc, sub_argv);
  if (command == "top") return iotap::cli::TopCommand(sub_argc, sub_argv);
  std::fprintf(stderr, "iotap: unknown command '%s'\n\n%s", command.c_str(), kUsage);
  return iotap::cli::kExitUsage;
}
