// The trace files of a run: every *.iotap file under a directory (or one
// file), read one after another with problems collected rather than fatal.
//
//   absl::StatusOr<std::vector<std::string>> files = ListTraceFiles("run/");
//   TraceSetResult r = ReadTraceSet(*files, &visitor);
//   for (const ReadIssue& i : r.issues) std::cerr << i.ToString() << "\n";

#ifndef IOTAP_ANALYZER_READ_TRACE_SET_H_
#define IOTAP_ANALYZER_READ_TRACE_SET_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "analyzer/read/trace_reader.h"

namespace iotap::analyzer {

// The trace files at `path`: the file itself, or every regular *.iotap file
// below the directory (recursively), sorted. Fails with a message naming
// `path` if it does not exist or holds no trace file.
absl::StatusOr<std::vector<std::string>> ListTraceFiles(const std::string& path);

struct TraceSetResult {
  int files_read = 0;              // files that yielded a process
  std::vector<ReadIssue> issues;   // damage, and files that could not be read
};

// The issue that says `path` could not be read at all, from ReadTraceFile's
// `status` (its message without the path, which the issue names).
ReadIssue UnreadableFileIssue(const std::string& path, const absl::Status& status);

// Reads every file into `visitor`. A file that cannot be read at all becomes
// an issue; the others are read regardless. `progress`, if set, is called
// after each file with (files done, files total).
TraceSetResult ReadTraceSet(const std::vector<std::string>& files, TraceVisitor* visitor,
                            const std::function<void(size_t, size_t)>& progress = nullptr);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_TRACE_SET_H_
