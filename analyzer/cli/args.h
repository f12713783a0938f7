// A small command-line parser for the iotap subcommands.
//
//   absl::StatusOr<Args> args = Args::Parse(argc, argv, {
//       {"-o", "--output", true}, {"", "--json", false}});
//   if (!args.ok()) ... args.status().message() names the bad option ...
//   bool json = args->Has("--json");
//   std::string out = args->Get("--output");
//
// Options come as "--name VALUE", "--name=VALUE" or "-o VALUE". "--" ends
// option parsing; everything after it is positional (the command of `run`).
//
// Every command answers -h and --help the same way, before parsing:
//
//   if (ShowHelpIfAsked(argc, argv, kReportHelp)) return kExitOk;

#ifndef IOTAP_ANALYZER_CLI_ARGS_H_
#define IOTAP_ANALYZER_CLI_ARGS_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace iotap::cli {

struct OptionSpec {
  std::string short_name;  // "" if none
  std::string long_name;
  bool takes_value;
};

// Whether `word` asks for help: "-h" or "--help".
bool IsHelpWord(std::string_view word);

// If a word before "--" asks for help (IsHelpWord), prints `help` on
// standard output and returns true. With `command_follows`, only the words
// before the first positional one count: in `iotap run python train.py
// --help`, the --help is the job's.
bool ShowHelpIfAsked(int argc, char** argv, std::string_view help, bool command_follows = false);

class Args {
 public:
  // With `stop_at_first_positional`, the first word that is not an option
  // ends option parsing (for `iotap run COMMAND --its-own-flags`).
  static absl::StatusOr<Args> Parse(int argc, char** argv, const std::vector<OptionSpec>& specs,
                                    bool stop_at_first_positional = false);

  bool Has(const std::string& long_name) const { return values_.count(long_name) != 0; }
  // The last value given for the option, or `fallback`.
  std::string Get(const std::string& long_name, const std::string& fallback = "") const;
  // Every value given for a repeatable option, in order.
  std::vector<std::string> GetAll(const std::string& long_name) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
};

}  // namespace iotap::cli

#endif  // IOTAP_ANALYZER_CLI_ARGS_H_
