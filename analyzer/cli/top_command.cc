// `iotap top`: a running job's data stall, as it trains; or a finished run
// replayed. Every refresh reads what the traces gained (RunFollower), seals
// the slices that can no longer grow (SlicedRun), and shows the report of
// the last window with totals since the start (top_view.h).

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analyzer/analysis/sliced_run.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/metrics_server.h"
#include "analyzer/live/run_follower.h"
#include "analyzer/output/top_view.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/read/trace_set.h"

namespace iotap::cli {

namespace {

constexpr char kTopHelp[] =
    "usage: iotap top DIR [--interval S] [--window S] [--lag S] [--prometheus FILE]\n"
    "                     [--listen ADDR:PORT] [--replay [--speed X]] [--once]\n"
    "\n"
    "Watches a job traced into DIR (by `iotap run -o DIR`): every refresh, per\n"
    "trainer, the data stall and its fetch/prep/other split over the last window\n"
    "and since the start, steps per second, read bandwidth per layer, the busiest\n"
    "files and directories, loaders' CPU, and the findings that hold for the\n"
    "window, most important first. The window's figures are `iotap report --from\n"
    "--to` on the same range. Exits when `iotap run` has ended and every trace\n"
    "has its end record.\n"
    "\n"
    "  --interval S      seconds between refreshes (default 1)\n"
    "  --window S        the window, whole seconds (default 10)\n"
    "  --lag S           how far behind now the window ends (default 2): the\n"
    "                    shim writes each process's events at least once per\n"
    "                    flush interval (1 s unless --flush-interval says)\n"
    "  --prometheus FILE rewrite FILE each refresh (node exporter's textfile\n"
    "                    format; written to a temporary file and renamed)\n"
    "  --listen ADDR:PORT  serve GET /metrics (OpenMetrics text) on ADDR:PORT\n"
    "  --replay          a finished run, replayed: run time advances by\n"
    "                    --speed X times the interval each refresh (default 1;\n"
    "                    0: as fast as possible)\n"
    "\n"
    "On a terminal, the screen is redrawn; otherwise one line per refresh:\n"
    "  t_s=12.0 window_s=10.0 stall_pct=43.1 fetch_pct=80.2 prep_pct=9.9\n"
    "  other_pct=9.9 steps_per_s=3.20 read_mb_per_s=12.50 loader_cores=1.20\n"
    "  total_stall_pct=40.0 finding=data_stall_fetch\n"
    "(README.md, \"iotap top\", says what each key is).\n"
    "\n"
    "Exit codes: 0 done, 1 bad usage or standard output not written (a full disk),\n"
    "2 nothing readable at DIR.\n";

constexpr int64_t kSliceNs = 1'000'000'000;
// Times further than this from the run's start are taken for damage: a watch
// does not step towards them a slice at a time.
constexpr int64_t kMaxRunNs = int64_t{100} * 365 * 86400 * 1'000'000'000;

volatile std::sig_atomic_t g_interrupted = 0;

void OnInterrupt(int) { g_interrupted = 1; }

int64_t ClockNs(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

bool ParseSeconds(const Args& args, const char* flag, double fallback, double min, double* out) {
  *out = fallback;
  if (!args.Has(flag)) return true;
  return absl::SimpleAtod(args.Get(flag), out) && *out >= min && *out <= 1e6;
}

// Writes `text` to `path` atomically: a temporary file beside it, owner-only,
// renamed over it.
bool WriteAtomically(const std::string& path, const std::string& text) {
  std::filesystem::path target(path);
  std::string tmp =
      (target.parent_path() / ("." + target.filename().string() + ".XXXXXX")).string();
  if (target.parent_path().empty()) tmp = "." + target.filename().string() + ".XXXXXX";
  int fd = mkstemp(tmp.data());  // mode 0600
  if (fd < 0) return false;
  bool ok = fchmod(fd, 0600) == 0;
  for (size_t done = 0; ok && done < text.size();) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    ok = n > 0;
    if (ok) done += static_cast<size_t>(n);
  }
  ok = close(fd) == 0 && ok;
  ok = ok && std::rename(tmp.c_str(), path.c_str()) == 0;
  if (!ok) unlink(tmp.c_str());
  return ok;
}

struct Outputs {
  bool tty = false;
  std::string prometheus;  // path, or empty
  std::unique_ptr<MetricsServer> server;
  bool failed = false;  // standard output could not be written: the watch ends
};

void Show(const analyzer::TopFigures& f, Outputs& out) {
  // The metrics first: a scrape that follows the line sees its figures.
  if (out.server != nullptr) {
    out.server->Publish(analyzer::TopMetrics(f, analyzer::MetricsFormat::kOpenMetrics));
  }
  if (!out.prometheus.empty() &&
      !WriteAtomically(out.prometheus,
                       analyzer::TopMetrics(f, analyzer::MetricsFormat::kPrometheus))) {
    std::fprintf(stderr, "iotap top: cannot write %s\n", out.prometheus.c_str());
  }
  if (out.tty) {
    winsize ws{};
    int width = ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 ? ws.ws_col : 100;
    std::string screen = analyzer::TopScreen(f, width);
    // Home, each line cleared to its end, the rest of the screen cleared.
    std::string frame = "\x1b[H";
    for (size_t start = 0; start < screen.size();) {
      size_t nl = screen.find('\n', start);
      absl::StrAppend(&frame, screen.substr(start, nl - start), "\x1b[K\n");
      start = nl + 1;
    }
    frame += "\x1b[J";
    std::fwrite(frame.data(), 1, frame.size(), stdout);
  } else {
    std::string line = analyzer::TopLine(f) + "\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
  errno = 0;
  if ((std::fflush(stdout) != 0 || std::ferror(stdout) != 0) && !out.failed) {
    // A full disk or a closed pipe: said once, and the watch ends (exit 1)
    // rather than going on with lines nobody gets.
    std::fprintf(stderr, "iotap top: standard output: %s\n",
                 errno != 0 ? std::strerror(errno) : "a write failed");
    out.failed = true;
    g_interrupted = 1;
  }
}

// The run's start: the earliest process start of the traces there now.
int64_t OriginOf(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> files = analyzer::ListTraceFiles(dir);
  if (!files.ok() || files->empty()) return 0;
  return analyzer::CatalogTraceFiles(*files, 2).start_unix_ns;
}

class Watch {
 public:
  Watch(std::string dir, int64_t window_ns, Outputs& out)
      : dir_(std::move(dir)),
        window_ns_(window_ns),
        run_(analyzer::SlicedRun::Options{.slice_ns = kSliceNs,
                                          .keep_slices = static_cast<int>(window_ns / kSliceNs)}),
        follower_(dir_),
        out_(out) {
    // The traces' paths held once, in the table the analysis interns them in
    // (run_ outlives follower_: it is declared first).
    follower_.set_shared_paths(run_.paths());
  }

  analyzer::RunFollower& follower() { return follower_; }
  // Says on stderr what could not be shown: events that came after their
  // slice was sealed, and traces that could not be read.
  void ReportLosses() const {
    if (run_.late_events() > 0) {
      std::fprintf(stderr,
                   "iotap top: %llu events came after their window was shown and were left "
                   "out (raise --lag)\n",
                   static_cast<unsigned long long>(run_.late_events()));
    }
    for (const analyzer::ReadIssue& issue : follower_.issues()) {
      std::fprintf(stderr, "iotap top: %s\n", issue.ToString().c_str());
    }
  }
  analyzer::SlicedRun& run() { return run_; }

  // Reads what the traces hold up to `to` (wall clock), through `read`
  // (RunFollower::Poll or FinishAll given a FrameLimit; returns whether it
  // held frames back). A watch behind the job (started late, replaying, or
  // slower than the job writes) reads it two slices at a time, each step only
  // as far as `margin_ns` past its end, and seals them before it reads the
  // next: it holds a few slices of each process, as one that keeps
  // up does, not everything it has yet to read. A stretch where no file has
  // anything is passed over at once. Returns whether frames are still held
  // back (before `to`, only where the traces leap beyond any plausible time).
  template <typename Read>
  bool ReadUpTo(int64_t to, int64_t margin_ns, Read read) {
    // A watch less than a window behind reads once a refresh; further
    // behind, two slices a step.
    int64_t next = to - run_.sealed_until() <= window_ns_ ? to : run_.sealed_until() + 2 * kSliceNs;
    for (;;) {
      const int64_t u = std::min(to, next);
      const uint64_t before = follower_.bytes_read();
      if (!read(Until(u + margin_ns))) return false;
      if (u >= to) return true;
      SealTo(u);
      next = run_.sealed_until() + 2 * kSliceNs;
      if (follower_.bytes_read() == before) {
        // Every file left starts its next frame after u + margin: on to the
        // earliest of them.
        int64_t earliest = follower_.MinHeldBack(
            [this](const analyzer::ProcessTrace& p) { return run_.FrontierOf(p); });
        if (earliest > run_.origin_ns() + kMaxRunNs) return true;
        next = std::max(next, earliest - margin_ns + kSliceNs);
      }
    }
  }

  // ReadUpTo over traces that are all written (a replay, a job that has
  // ended): each read to its end, cut last frames salvaged.
  bool ReadWrittenUpTo(int64_t to, int64_t margin_ns) {
    return ReadUpTo(to, margin_ns, [this](const analyzer::FrameLimit& limit) {
      return !follower_.FinishAll(&run_, limit);
    });
  }

  // Seals up to `unix_ns` and shows the window that ends there (or only
  // counts its steps into the totals).
  void Refresh(int64_t unix_ns, bool show = true) {
    SealTo(unix_ns);
    const int64_t to = run_.sealed_until();
    if (to <= run_.origin_ns()) return;
    const int64_t before = CountedUntil();
    counted_until_ = to;
    absl::StatusOr<report::Report> window =
        run_.Report(std::max(run_.origin_ns(), to - window_ns_), to);
    if (!window.ok()) return;
    // Since the start: the steps that end in the slices sealed since the
    // last refresh, once.
    auto seconds = [&](int64_t t) { return static_cast<double>(t - run_.origin_ns()) / 1e9; };
    if (to > before) totals_.AddSteps(*window, seconds(before), seconds(to));
    totals_.read_bytes = static_cast<double>(run_.sealed_read_bytes());
    for (const auto& [layer, bytes] : run_.sealed_layer_read_bytes()) {
      totals_.layer_read_bytes[layer] = static_cast<double>(bytes);
    }
    if (show) Show(analyzer::TopFiguresOf(*window, totals_), out_);
  }

  // Stops each file's reading once what has been read of it reaches
  // `unix_ns` (SlicedRun::FrontierOf).
  analyzer::FrameLimit Until(int64_t unix_ns) const {
    return
        [this, unix_ns](const analyzer::ProcessTrace& p) { return run_.FrontierOf(p) >= unix_ns; };
  }

  // The end of the last slice anything was seen in.
  int64_t End() const {
    int64_t d = std::max<int64_t>(0, run_.last_seen_ns() - run_.origin_ns());
    return run_.origin_ns() + (d / kSliceNs + 1) * kSliceNs;
  }

 private:
  std::string dir_;
  int64_t window_ns_;
  analyzer::SlicedRun run_;
  analyzer::RunFollower follower_;
  // Where the totals' steps have been counted to: the last refresh's end.
  int64_t CountedUntil() const { return counted_until_ ? *counted_until_ : run_.origin_ns(); }

  // Seals up to `unix_ns`. The totals count each step once, from the window
  // of a refresh. A refresh that follows the last by at most half a window
  // counts its steps from a window that holds them whole but for the longest;
  // further, the steps are first counted half a window at a time, and a
  // stretch with no events at all is passed over. (Sealed slices end at most
  // half a window after where the counts stand.)
  void SealTo(int64_t unix_ns) {
    const int64_t half = std::max(kSliceNs, window_ns_ / 2);
    while (unix_ns - CountedUntil() > half) {
      const int64_t first = run_.FirstOpenSliceStart();
      if (run_.sealed_until() <= CountedUntil() && first > CountedUntil()) {
        counted_until_ = std::min(first, unix_ns - half);  // nothing before `first`
      } else {
        Refresh(CountedUntil() + half, /*show=*/false);  // ends past where it starts
      }
    }
    run_.Seal(unix_ns);
  }

  analyzer::TopTotals totals_;
  std::optional<int64_t> counted_until_;
  Outputs& out_;
};

void SleepUntil(int64_t monotonic_ns) {
  int64_t left = monotonic_ns - ClockNs(CLOCK_MONOTONIC);
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

// A finished run, read as it is shown: each refresh reads the traces only
// as far as following the job live with `lag_ns` would have (at least a
// slice), so memory stays that of a live watch however long the run.
int Replay(Watch& w, int64_t interval_ns, double speed, int64_t lag_ns) {
  // Lists the files, and reads each one's first frame.
  absl::Status s = w.follower().Poll(&w.run(), ClockNs(CLOCK_MONOTONIC), w.Until(INT64_MIN));
  if (!s.ok()) {
    std::fprintf(stderr, "iotap top: %s\n", std::string(s.message()).c_str());
    return kExitNoInput;
  }
  const int64_t margin = std::max(lag_ns, kSliceNs);
  const int64_t step =
      speed > 0 ? static_cast<int64_t>(std::llround(interval_ns * speed)) : interval_ns;
  int64_t end = INT64_MAX;  // known once every file has been read
  int64_t next = ClockNs(CLOCK_MONOTONIC);
  for (int64_t t = w.run().origin_ns() + std::max<int64_t>(step, kSliceNs); !g_interrupted;
       t += std::max<int64_t>(step, 1)) {
    if (end == INT64_MAX && !w.ReadWrittenUpTo(t, margin)) end = w.End();
    if (end == INT64_MAX && t - w.run().origin_ns() > kMaxRunNs) {
      w.follower().FinishAll(&w.run());  // damage: times beyond any run
      end = w.End();
    }
    w.Refresh(std::min(t, end));
    if (t >= end) break;
    if (speed > 0) SleepUntil(next += interval_ns);
  }
  w.ReportLosses();
  return kExitOk;
}

int Follow(Watch& w, int64_t interval_ns, int64_t lag_ns) {
  int64_t next = ClockNs(CLOCK_MONOTONIC);
  while (!g_interrupted) {
    const int64_t now = ClockNs(CLOCK_MONOTONIC);
    absl::Status s;
    auto poll = [&](const analyzer::FrameLimit& limit) {
      s.Update(w.follower().Poll(&w.run(), now, limit));
      return s.ok() && w.follower().held_back();
    };
    // Keeping up, this reads all there is, once.
    const int64_t target = ClockNs(CLOCK_REALTIME) - lag_ns;
    w.ReadUpTo(target, lag_ns, poll);
    if (!s.ok()) {
      std::fprintf(stderr, "iotap top: %s\n", std::string(s.message()).c_str());
      return kExitNoInput;
    }
    if (w.follower().Ended(now)) {
      if (w.ReadWrittenUpTo(w.run().origin_ns() + kMaxRunNs, std::max(lag_ns, kSliceNs))) {
        w.follower().FinishAll(&w.run());  // damage: times beyond any run
      }
      w.Refresh(w.End());
      break;
    }
    w.Refresh(target);
    SleepUntil(next += interval_ns);
  }
  w.ReportLosses();
  return kExitOk;
}

}  // namespace

int TopCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kTopHelp)) return kExitOk;
  auto args = Args::Parse(argc, argv,
                          {{"", "--interval", true},
                           {"", "--window", true},
                           {"", "--lag", true},
                           {"", "--prometheus", true},
                           {"", "--listen", true},
                           {"", "--replay", false},
                           {"", "--speed", true}});
  double interval = 1, window = 10, lag = 2, speed = 1;
  bool usage_ok = args.ok() && args->positional().size() == 1 &&
                  ParseSeconds(*args, "--interval", 1, 0.05, &interval) &&
                  ParseSeconds(*args, "--window", 10, 1, &window) && window == std::floor(window) &&
                  ParseSeconds(*args, "--lag", 2, 0, &lag) &&
                  ParseSeconds(*args, "--speed", 1, 0, &speed) &&
                  (args->Has("--replay") || !args->Has("--speed"));
  if (!usage_ok) {
    std::fprintf(stderr, "iotap top: %s\n\n%s",
                 !args.ok() ? std::string(args.status().message()).c_str()
                 : args->positional().size() != 1
                     ? "give one DIR"
                     : "bad --interval, --window (whole seconds), --lag or --speed (--replay only)",
                 kTopHelp);
    return kExitUsage;
  }
  const std::string dir = args->positional()[0];
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    std::fprintf(stderr, "iotap top: %s: not a directory\n", dir.c_str());
    return kExitNoInput;
  }
  Outputs out;
  out.tty = isatty(1) != 0;
  out.prometheus = args->Get("--prometheus");
  if (args->Has("--listen")) {
    absl::StatusOr<std::unique_ptr<MetricsServer>> server =
        MetricsServer::Start(args->Get("--listen"));
    if (!server.ok()) {
      std::fprintf(stderr, "iotap top: %s\n", std::string(server.status().message()).c_str());
      return kExitUsage;
    }
    out.server = std::move(*server);
    std::fprintf(stderr, "iotap top: serving http://%s/metrics (port %d)\n",
                 args->Get("--listen").c_str(), out.server->port());
  }
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
  const int64_t interval_ns = static_cast<int64_t>(std::llround(interval * 1e9));
  Watch w(dir, static_cast<int64_t>(window) * kSliceNs, out);
  if (args->Has("--replay")) {
    int64_t origin = OriginOf(dir);
    if (origin == 0) {
      std::fprintf(stderr, "iotap top: %s: no readable trace file\n", dir.c_str());
      return kExitNoInput;
    }
    w.run().SetOrigin(origin);
    const int code = Replay(w, interval_ns, speed, static_cast<int64_t>(std::llround(lag * 1e9)));
    return out.failed ? kExitUsage : code;
  }
  // The run's start is the first process's: wait for its trace.
  int64_t origin = OriginOf(dir);
  while (origin == 0 && !g_interrupted) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(interval_ns));
    origin = OriginOf(dir);
  }
  if (g_interrupted) return kExitOk;
  w.run().SetOrigin(origin);
  const int code = Follow(w, interval_ns, static_cast<int64_t>(std::llround(lag * 1e9)));
  return out.failed ? kExitUsage : code;
}

}  // namespace iotap::cli
