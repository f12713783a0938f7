// Nothing changed: return values, errno, exit codes and signals are the same
// with and without the shim, and a missing, unusable or full output
// directory leaves the job running normally with one warning.

#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "proto/wire/settings.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

class PassthroughTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.Sub("data");
    ASSERT_EQ(RunProgram({"mkdir", data_}).exit_code, 0);
    WriteFile(data_ + "/a.bin", std::string(64 * 1024, 'a'));
  }
  std::string Program() const { return TestProgram("lifecycle"); }

  TempDir dir_;
  std::string data_;
};

TEST_F(PassthroughTest, FailingCallsReturnAndSetErrnoAsUntraced) {
  RunResult plain = RunProgram({Program(), "errors", data_});
  RunResult traced = RunPreloaded({Program(), "errors", data_}, dir_.Sub("trace"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(traced.exit_code, 0);
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, plain.err);
  // The lines the comparison rests on, so a broken program cannot pass.
  EXPECT_TRUE(absl::StrContains(plain.out, "open-missing -1 ENOENT\n")) << plain.out;
  EXPECT_TRUE(absl::StrContains(plain.out, "read-badfd -1 EBADF\n"));
  EXPECT_TRUE(absl::StrContains(plain.out, "read-interrupted -1 EINTR\n"));
  EXPECT_TRUE(absl::StrContains(plain.out, "lseek-pipe -1 ESPIPE\n"));
  EXPECT_TRUE(absl::StrContains(plain.out, "errno-after-success 1 1234\n"));
  // And the shim saw the failures with their errno.
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  auto opens = run.On(data_ + "/missing", OP_OPEN);
  ASSERT_EQ(opens.size(), 1u);
  EXPECT_EQ(opens[0]->result, -1);
  EXPECT_EQ(opens[0]->error, static_cast<uint32_t>(ENOENT));
  int interrupted = 0;
  for (const LoadedProcess& p : run.processes) {
    for (const LoadedEvent& e : p.events) interrupted += e.op == OP_READ && e.error == EINTR;
  }
  EXPECT_EQ(interrupted, 1);
}

// A program with no thread of its own gets its reads and writes made by the
// wrappers themselves (interpose/core/direct_io.h): results and errno are
// glibc's. Once it has threads, read() is a cancellation point again: a
// thread that cancels itself is cancelled there, and a thread blocked in it
// is cancelled by another.
TEST_F(PassthroughTest, ReadsAndWritesStayCancellationPointsWhereTheyWereOnes) {
  RunOptions options;
  options.timeout_seconds = 30;  // a thread never cancelled hangs the join
  for (const char* mode : {"plain", "self", "blocked", "main-exit", "main-cancel"}) {
    RunResult plain = RunProgram({TestProgram("cancel_points"), mode}, options);
    RunResult traced = RunPreloaded({TestProgram("cancel_points"), mode},
                                    dir_.Sub(std::string("trace-") + mode), options);
    EXPECT_EQ(traced.exit_code, plain.exit_code) << mode;
    EXPECT_EQ(traced.out, plain.out) << mode;
  }
  RunResult self = RunProgram({TestProgram("cancel_points"), "self"});
  EXPECT_EQ(self.out, "before read 16\njoined, cancelled 1\n");
  // The writer thread does not keep a process alive whose threads all ended.
  RunResult main_exit = RunProgram({TestProgram("cancel_points"), "main-exit"});
  EXPECT_EQ(main_exit.exit_code, 0);
  EXPECT_EQ(main_exit.out, "main exits\nworker done\n");
  RunResult main_cancel = RunProgram({TestProgram("cancel_points"), "main-cancel"});
  EXPECT_EQ(main_cancel.exit_code, 0);
  EXPECT_EQ(main_cancel.out, "before read 16\n");
  RunResult blocked = RunProgram({TestProgram("cancel_points"), "blocked"});
  EXPECT_EQ(blocked.out, "joined, cancelled 1\n");
  RunResult plain = RunProgram({TestProgram("cancel_points"), "plain"});
  EXPECT_EQ(plain.out,
            "write 8\npwrite 8\nread 0\npread /dev/null 0 errno 0\nread -1: -1 errno 9\n"
            "pwrite at -5: -1 errno 22\nwrite from a bad address: -1 errno 14\n");
}

TEST_F(PassthroughTest, IotapRunPassesExitCodes) {
  EXPECT_EQ(RunTraced({"sh", "-c", "exit 42"}, dir_.Sub("t1")).exit_code, 42);
  EXPECT_EQ(RunTraced({"true"}, dir_.Sub("t2")).exit_code, 0);
  RunResult missing = RunTraced({"/no/such/program"}, dir_.Sub("t3"));
  EXPECT_EQ(missing.exit_code, 127);
  EXPECT_TRUE(absl::StrContains(missing.err, "cannot run /no/such/program")) << missing.err;
}

TEST_F(PassthroughTest, IotapRunPassesTerminatingSignals) {
  for (int sig : {SIGTERM, SIGSEGV, SIGKILL, SIGINT}) {
    RunResult r = RunTraced({"sh", "-c", "kill -" + std::to_string(sig) + " $$"},
                            dir_.Sub("t" + std::to_string(sig)));
    EXPECT_EQ(r.signal, sig) << "exit " << r.exit_code << " " << r.err;
  }
}

TEST_F(PassthroughTest, IotapRunForwardsSignalsItReceives) {
  // iotap run is sent SIGTERM; the command gets it, and dies of it.
  std::string trace = dir_.Sub("trace");
  std::thread killer([&trace] {
    std::this_thread::sleep_for(std::chrono::milliseconds(700));
    // Only this test's `iotap run`: tests running beside it have their own.
    RunProgram(
        {"pkill", "-TERM", "-f", "^" + IotapBinary() + " run -o " + trace + " -- sleep 30$"});
  });
  RunOptions options;
  options.timeout_seconds = 20;
  RunResult r = RunTraced({"sleep", "30"}, trace, options);
  killer.join();
  EXPECT_EQ(r.signal, SIGTERM);
}

// A command that leaves a process running: iotap run waits for it (it is the
// orphan's subreaper), so the orphan's trace is complete when iotap returns,
// and the command's exit code still comes through.
TEST_F(PassthroughTest, IotapRunWaitsForProcessesTheCommandLeftRunning) {
  std::string data = dir_.Sub("data.bin");
  WriteFile(data, std::string(5000, 'd'));
  std::string trace = dir_.Sub("trace");
  RunResult r = RunTraced(
      {"sh", "-c", "(sleep 0.5; cat " + data + " >/dev/null) >/dev/null 2>&1 & exit 7"}, trace);
  EXPECT_EQ(r.exit_code, 7);
  LoadedRun run = LoadRun(trace);
  const LoadedProcess* cat = nullptr;
  for (const LoadedProcess& p : run.processes) {
    if (p.header.argv_size() > 0 && p.header.argv(0) == "cat") cat = &p;
  }
  ASSERT_NE(cat, nullptr) << "no trace of the orphaned cat";
  ASSERT_TRUE(cat->end.has_value()) << "the orphan's trace was not finished";
  uint64_t bytes = 0;
  for (const LoadedEvent* e : cat->On(data, OP_READ)) bytes += e->result;
  EXPECT_EQ(bytes, 5000u);
}

// It waits only as long as --wait-orphans says, and says what it left.
TEST_F(PassthroughTest, IotapRunStopsWaitingForOrphansAfterTheLimit) {
  std::string trace = dir_.Sub("trace");
  auto start = std::chrono::steady_clock::now();
  RunResult r = RunProgram({IotapBinary(), "run", "--wait-orphans", "0.2", "-o", trace, "--", "sh",
                            "-c", "sleep 30 >/dev/null 2>&1 & echo $!"});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int orphan = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(r.out), &orphan)) << r.out;
  kill(orphan, SIGKILL);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_LT(took, 20);  // not the orphan's 30 s
  EXPECT_TRUE(absl::StrContains(r.err, "1 process started by the command still runs after 0.2 s"))
      << r.err;
}

// A layer name that is none of the shim's is refused before the job runs
// (the shim would drop it without a word); every real one, and "all", run.
TEST_F(PassthroughTest, IotapRunRefusesALayerWithNoSuchName) {
  RunResult bad = RunProgram({IotapBinary(), "run", "--layers", "posix,mmap", "-o",
                              dir_.Sub("t1"), "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(bad.exit_code, 1);  // the usage error's, not the job's
  EXPECT_TRUE(absl::StrContains(bad.err, "--layers: no layer is named \"mmap\"")) << bad.err;
  EXPECT_TRUE(absl::StrContains(bad.err, "posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits"))
      << bad.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("t1")));
  // Commas alone name no layer: refused too, rather than tracing none.
  RunResult none = RunProgram({IotapBinary(), "run", "--layers", ",,", "-o", dir_.Sub("t1"), "--",
                               "sh", "-c", "exit 3"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(none.err, "--layers: \",,\" names no layer")) << none.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("t1")));
  for (const char* layers :
       {"all", "posix,stdio,hdf5,tfrecord,cuda,mapped,uring,waits", "posix,", ""}) {
    RunResult good = RunProgram({IotapBinary(), "run", "--layers", layers, "-o", dir_.Sub("t2"),
                                 "--", "sh", "-c", "exit 3"});
    EXPECT_EQ(good.exit_code, 3) << layers << ": " << good.err;
  }
}

// A number a setting does not take is refused before the job runs, from
// an option or from the variable that would reach the job (the shim would
// use the default without a word to the user of iotap run); the shim
// preloaded by hand uses the default and says so in one line.
TEST_F(PassthroughTest, IotapRunRefusesANumberASettingDoesNotTake) {
  struct Case {
    std::vector<std::string> options;
    const char* variable;
    const char* value;
    const char* said;
  };
  const Case cases[] = {
      {{"--flush-interval", "5"}, nullptr, nullptr,
       "--flush-interval 5: takes milliseconds, from 10 to 3600000"},
      {{"--buffer-events", "1000"}, nullptr, nullptr,
       "--buffer-events 1000: takes events per thread buffer, a power of two, from 256 to 65536"},
      {{"--zstd-level", "fast"}, nullptr, nullptr, "--zstd-level fast: takes a zstd compression"},
      {{"--sample-interval", "1e3"}, nullptr, nullptr, "--sample-interval 1e3: takes"},
      {{}, "IOTAP_WAIT_THRESHOLD_US", "0", "IOTAP_WAIT_THRESHOLD_US=0: takes microseconds"},
      {{}, "IOTAP_FLUSH_INTERVAL_MS", "-1", "IOTAP_FLUSH_INTERVAL_MS=-1: takes milliseconds"},
  };
  for (const Case& c : cases) {
    RunOptions options;
    if (c.variable != nullptr) options.env[c.variable] = c.value;
    std::vector<std::string> argv = {IotapBinary(), "run"};
    argv.insert(argv.end(), c.options.begin(), c.options.end());
    for (const char* a : {"-o", "", "--", "sh", "-c", "exit 3"}) argv.push_back(a);
    argv[argv.size() - 5] = dir_.Sub("refused");
    RunResult bad = RunProgram(argv, options);
    EXPECT_EQ(bad.exit_code, 1) << c.said;  // the usage error's, not the job's
    EXPECT_TRUE(absl::StrContains(bad.err, c.said)) << bad.err;
    EXPECT_FALSE(std::filesystem::exists(dir_.Sub("refused"))) << c.said;
  }
  // An option given wins over a bad variable, which then never reaches the
  // job; an empty variable is no setting; IOTAP_PY_SAMPLES is iotap run's own
  // to set (--py-sample-rate), so the environment's never reaches the job.
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "5";
  options.env["IOTAP_BUFFER_EVENTS"] = "";
  options.env["IOTAP_PY_SAMPLES"] = "many";
  RunResult good = RunProgram({IotapBinary(), "run", "--flush-interval", "300", "-o",
                               dir_.Sub("t1"), "--", "sh", "-c", "exit 3"},
                              options);
  EXPECT_EQ(good.exit_code, 3) << good.err;
  LoadedRun run = LoadRun(dir_.Sub("t1"));
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].header.flush_interval_ms(), 300u);

  // Preloaded by hand: the default, and one line naming what it replaced.
  std::string trace = dir_.Sub("t2");
  RunOptions by_hand;
  by_hand.env["LD_PRELOAD"] = ShimLibrary();
  by_hand.env["IOTAP_DIR"] = trace;
  by_hand.env["IOTAP_FLUSH_INTERVAL_MS"] = "5";
  RunResult r = RunProgram({"sh", "-c", "exit 3"}, by_hand);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_TRUE(absl::StrContains(r.err,
                                "iotap: IOTAP_FLUSH_INTERVAL_MS=5 is not a value it takes "
                                "(milliseconds, 10 to 3600000); using 1000"))
      << r.err;
  LoadedRun hand = LoadRun(trace);
  ASSERT_EQ(hand.processes.size(), 1u);
  EXPECT_EQ(hand.processes[0].header.flush_interval_ms(), 1000u);
  by_hand.env["IOTAP_QUIET"] = "1";
  RunResult quiet = RunProgram({"sh", "-c", "exit 3"}, by_hand);
  EXPECT_EQ(quiet.err, "");
}

// The settings that take a word: iotap run refuses one it does not take
// (from the variable that would reach the job); the shim, preloaded by hand,
// uses the default and says so; the words it takes have their effect (the
// header's time source).
TEST_F(PassthroughTest, IotapRunRefusesAWordASettingDoesNotTake) {
  const std::pair<const char*, const char*> bad[] = {
      {"IOTAP_CLOCK", "mono"}, {"IOTAP_CUPTI", "yes"}, {"IOTAP_QUIET", "true"}};
  for (const auto& [variable, value] : bad) {
    RunOptions options;
    options.env[variable] = value;
    RunResult r = RunProgram(
        {IotapBinary(), "run", "-o", dir_.Sub("refused"), "--", "sh", "-c", "exit 3"}, options);
    EXPECT_EQ(r.exit_code, 1) << variable;
    const std::string said = absl::StrCat("iotap run: ", variable, "=", value, ": takes ");
    EXPECT_TRUE(absl::StrContains(r.err, said)) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir_.Sub("refused"))) << variable;
  }
  // --quiet wins over the variable, which then does not reach the job.
  RunOptions quiet;
  quiet.env["IOTAP_QUIET"] = "true";
  RunResult q = RunProgram(
      {IotapBinary(), "run", "--quiet", "-o", dir_.Sub("q"), "--", "sh", "-c", "exit 3"}, quiet);
  EXPECT_EQ(q.exit_code, 3) << q.err;

  // The words taken: monotonic per event, from iotap run and by hand.
  RunOptions monotonic;
  monotonic.env["IOTAP_CLOCK"] = "monotonic";
  RunResult m = RunProgram(
      {IotapBinary(), "run", "-o", dir_.Sub("m"), "--", "sh", "-c", "exit 3"}, monotonic);
  EXPECT_EQ(m.exit_code, 3) << m.err;
  LoadedRun run = LoadRun(dir_.Sub("m"));
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].header.time_source(), ProcessHeader::TIME_SOURCE_CLOCK_MONOTONIC);

  // By hand, a word not taken: the default (the TSC where the machine has
  // one the kernel trusts, as untraced runs here choose) and a line.
  RunOptions by_hand;
  by_hand.env["LD_PRELOAD"] = ShimLibrary();
  by_hand.env["IOTAP_DIR"] = dir_.Sub("h");
  by_hand.env["IOTAP_CLOCK"] = "MONOTONIC";
  RunResult h = RunProgram({"sh", "-c", "exit 3"}, by_hand);
  EXPECT_EQ(h.exit_code, 3);
  EXPECT_TRUE(absl::StrContains(
      h.err, "iotap: IOTAP_CLOCK=MONOTONIC is not a value it takes (monotonic or tsc); using tsc"))
      << h.err;
  by_hand.env["IOTAP_DIR"] = dir_.Sub("d");
  by_hand.env["IOTAP_CLOCK"] = "tsc";
  RunResult d = RunProgram({"sh", "-c", "exit 3"}, by_hand);
  EXPECT_EQ(d.err, "");
  LoadedRun h_run = LoadRun(dir_.Sub("h"));
  LoadedRun d_run = LoadRun(dir_.Sub("d"));
  ASSERT_EQ(h_run.processes.size(), 1u);
  ASSERT_EQ(d_run.processes.size(), 1u);
  EXPECT_EQ(h_run.processes[0].header.time_source(), d_run.processes[0].header.time_source());

  // By hand, a layer name that is none: left out, with a line.
  by_hand.env.erase("IOTAP_CLOCK");
  by_hand.env["IOTAP_DIR"] = dir_.Sub("l");
  by_hand.env["IOTAP_LAYERS"] = "posix,mappd";
  RunResult l = RunProgram({"sh", "-c", "exit 3"}, by_hand);
  EXPECT_EQ(l.exit_code, 3);
  EXPECT_TRUE(absl::StrContains(l.err, "iotap: IOTAP_LAYERS=posix,mappd: no layer is named "
                                       "\"mappd\""))
      << l.err;
}

// A job preloaded by hand says a bad setting once, not in every process it
// starts: children started with the same settings (a script's commands)
// keep quiet, as their parent said it; one started with other settings
// says its own, once for its children too; every process is traced.
TEST_F(PassthroughTest, ABadSettingIsSaidOncePerJob) {
  RunOptions by_hand;
  by_hand.env["LD_PRELOAD"] = ShimLibrary();
  by_hand.env["IOTAP_DIR"] = dir_.Sub("once");
  by_hand.env["IOTAP_CLOCK"] = "mono";
  RunResult r = RunProgram({"sh", "-c",
                            "sh -c 'exit 0'; sh -c 'exit 0'; "
                            "IOTAP_CLOCK=other sh -c \"sh -c 'exit 0'; exit 0\"; exit 3"},
                           by_hand);
  EXPECT_EQ(r.exit_code, 3);
  auto count = [&](const std::string& line) {
    size_t n = 0;
    for (size_t at = r.err.find(line); at != std::string::npos; at = r.err.find(line, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("iotap: IOTAP_CLOCK=mono is not a value it takes"), 1u) << r.err;
  EXPECT_EQ(count("iotap: IOTAP_CLOCK=other is not a value it takes"), 1u) << r.err;
  EXPECT_EQ(count("iotap:"), 2u) << r.err;
  EXPECT_EQ(LoadRun(dir_.Sub("once")).processes.size(), 5u);
}

// The ranges iotap run's --help and the README's option table give are
// those the shim and iotap run enforce (proto/wire/settings.h): each
// setting's text there names its lowest and highest value.
TEST_F(PassthroughTest, HelpAndReadmeGiveTheSettingsRanges) {
  RunResult help = RunProgram({IotapBinary(), "run", "--help"});
  std::string readme = ReadFile(SourcePath("README.md"));
  for (const wire::NumericSetting& s : wire::kNumericSettings) {
    if (std::string_view(s.variable) == "IOTAP_PY_SAMPLES") continue;  // --py-sample-rate's
    const std::string lo = std::to_string(s.lo), hi = std::to_string(s.hi);
    if (s.option[0] != '\0') {
      // The option's entry: from its name to the next option's.
      size_t at = help.out.find(std::string("  ") + s.option + " ");
      ASSERT_NE(at, std::string::npos) << s.option;
      std::string entry = help.out.substr(at, help.out.find("\n  --", at + 1) - at);
      EXPECT_NE(entry.find(lo), std::string::npos) << s.option << " lacks " << lo << ": " << entry;
      EXPECT_NE(entry.find(hi), std::string::npos) << s.option << " lacks " << hi << ": " << entry;
    }
    // The README's row of the variable.
    size_t at = readme.find(std::string("| `") + s.variable + "` |");
    ASSERT_NE(at, std::string::npos) << s.variable;
    std::string row = readme.substr(at, readme.find('\n', at) - at);
    EXPECT_NE(row.find(lo), std::string::npos) << s.variable << " lacks " << lo << ": " << row;
    EXPECT_NE(row.find(hi), std::string::npos) << s.variable << " lacks " << hi << ": " << row;
  }
}

// The shim's settings in iotap run's environment reach the job, those with
// no option too (IOTAP_CLOCK, IOTAP_WAIT_THRESHOLD_US), an option given wins
// over its variable, and IOTAP_DIR is iotap run's own (-o).
TEST_F(PassthroughTest, IotapRunPassesTheShimsSettingsOnAndItsOptionsWin) {
  RunOptions options;
  options.env["IOTAP_LAYERS"] = "posix,waits";
  options.env["IOTAP_CLOCK"] = "monotonic";
  options.env["IOTAP_WAIT_THRESHOLD_US"] = "500";
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "250";
  options.env["IOTAP_DIR"] = dir_.Sub("not-here");
  std::string trace = dir_.Sub("trace");
  RunResult r = RunProgram({IotapBinary(), "run", "--flush-interval", "300", "-o", trace, "--",
                            "sh", "-c", "exit 3"},
                           options);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.Sub("not-here")));
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  const ProcessHeader& h = run.processes[0].header;
  ASSERT_EQ(h.layers_size(), 2);
  EXPECT_EQ(h.layers(0), "posix");
  EXPECT_EQ(h.layers(1), "waits");
  EXPECT_EQ(h.time_source(), ProcessHeader::TIME_SOURCE_CLOCK_MONOTONIC);
  EXPECT_EQ(h.wait_threshold_ns(), 500000u);
  EXPECT_EQ(h.flush_interval_ms(), 300u);

  // A misspelt layer in the environment is refused as --layers' is.
  options.env["IOTAP_LAYERS"] = "posix,mapd";
  RunResult bad = RunProgram({IotapBinary(), "run", "-o", dir_.Sub("t3"), "--", "true"}, options);
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(bad.err, "IOTAP_LAYERS: no layer is named \"mapd\"")) << bad.err;
}

// --clock-sync that cannot work (a malformed address, a server nobody runs)
// costs the exchanges, never the job: its exit code and signal come through,
// with a line on stderr saying why.
TEST_F(PassthroughTest, IotapRunClockSyncThatCannotWorkLeavesTheJobAlone) {
  RunResult bad = RunProgram({IotapBinary(), "run", "--clock-sync", "no-port", "-o",
                              dir_.Sub("t1"), "--", "sh", "-c", "exit 3"});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_TRUE(absl::StrContains(bad.err, "--clock-sync no-port: expected HOST:PORT")) << bad.err;
  RunOptions no_slurm;
  no_slurm.unset_env = {"SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_JOB_ID"};
  RunResult outside = RunProgram({IotapBinary(), "run", "--clock-sync", "slurm", "-o",
                                  dir_.Sub("t0"), "--", "true"},
                                 no_slurm);
  EXPECT_EQ(outside.exit_code, 0);
  EXPECT_TRUE(absl::StrContains(outside.err, "--clock-sync slurm: not in a Slurm job"))
      << outside.err;
  // 192.0.2.1 (TEST-NET-1) is nobody's: this instance asks, and nobody answers.
  RunResult unreachable = RunProgram({IotapBinary(), "run", "--clock-sync", "192.0.2.1:29511",
                                      "-o", dir_.Sub("t2"), "--", "sh", "-c", "kill -TERM $$"});
  EXPECT_EQ(unreachable.signal, SIGTERM) << unreachable.err;
  EXPECT_TRUE(absl::StrContains(unreachable.err, "no time exchange succeeded")) << unreachable.err;
}

// A job whose output directory cannot be used runs as it would untraced, and
// says so once on stderr.
void ExpectRunsNormallyWithOneWarning(const std::vector<std::string>& argv,
                                      const std::string& trace_dir, const RunResult& plain,
                                      const RunOptions& options = {}) {
  RunResult traced = RunPreloaded(argv, trace_dir, options);
  EXPECT_EQ(traced.exit_code, plain.exit_code);
  EXPECT_EQ(traced.out, plain.out);
  std::vector<std::string> lines = absl::StrSplit(traced.err, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u) << traced.err;
  EXPECT_TRUE(absl::StartsWith(lines[0], "iotap: ")) << lines[0];
}

TEST_F(PassthroughTest, MissingOutputDirectory) {
  RunResult plain = RunProgram({Program(), "errors", data_});
  ExpectRunsNormallyWithOneWarning({Program(), "errors", data_}, dir_.Sub("no/such/dir"), plain);
}

TEST_F(PassthroughTest, UnwritableOutputDirectory) {
  RunResult plain = RunProgram({Program(), "errors", data_});
  // /proc refuses new directories even to root.
  ExpectRunsNormallyWithOneWarning({Program(), "errors", data_}, "/proc/iotap-test", plain);
}

TEST_F(PassthroughTest, OutputPathIsAFile) {
  RunResult plain = RunProgram({Program(), "errors", data_});
  WriteFile(dir_.Sub("file"), "x");
  ExpectRunsNormallyWithOneWarning({Program(), "errors", data_}, dir_.Sub("file"), plain);
}

TEST_F(PassthroughTest, FullOutputFileSystem) {
  // A file-size limit of 8 KiB: the trace cannot grow, and the SIGXFSZ its
  // writes raise must not kill the job. The job writes nothing itself.
  std::vector<std::string> argv = {"sh", "-c", "ulimit -f 16; exec \"$0\" threads \"$1\" 4 20000",
                                   Program(), data_};
  for (int i = 0; i < 4; ++i) {
    WriteFile(data_ + "/t" + std::to_string(i) + ".bin", std::string(20000 * 100, 'x'));
  }
  RunResult plain = RunProgram(argv);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  // sh itself is traced too and may warn separately; only the program's
  // process must warn once, so count warnings per process instead of lines.
  RunResult traced = RunPreloaded(argv, dir_.Sub("trace"));
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.signal, 0);
  std::vector<std::string> lines = absl::StrSplit(traced.err, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 1u) << traced.err;
  EXPECT_TRUE(absl::StrContains(lines[0], "File too large")) << lines[0];
}

TEST_F(PassthroughTest, OutputDirectoryDeletedMidRun) {
  std::string trace = dir_.Sub("trace");
  for (int i = 0; i < 2; ++i) {
    WriteFile(data_ + "/t" + std::to_string(i) + ".bin", std::string(400000 * 100, 'x'));
  }
  std::thread remover([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    RunProgram({"rm", "-rf", trace});
  });
  RunResult r = RunPreloaded({Program(), "threads", data_, "2", "400000"}, trace);
  remover.join();
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.signal, 0);
  std::vector<std::string> lines = absl::StrSplit(r.err, '\n', absl::SkipEmpty());
  EXPECT_LE(lines.size(), 1u) << r.err;
}

TEST_F(PassthroughTest, LargeThreadLocalStorageStillGetsAWriterThread) {
  // 1 MiB of __thread data does not fit the writer thread's usual stack.
  RunResult r =
      RunPreloaded({TestProgram("big_tls"), data_ + "/a.bin", "20000"}, dir_.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no "cannot start the writer thread"
  EXPECT_EQ(r.out, "97\n");
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  EXPECT_EQ(run.Count(OP_PREAD, data_ + "/a.bin"), 20000);
}

}  // namespace
}  // namespace iotap::testing
