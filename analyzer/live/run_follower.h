// A trace directory followed while the job writes it (`iotap top`): trace
// files found as processes start, each read as it grows (TraceFollower: every
// complete frame once), and the end of the job noticed.
//
// Each Poll() lists the directory, starts following new *.iotap files and
// hands every frame completed since the last poll to the visitor (one
// visitor for all files: ProcessTrace::path() says which). The job has ended
// when every `iotap run` session that wrote the directory says so
// (session_file.h) and every trace has its end record; a process killed
// without one never writes it, so `grace_ns` after the sessions ended the
// job counts as ended regardless. Without a session file (the shim preloaded
// by hand), the job never counts as ended: the watcher is stopped by hand.
//
//   RunFollower run("trace/");
//   while (run.Poll(&visitor, MonotonicNs()).ok() && !run.Ended(MonotonicNs())) sleep(1);
//   run.FinishAll(&visitor);   // cut last frames salvaged; OnFileEnd per file
//
// Both take a FrameLimit (trace_reader.h) that stops each file's reading at a
// frame boundary: a watcher behind the job reads it a slice of time at a
// time (held_back() says whether any file has frames left).

#ifndef IOTAP_ANALYZER_LIVE_RUN_FOLLOWER_H_
#define IOTAP_ANALYZER_LIVE_RUN_FOLLOWER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/read/trace_reader.h"

namespace iotap::analyzer {

class RunFollower {
 public:
  explicit RunFollower(std::string dir, int64_t grace_ns = 5'000'000'000)
      : dir_(std::move(dir)), grace_ns_(grace_ns) {}

  // Each trace keeps its file paths in `paths` (ProcessTrace::set_shared_paths),
  // which must outlive the follower. Before the first poll.
  void set_shared_paths(PathTable* paths) { shared_paths_ = paths; }

  // Reads what the directory's traces gained since the last poll; `now_ns`
  // (any monotonic clock) dates what the sessions say. Fails only if the
  // directory cannot be listed; a file that cannot be read is an issue.
  absl::Status Poll(TraceVisitor* visitor, int64_t now_ns, const FrameLimit& limit = nullptr);
  // Reads the rest of every file as a finished trace (TraceFollower::Finish),
  // or as much as `limit` lets. Returns whether every file is finished.
  bool FinishAll(TraceVisitor* visitor, const FrameLimit& limit = nullptr);
  // The last Poll or FinishAll left frames unread at its limit.
  bool held_back() const { return held_back_; }
  // The least `key` of the files the last Poll or FinishAll held back
  // (INT64_MAX if none).
  int64_t MinHeldBack(const std::function<int64_t(const ProcessTrace&)>& key) const;

  bool Ended(int64_t now_ns) const;
  bool SessionsEnded() const { return sessions_ > 0 && sessions_ended_ == sessions_; }
  int files() const { return static_cast<int>(files_.size()); }
  int files_ended() const;
  uint64_t bytes_read() const;
  // Damage and unreadable files, each said once.
  const std::vector<ReadIssue>& issues() const { return issues_; }

 private:
  struct Followed {
    std::unique_ptr<TraceFollower> follower;
    bool failed = false;  // not a trace: left alone
  };
  std::string dir_;
  int64_t grace_ns_;
  PathTable* shared_paths_ = nullptr;
  std::map<std::string, Followed> files_;  // by path, in name order
  int sessions_ = 0;
  int sessions_ended_ = 0;
  int64_t sessions_ended_at_ = -1;
  bool held_back_ = false;
  std::vector<ReadIssue> issues_;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_LIVE_RUN_FOLLOWER_H_
