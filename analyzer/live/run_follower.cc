#include "analyzer/live/run_follower.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "analyzer/live/session_file.h"

namespace iotap::analyzer {

namespace fs = std::filesystem;

absl::Status RunFollower::Poll(TraceVisitor* visitor, int64_t now_ns, const FrameLimit& limit) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir_, fs::directory_options::skip_permission_denied, ec);
  if (ec) return absl::NotFoundError(absl::StrCat(dir_, ": cannot list: ", ec.message()));
  int sessions = 0, ended = 0;
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code type_ec;
    // Symbolic links are not followed: a trace directory holds files we wrote.
    if (!it->is_regular_file(type_ec) || it->is_symlink(type_ec)) continue;
    std::string name = it->path().filename().string();
    if (absl::EndsWith(name, ".iotap")) {
      Followed& f = files_[it->path().string()];
      if (f.follower == nullptr) {
        f.follower = std::make_unique<TraceFollower>(it->path().string());
        f.follower->set_shared_paths(shared_paths_);
      }
    } else if (absl::EndsWith(name, kSessionSuffix)) {
      SessionState s = ReadSessionFile(it->path().string());
      ++sessions;
      if (s.ended) ++ended;
    }
  }
  // Sessions first, files after: a session that says it ended has written
  // everything its traces will hold before this poll reads them.
  sessions_ = sessions;
  sessions_ended_ = ended;
  if (SessionsEnded() && sessions_ended_at_ < 0) sessions_ended_at_ = now_ns;
  held_back_ = false;
  for (auto& [path, f] : files_) {
    if (f.failed || f.follower->finished()) continue;
    absl::Status s = f.follower->ReadNew(visitor, &issues_, limit);
    if (!s.ok()) {
      f.failed = true;
      issues_.push_back(ReadIssue{path, 0, 0, false, std::string(s.message())});
    }
    held_back_ = held_back_ || f.follower->held_back();
  }
  return absl::OkStatus();
}

bool RunFollower::FinishAll(TraceVisitor* visitor, const FrameLimit& limit) {
  held_back_ = false;
  for (auto& [path, f] : files_) {
    if (f.failed || f.follower->finished()) continue;
    absl::Status s = f.follower->Finish(visitor, &issues_, limit);
    if (!s.ok()) issues_.push_back(ReadIssue{path, 0, 0, false, std::string(s.message())});
    held_back_ = held_back_ || f.follower->held_back();
  }
  return !held_back_;
}

int64_t RunFollower::MinHeldBack(const std::function<int64_t(const ProcessTrace&)>& key) const {
  int64_t least = INT64_MAX;
  for (const auto& [path, f] : files_) {
    if (!f.failed && f.follower->held_back()) least = std::min(least, key(f.follower->process()));
  }
  return least;
}

int RunFollower::files_ended() const {
  int n = 0;
  for (const auto& [path, f] : files_) n += f.follower->ended() ? 1 : 0;
  return n;
}

uint64_t RunFollower::bytes_read() const {
  uint64_t n = 0;
  for (const auto& [path, f] : files_) n += f.follower->offset();
  return n;
}

bool RunFollower::Ended(int64_t now_ns) const {
  if (!SessionsEnded()) return false;
  bool all = true;
  for (const auto& [path, f] : files_) all = all && (f.failed || f.follower->ended());
  return all || now_ns - sessions_ended_at_ >= grace_ns_;
}

}  // namespace iotap::analyzer
