// The mark `iotap run` leaves in its trace directory while it runs, so that
// a watcher (`iotap top`) knows when the job has ended.
//
// `iotap run` creates DIR/SESSION.iotap-session (owner-only, never through a
// symbolic link) holding the line "started PID HOST UNIX_S", and appends
// "ended STATUS UNIX_S" once the command and the processes it left running
// are gone (STATUS: the exit code, or 128 + the signal that killed it).
//
//   absl::StatusOr<SessionFile> s = StartSession("trace/", "5f3a09c2d41e7b68");
//   ... run the command ...
//   s->End(0);
//   SessionState state = ReadSessionFile("trace/5f3a09c2d41e7b68.iotap-session");
//   // state.ended == true, state.status == 0

#ifndef IOTAP_ANALYZER_LIVE_SESSION_FILE_H_
#define IOTAP_ANALYZER_LIVE_SESSION_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace iotap::analyzer {

inline constexpr char kSessionSuffix[] = ".iotap-session";

class SessionFile {
 public:
  explicit SessionFile(std::string path) : path_(std::move(path)) {}
  const std::string& path() const { return path_; }
  // Appends the "ended" line.
  absl::Status End(int status) const;

 private:
  std::string path_;
};

// Creates DIR/SESSION.iotap-session with its "started" line.
absl::StatusOr<SessionFile> StartSession(const std::string& dir, const std::string& session);

struct SessionState {
  bool started = false;  // the "started" line is there
  bool ended = false;
  int pid = 0;
  int status = 0;
};

// What a session file says; a file that cannot be read says nothing.
SessionState ReadSessionFile(const std::string& path);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_LIVE_SESSION_FILE_H_
