#include "analyzer/read/trace_set.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace iotap::analyzer {

namespace fs = std::filesystem;

absl::StatusOr<std::vector<std::string>> ListTraceFiles(const std::string& path) {
  std::error_code ec;
  fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status)) {
    return absl::NotFoundError(absl::StrCat(path, ": no such file or directory"));
  }
  if (fs::is_regular_file(status)) return std::vector<std::string>{path};
  if (!fs::is_directory(status)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": neither a trace file nor a directory of them"));
  }
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrCat(path, ": cannot list: ", ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& entry = *it;
    std::error_code type_ec;
    // Symbolic links are not followed: a trace directory holds files we wrote.
    if (entry.is_regular_file(type_ec) && !entry.is_symlink(type_ec) &&
        absl::EndsWith(entry.path().filename().string(), ".iotap")) {
      files.push_back(entry.path().string());
    }
  }
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat(
        path, ": no trace files (*.iotap) found; was the job run under `iotap run`?"));
  }
  std::sort(files.begin(), files.end());
  return files;
}

ReadIssue UnreadableFileIssue(const std::string& path, const absl::Status& status) {
  std::string message(status.message());
  if (absl::StartsWith(message, path + ": ")) message.erase(0, path.size() + 2);
  return ReadIssue{path, 0, 0, false, message};
}

TraceSetResult ReadTraceSet(const std::vector<std::string>& files, TraceVisitor* visitor,
                            const std::function<void(size_t, size_t)>& progress) {
  TraceSetResult result;
  for (size_t i = 0; i < files.size(); ++i) {
    absl::Status s = ReadTraceFile(files[i], visitor, &result.issues);
    if (s.ok()) {
      ++result.files_read;
    } else {
      result.issues.push_back(UnreadableFileIssue(files[i], s));
    }
    if (progress) progress(i + 1, files.size());
  }
  return result;
}

}  // namespace iotap::analyzer
