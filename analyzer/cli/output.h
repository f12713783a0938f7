// Where a command's output goes: -o FILE, or standard output ("" or "-").
// Every failed write (a full disk, a closed pipe, a quota) is reported, with
// exit status 1, so that a cut-short report never comes with status 0.
//
//   Output out("iotap stats", args->Get("--output"));
//   if (!out.ok()) return kExitUsage;     // could not open: said why
//   out.Write(text);                      // or fprintf(out.file(), ...)
//   if (!out.Close()) return kExitUsage;  // a write failed: said why
//
// WriteOutput does the three at once for output made in memory.

#ifndef IOTAP_ANALYZER_CLI_OUTPUT_H_
#define IOTAP_ANALYZER_CLI_OUTPUT_H_

#include <cstdio>
#include <string>
#include <string_view>

namespace iotap::cli {

class Output {
 public:
  // Opens `path` for writing (truncating it), or takes standard output; on
  // failure says "COMMAND: PATH: reason" on standard error.
  Output(std::string_view command, const std::string& path);
  ~Output();  // closes a file not closed yet, without a word
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  bool ok() const { return file_ != nullptr; }
  std::FILE* file() const { return file_; }
  void Write(std::string_view text);
  // Flushes (and closes a file): false, after saying why, if this or any
  // write before it failed.
  bool Close();

 private:
  std::string command_;
  std::string name_;  // the path, or "standard output"
  std::FILE* file_ = nullptr;
  bool own_ = false;
  int error_ = 0;  // errno of the first failed Write  // a file of ours to close, not standard output
};

// Output, Write and Close: false, after saying why, if any failed.
bool WriteOutput(std::string_view command, const std::string& path, std::string_view text);

}  // namespace iotap::cli

#endif  // IOTAP_ANALYZER_CLI_OUTPUT_H_
