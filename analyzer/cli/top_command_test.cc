// `iotap top` as a user runs it: a finished run replayed, whose last window
// says what `iotap report --from --to` says of the same range; the metrics
// file it rewrites; the /metrics server.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzer/cli/metrics_server.h"
#include "analyzer/live/session_file.h"
#include "analyzer/output/top_view.h"
#include "analyzer/testing/metrics_check.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::analyzer {
namespace {

using iotap::testing::IotapBinary;
using iotap::testing::ReadFile;
using iotap::testing::RunProgram;
using iotap::testing::RunResult;
using iotap::testing::TempDir;
using ::testing::HasSubstr;

// The key=value pairs of a line of `iotap top`.
std::map<std::string, std::string> Pairs(const std::string& line) {
  std::map<std::string, std::string> out;
  for (absl::string_view word : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(word, absl::MaxSplits('=', 1));
    EXPECT_EQ(kv.size(), 2u) << line;
    if (kv.size() == 2) out[kv[0]] = kv[1];
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

TEST(TopCommandTest, ReplaysLastWindowIsTheReportOnItsRange) {
  TempDir dir;
  // Two ranks with two loaders each, 600 steps of 10 ms: about 6 s.
  std::filesystem::create_directories(dir.Sub("run"));
  WriteManyStepRun(dir.Sub("run"), 2, 2, 600);
  const std::string metrics = dir.Sub("metrics/iotap.prom");
  std::filesystem::create_directories(dir.Sub("metrics"));
  RunResult top = RunProgram({IotapBinary(), "top", dir.Sub("run"), "--replay", "--speed", "0",
                              "--window", "3", "--prometheus", metrics});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  std::vector<std::string> lines = Lines(top.out);
  ASSERT_GE(lines.size(), 5u) << top.out;
  // One refresh per second of the run, each window ending a second later.
  for (size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(Pairs(lines[i])["t_s"], absl::StrCat(i + 1, ".0")) << lines[i];
  }
  std::map<std::string, std::string> last = Pairs(lines.back());
  double to = 0;
  ASSERT_TRUE(absl::SimpleAtod(last["t_s"], &to));
  const std::string from = absl::StrCat(to - 3), until = absl::StrCat(to);

  RunResult report = RunProgram({IotapBinary(), "report", dir.Sub("run"), "--from", from, "--to",
                                 until, "--format", "json", "--top", "10"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  report::Report r;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(report.out, &r).ok());
  // Every figure of the line but the totals since the start, as the report
  // on the same range gives it.
  std::map<std::string, std::string> expected = Pairs(TopLine(TopFiguresOf(r, TopTotals())));
  expected.erase("total_stall_pct");
  last.erase("total_stall_pct");
  EXPECT_EQ(last, expected);
  EXPECT_NE(last["stall_pct"], "-");
  EXPECT_NE(last["finding"], "-");

  // The metrics file: the last refresh's, owner-only, nothing left beside it.
  struct stat st {};
  ASSERT_EQ(stat(metrics.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.Sub("metrics")),
                          std::filesystem::directory_iterator()),
            1);
  absl::StatusOr<ParsedMetrics> m = ParseMetrics(ReadFile(metrics), MetricsSyntax::kPrometheus);
  ASSERT_TRUE(m.ok()) << m.status();
  TopFigures f = TopFiguresOf(r, TopTotals());
  ASSERT_FALSE(f.layers.empty());
  const std::string job = absl::StrCat("job=\"", f.job, "\"");
  for (const TopRate& l : f.layers) {
    EXPECT_DOUBLE_EQ(m->samples.at(absl::StrCat("iotap_read_bytes_per_second{", job, ",layer=\"",
                                                l.name, "\"}")),
                     l.bytes_per_s)
        << l.name;
  }
  for (const TopTrainer& t : f.trainers) {
    const std::string labels =
        absl::StrCat("{host=\"", t.host, "\",", job, ",rank=\"", t.rank, "\",role=\"trainer\"}");
    EXPECT_DOUBLE_EQ(m->samples.at("iotap_data_stall_ratio" + labels), t.window.Stall());
    EXPECT_DOUBLE_EQ(m->samples.at("iotap_steps_per_second" + labels), t.window.steps / f.window_s);
  }
  EXPECT_EQ(m->samples.at(
                absl::StrCat("iotap_finding{id=\"", last["finding"], "\",", job, ",order=\"1\"}")),
            1);
}

// A run written in time order, as the shim writes (each event once it has
// ended, frames a second apart): a trainer of `steps` steps of `step_ms`
// from `start` with its step markers and a copy per step, waiting
// `wait_ms(s)` for step s's data, and a loader reading 64 KiB per step.
void WriteTimeOrderedRun(const std::string& dir, int pid, int64_t start, int steps,
                         int64_t (*wait_ms)(int), int64_t step_ms = 10) {
  constexpr int64_t kMs = 1'000'000;
  SyntheticProcess trainer(pid, 1, "/usr/bin/python3", {"python3", "train.py"}, start);
  SyntheticProcess loader(pid + 1, pid, "/usr/bin/python3", {"python3", "train.py"}, start + kMs,
                          ProcessHeader::ORIGIN_FORK);
  const uint32_t file = loader.Path(absl::StrCat("/data/shard", pid, ".bin"));
  for (int s = 0; s < steps; ++s) {
    const int64_t t = start + 5 * kMs + s * step_ms * kMs;
    loader.Read(OP_PREAD, t - 3 * kMs, t + wait_ms(s) * kMs, file, int64_t{s} * 65536, 65536);
    trainer.Marker(OP_STEP_BEGIN, t, t, s);
    trainer.Marker(OP_DATA_WAIT, t, t + wait_ms(s) * kMs, s);
    SyntheticProcess::EventSpec copy;
    copy.op = OP_CUDA_MEMCPY_HTOD;
    copy.start_ns = t + 6 * kMs;
    copy.end_ns = t + 7 * kMs;
    copy.requested = 1 << 20;
    copy.flags = FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC;
    trainer.Add(copy);
    trainer.Marker(OP_STEP_END, t + step_ms * kMs, t + step_ms * kMs, s);
  }
  const int64_t end = start + 10 * kMs + steps * step_ms * kMs;
  loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, end);
  trainer.End(EndOfTrace::REASON_EXIT, 0, end);
  trainer.WriteTo(absl::StrCat(dir, "/trainer", pid, ".iotap"), 4096, 1'000'000'000);
  loader.WriteTo(absl::StrCat(dir, "/loader", pid, ".iotap"), 4096, 1'000'000'000);
}

// A watch started after the job ended (a user who runs `iotap top` late, or
// one far behind the job) catches up a slice or two at a time rather than
// reading everything first: its one refresh, at the end, says what the
// replay's last says, the totals since the start (every step counted once)
// included, and no event is left out. The second trainer starts an hour
// after the first ended: both pass the empty hour at once. The third's
// steps of 1.5 s, counted while catching up, are whole in the windows they
// are counted from, as in the replay's.
TEST(TopCommandTest, AWatchStartedAfterTheJobEndedSaysWhatTheReplaySays) {
  TempDir dir;
  std::filesystem::create_directories(dir.Sub("run"));
  constexpr int64_t kS = 1'000'000'000;
  WriteTimeOrderedRun(dir.Sub("run"), 1000, kSampleRunStartNs, 600,
                      [](int s) { return int64_t{s % 3}; });
  WriteTimeOrderedRun(dir.Sub("run"), 2000, kSampleRunStartNs + 3600 * kS, 300,
                      [](int) { return int64_t{5}; });
  WriteTimeOrderedRun(
      dir.Sub("run"), 3000, kSampleRunStartNs + 3610 * kS, 20, [](int) { return int64_t{1000}; },
      /*step_ms=*/1500);
  absl::StatusOr<SessionFile> session = StartSession(dir.Sub("run"), "late");
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE(session->End(0).ok());
  RunResult replay = RunProgram(
      {IotapBinary(), "top", dir.Sub("run"), "--replay", "--speed", "0", "--window", "3"});
  ASSERT_EQ(replay.exit_code, 0) << replay.err;
  RunResult late = RunProgram({IotapBinary(), "top", dir.Sub("run"), "--window", "3"});
  ASSERT_EQ(late.exit_code, 0) << late.err;
  std::vector<std::string> replayed = Lines(replay.out), followed = Lines(late.out);
  // A line per second of the run: 3,640.01 s.
  ASSERT_EQ(replayed.size(), 3641u) << replayed.back();
  ASSERT_EQ(followed.size(), 1u) << late.out;
  EXPECT_EQ(followed.back(), replayed.back());
  std::map<std::string, std::string> last = Pairs(replayed.back());
  EXPECT_EQ(last["t_s"], "3641.0");
  // The first trainer waited 0.6 s of its 6, the second 1.5 s of its 3, the
  // third 20 s of its 30: 22.1 s of 39.
  EXPECT_EQ(last["total_stall_pct"], "56.7");
  EXPECT_EQ(late.err, "");
  EXPECT_EQ(replay.err, "");
}

// Standard output that cannot be written (a full disk): said once, and the
// watch ends with status 1 instead of going on with lines nobody gets.
TEST(TopCommandTest, AnOutputThatCannotBeWrittenEndsTheWatch) {
  TempDir dir;
  std::filesystem::create_directories(dir.Sub("run"));
  WriteManyStepRun(dir.Sub("run"), 1, 1, 300);
  RunResult top = RunProgram(
      {"sh", "-c", IotapBinary() + " top " + dir.Sub("run") + " --replay --speed 0 >/dev/full"});
  EXPECT_EQ(top.exit_code, 1) << top.err;
  EXPECT_EQ(top.err, "iotap top: standard output: No space left on device\n");
}

TEST(TopCommandTest, RefusesBadOptions) {
  TempDir dir;
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--window", "2.5"}, {"--interval", "0"}, {"--speed", "2"}, {"--listen", "nocolon"}}) {
    std::vector<std::string> argv = {IotapBinary(), "top", dir.path()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = RunProgram(argv);
    EXPECT_EQ(r.exit_code, 1) << args[0];
  }
  EXPECT_EQ(RunProgram({IotapBinary(), "top", dir.Sub("none")}).exit_code, 2);
}

// A request to 127.0.0.1:`port` (no client library: a socket), and what
// came back: the status line, the content type and the body.
struct Scrape {
  std::string status;
  std::string type;
  std::string body;
};

Scrape Request(int port, const std::string& method, const std::string& path) {
  Scrape s;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    if (fd >= 0) close(fd);
    return s;
  }
  std::string request = absl::StrCat(method, " ", path, " HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, static_cast<size_t>(n));
  close(fd);
  size_t head_end = reply.find("\r\n\r\n");
  if (head_end == std::string::npos) return s;
  std::vector<std::string> head = absl::StrSplit(reply.substr(0, head_end), "\r\n");
  s.status = head[0];
  for (const std::string& h : head) {
    if (h.rfind("Content-Type: ", 0) == 0) s.type = h.substr(14);
  }
  s.body = reply.substr(head_end + 4);
  return s;
}

TEST(MetricsServerTest, ServesTheLatestMetricsAtSlashMetricsOnly) {
  absl::StatusOr<std::unique_ptr<cli::MetricsServer>> server =
      cli::MetricsServer::Start("127.0.0.1:0");
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = (*server)->port();
  ASSERT_GT(port, 0);
  (*server)->Publish("# TYPE a gauge\na 1\n# EOF\n");
  (*server)->Publish("# TYPE a gauge\na 2\n# EOF\n");
  Scrape ok = Request(port, "GET", "/metrics");
  EXPECT_EQ(ok.status, "HTTP/1.1 200 OK");
  EXPECT_EQ(ok.type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
  EXPECT_EQ(ok.body, "# TYPE a gauge\na 2\n# EOF\n");
  EXPECT_EQ(Request(port, "GET", "/").status, "HTTP/1.1 404 Not Found");
  EXPECT_EQ(Request(port, "GET", "/metrics/x").status, "HTTP/1.1 404 Not Found");
  EXPECT_EQ(Request(port, "POST", "/metrics").status, "HTTP/1.1 405 Method Not Allowed");
}

}  // namespace
}  // namespace iotap::analyzer
