// The iotap subcommands. Each takes the words after its name and returns the
// process exit code (see kExit*).

#ifndef IOTAP_ANALYZER_CLI_COMMANDS_H_
#define IOTAP_ANALYZER_CLI_COMMANDS_H_

namespace iotap::cli {

// Exit codes shared by every subcommand except `run` (which returns the
// traced command's own status).
inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;     // bad options or arguments
inline constexpr int kExitNoInput = 2;   // nothing readable at PATH
inline constexpr int kExitDamaged = 3;   // with --strict: some input was damaged

int DiffCommand(int argc, char** argv);
int RunCommand(int argc, char** argv);
int StatsCommand(int argc, char** argv);
int DumpCommand(int argc, char** argv);
int ReportCommand(int argc, char** argv);
int ExportCommand(int argc, char** argv);
int TopCommand(int argc, char** argv);

}  // namespace iotap::cli

#endif  // IOTAP_ANALYZER_CLI_COMMANDS_H_
