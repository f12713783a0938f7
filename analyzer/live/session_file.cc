#include "analyzer/live/session_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace iotap::analyzer {

namespace {

absl::Status WriteAll(int fd, const std::string& path, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::UnavailableError(absl::StrCat(path, ": cannot write: ", std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

std::string Now() { return absl::StrCat(static_cast<int64_t>(std::time(nullptr))); }

}  // namespace

absl::StatusOr<SessionFile> StartSession(const std::string& dir, const std::string& session) {
  std::string path = absl::StrCat(dir, "/", session, kSessionSuffix);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(path, ": cannot create: ", std::strerror(errno)));
  }
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  absl::Status s =
      WriteAll(fd, path, absl::StrCat("started ", getpid(), " ", host, " ", Now(), "\n"));
  close(fd);
  if (!s.ok()) return s;
  return SessionFile(path);
}

absl::Status SessionFile::End(int status) const {
  int fd = open(path_.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat(path_, ": cannot open: ", std::strerror(errno)));
  }
  absl::Status s = WriteAll(fd, path_, absl::StrCat("ended ", status, " ", Now(), "\n"));
  close(fd);
  return s;
}

SessionState ReadSessionFile(const std::string& path) {
  SessionState state;
  int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return state;
  char buf[1024];
  ssize_t n = read(fd, buf, sizeof(buf));
  close(fd);
  if (n <= 0) return state;
  std::string text(buf, static_cast<size_t>(n));
  // Only whole lines: the last piece, after the last newline, is still being
  // written (or empty).
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  lines.pop_back();
  for (absl::string_view line : lines) {
    std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
    // A line still being written, or not ours, says nothing.
    if (words.size() == 4 && words[0] == "started" && absl::SimpleAtoi(words[1], &state.pid)) {
      state.started = true;
    }
    if (words.size() == 3 && words[0] == "ended" && absl::SimpleAtoi(words[1], &state.status) &&
        !words[2].empty()) {
      state.ended = true;
    }
  }
  return state;
}

}  // namespace iotap::analyzer
