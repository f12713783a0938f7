#include "analyzer/output/export/chrome_json_export.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

// A JSON string literal of `value` (any bytes; see json_writer.h).
std::string Quoted(const std::string& value) { return absl::StrCat("\"", JsonEscape(value), "\""); }

// Microseconds, the unit of "ts" and "dur", with nanosecond decimals.
std::string Micros(int64_t ns) { return absl::StrFormat("%.3f", static_cast<double>(ns) / 1e3); }

class ChromeJsonSink : public ExportSink {
 public:
  ChromeJsonSink(std::string path, uint64_t max_events, ExportStats* stats)
      : path_(std::move(path)), max_events_(max_events), stats_(stats) {}
  ~ChromeJsonSink() override {
    if (out_ != nullptr) std::fclose(out_);
  }

  absl::Status Begin(const RunInfo& run) override {
    const uint64_t events = static_cast<uint64_t>(run.report.run().events());
    if (max_events_ != 0 && events > max_events_) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "the run has %d events, more than --chrome-json takes (%d): Chrome's JSON repeats every "
          "name in every event (about 150 bytes each) and viewers load it whole. Use --perfetto "
          "for a run this size, or --max-events N to raise the limit.",
          events, max_events_));
    }
    out_ = std::fopen(path_.c_str(), "w");
    if (out_ == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(path_, ": ", std::strerror(errno)));
    Put("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iotap "
        "export\"},\"traceEvents\":[\n");
    Metadata("process_name", 0, 0, "iotap counters");
    return absl::OkStatus();
  }

  absl::Status AddProcess(const ExportProcess& p) override {
    const int pid = ids_.Pid(p.host, p.pid);
    if (p.role == report::TRAINER && trainer_pid_.count(p.pid) == 0) trainer_pid_[p.pid] = pid;
    Metadata("process_name", pid, 0, p.Title());
    ++stats_->processes;
    for (const ExportTrack& track : p.tracks) {
      const int tid = track.kind == ExportTrack::kThread
                          ? ids_.Tid(p.host, static_cast<int>(track.id))
                          : ids_.Fresh();
      Metadata("thread_name", pid, tid, track.name);
      ++stats_->tracks;
      for (const ExportSlice& s : track.slices) {
        std::string args;
        auto arg = [&](const char* key, const std::string& value) {
          absl::StrAppend(&args, args.empty() ? "" : ",", "\"", key, "\":", value);
        };
        if (s.file != 0) arg("file", Quoted(p.strings[s.file]));
        if (s.bytes >= 0) arg("bytes", absl::StrCat(s.bytes));
        if (s.offset >= 0) arg("offset", absl::StrCat(s.offset));
        if (s.step >= 0) arg("step", absl::StrCat(s.step));
        if (s.error != 0) arg("error", absl::StrCat(s.error));
        if (s.major >= 0) arg("major", s.major == 1 ? "true" : "false");
        if (s.incomplete) arg(s.major >= 0 ? "span_estimated" : "completion_seen",
                              s.major >= 0 ? "true" : "false");
        Put(absl::StrCat(
            ",{\"ph\":\"", s.instant ? "i" : "X", "\",\"name\":", Quoted(p.strings[s.name]),
            ",\"cat\":", Quoted(p.strings[s.category]), ",\"pid\":", pid, ",\"tid\":", tid,
            ",\"ts\":", Micros(s.start_ns),
            s.instant ? ",\"s\":\"t\"" : absl::StrCat(",\"dur\":", Micros(s.end_ns - s.start_ns)),
            ",\"args\":{", args, "}}\n"));
        ++stats_->slices;
      }
    }
    stats_->clipped += p.clipped;
    return Error();
  }

  absl::Status Finish(const RunInfo& run) override {
    const report::Timeline& t = run.report.timeline();
    for (const report::Series& s : t.series()) {
      auto trainer = trainer_pid_.find(s.pid());
      const int pid = s.pid() != 0 && trainer != trainer_pid_.end() ? trainer->second : 0;
      const std::string name = Quoted(absl::StrCat(ValidUtf8(s.name()), " (", s.unit(), ")"));
      ++stats_->tracks;
      double last = -1;
      for (int k = 0; k <= s.values_size(); ++k) {
        double v = k < s.values_size() ? s.values(k) : 0.0;
        if (v == last) continue;
        last = v;
        Put(absl::StrCat(",{\"ph\":\"C\",\"name\":", name, ",\"pid\":", pid, ",\"ts\":",
                         Micros(static_cast<int64_t>((t.start_s() + k * t.bin_width_s()) * 1e9)),
                         ",\"args\":{\"value\":", absl::StrFormat("%.6g", v), "}}\n"));
        ++stats_->counters;
      }
    }
    Put("]}\n");
    if (std::fclose(out_) != 0 && errno_ == 0) errno_ = errno;
    out_ = nullptr;
    return Error();
  }

 private:
  void Metadata(const char* what, int pid, int tid, const std::string& name) {
    // The first event of the array has no leading comma; every later one has.
    Put(absl::StrCat(first_ ? "" : ",", "{\"ph\":\"M\",\"name\":\"", what, "\",\"pid\":", pid,
                     ",\"tid\":", tid, ",\"args\":{\"name\":", Quoted(name), "}}\n"));
    first_ = false;
  }

  void Put(const std::string& text) {
    if (out_ == nullptr) return;
    if (std::fwrite(text.data(), 1, text.size(), out_) != text.size() && errno_ == 0) {
      errno_ = errno != 0 ? errno : EIO;
    }
    stats_->bytes += text.size();
  }

  absl::Status Error() const {
    if (errno_ == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(path_, ": ", std::strerror(errno_)));
  }

  std::string path_;
  uint64_t max_events_;
  ExportStats* stats_;
  std::FILE* out_ = nullptr;
  bool first_ = true;
  int errno_ = 0;
  ExportIds ids_;
  std::map<int, int> trainer_pid_;  // real trainer pid -> its pid in the file
};

}  // namespace

absl::Status ExportChromeJson(const std::string& run_path, const std::string& out_path,
                              const ExportOptions& options, uint64_t max_events,
                              ExportStats* stats) {
  *stats = ExportStats{};
  ChromeJsonSink sink(out_path, max_events, stats);
  return ExportRun(run_path, options, &sink);
}

}  // namespace iotap::analyzer
