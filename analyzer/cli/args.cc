#include "analyzer/cli/args.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace iotap::cli {

bool IsHelpWord(std::string_view word) { return word == "--help" || word == "-h"; }

bool ShowHelpIfAsked(int argc, char** argv, std::string_view help, bool command_follows) {
  for (int i = 0; i < argc; ++i) {
    std::string_view word = argv[i];
    if (word == "--") return false;
    if (IsHelpWord(word)) {
      std::fwrite(help.data(), 1, help.size(), stdout);
      return true;
    }
    if (command_follows && !word.empty() && word[0] != '-') return false;
  }
  return false;
}

absl::StatusOr<Args> Args::Parse(int argc, char** argv, const std::vector<OptionSpec>& specs,
                                 bool stop_at_first_positional) {
  Args args;
  bool options_over = false;
  for (int i = 0; i < argc; ++i) {
    std::string word = argv[i];
    if (options_over || word.size() < 2 || word[0] != '-') {
      args.positional_.push_back(word);
      if (stop_at_first_positional) options_over = true;
      continue;
    }
    if (word == "--") {
      options_over = true;
      continue;
    }
    std::string name = word;
    std::string value;
    bool inline_value = false;
    size_t eq = word.find('=');
    if (word.rfind("--", 0) == 0 && eq != std::string::npos) {
      name = word.substr(0, eq);
      value = word.substr(eq + 1);
      inline_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs) {
      if (name == s.long_name || (!s.short_name.empty() && name == s.short_name)) spec = &s;
    }
    if (spec == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown option ", name));
    }
    if (spec->takes_value && !inline_value) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(absl::StrCat(name, " needs a value"));
      }
      value = argv[++i];
    } else if (!spec->takes_value && inline_value) {
      return absl::InvalidArgumentError(absl::StrCat(name, " takes no value"));
    }
    args.values_[spec->long_name].push_back(value);
  }
  return args;
}

std::string Args::Get(const std::string& long_name, const std::string& fallback) const {
  auto it = values_.find(long_name);
  return it == values_.end() ? fallback : it->second.back();
}

std::vector<std::string> Args::GetAll(const std::string& long_name) const {
  auto it = values_.find(long_name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

}  // namespace iotap::cli
