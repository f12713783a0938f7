#include "analyzer/cli/output.h"

#include <cerrno>
#include <cstring>

namespace iotap::cli {

namespace {

void SayWhy(const std::string& command, const std::string& name, int err) {
  std::fprintf(stderr, "%s: %s: %s\n", command.c_str(), name.c_str(),
               err != 0 ? std::strerror(err) : "a write failed");
}

}  // namespace

Output::Output(std::string_view command, const std::string& path) : command_(command) {
  if (path.empty() || path == "-") {
    name_ = "standard output";
    file_ = stdout;
    return;
  }
  name_ = path;
  file_ = std::fopen(path.c_str(), "w");
  own_ = file_ != nullptr;
  if (file_ == nullptr) SayWhy(command_, name_, errno);
}

Output::~Output() {
  if (own_ && file_ != nullptr) std::fclose(file_);
}

void Output::Write(std::string_view text) {
  if (file_ == nullptr) return;
  errno = 0;
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size() && error_ == 0) {
    error_ = errno;
  }
}

bool Output::Close() {
  if (file_ == nullptr) return false;
  errno = 0;
  bool ok = std::fflush(file_) == 0 && std::ferror(file_) == 0;
  int err = error_ != 0 ? error_ : errno;
  if (own_) {
    if (std::fclose(file_) != 0 && ok) {
      ok = false;
      err = errno;
    }
    own_ = false;
  }
  file_ = nullptr;
  if (!ok) SayWhy(command_, name_, err);
  return ok;
}

bool WriteOutput(std::string_view command, const std::string& path, std::string_view text) {
  Output out(command, path);
  if (!out.ok()) return false;
  out.Write(text);
  return out.Close();
}

}  // namespace iotap::cli
