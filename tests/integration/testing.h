// Helpers for tests that run real programs under the shim.
//
//   TempDir dir;
//   RunResult r = RunTraced({"cat", path}, dir.path() + "/trace");
//   ASSERT_EQ(r.exit_code, 0) << r.err;
//   LoadedRun run = LoadRun(dir.path() + "/trace");
//   EXPECT_EQ(run.Count(OP_READ, path), 2);
//
// Programs run through `iotap run` (RunTraced) or with LD_PRELOAD set by hand
// (RunPreloaded); LoadRun reads every trace file with the analyzer's reader
// and keeps every event, with its file's name resolved, for assertions.

#ifndef IOTAP_TESTS_INTEGRATION_TESTING_H_
#define IOTAP_TESTS_INTEGRATION_TESTING_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/read/event.h"
#include "analyzer/read/trace_reader.h"
#include "iotap/trace.pb.h"

namespace iotap::testing {

// Paths inside the build and source trees.
std::string IotapBinary();       // build/bin/iotap
std::string ShimLibrary();       // build/lib/libiotap.so
std::string TestProgram(const std::string& name);  // build/bin/<name>
std::string SourcePath(const std::string& relative);
// /usr/bin/python3, or $IOTAP_TEST_PYTHON.
std::string Python();

// The names interpose/libiotap.map exports (its `global:` list), in order,
// read from the source tree when called. Empty if the file cannot be read.
// The symbols interpose/libiotap.map exports in the section of `layer`: ""
// for the core (everything before the first "/* ---- NAME layer" comment),
// or a layer's NAME ("CUDA", "HDF5").
std::vector<std::string> MapSymbols(const std::string& layer = "");
// Every section of the map: "" (the core) and each layer's.
std::map<std::string, std::vector<std::string>> MapSections();

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

struct RunResult {
  int exit_code = -1;   // when the program exited
  int signal = 0;       // when a signal ended it
  std::string out;
  std::string err;
};

struct RunOptions {
  std::map<std::string, std::string> env;  // added to (or replacing in) the environment
  std::vector<std::string> unset_env;
  std::string stdin_data;
  std::string cwd;
  int timeout_seconds = 600;
};

// Runs argv (argv[0] looked up in PATH) and waits for it.
RunResult RunProgram(const std::vector<std::string>& argv, const RunOptions& options = {});
// `iotap run -o trace_dir -- argv...`.
RunResult RunTraced(const std::vector<std::string>& argv, const std::string& trace_dir,
                    const RunOptions& options = {});
// argv with LD_PRELOAD=libiotap.so and IOTAP_DIR=trace_dir.
RunResult RunPreloaded(const std::vector<std::string>& argv, const std::string& trace_dir,
                       const RunOptions& options = {});

struct LoadedEvent : analyzer::Event {
  std::string name;       // the event's file (or dataset, mark...) resolved
  std::string aux_name;   // aux resolved as a string id, for ops that carry one
};

struct LoadedProcess {
  std::string trace_file;
  ProcessHeader header;
  std::vector<LoadedEvent> events;
  std::vector<Packet> packets;  // everything but headers, strings and events
  std::optional<EndOfTrace> end;
  uint64_t dropped = 0;

  // Events on the file `name` (every op if `op` is OP_UNSPECIFIED).
  std::vector<const LoadedEvent*> On(const std::string& name, Op op = OP_UNSPECIFIED) const;
};

struct LoadedRun {
  std::vector<LoadedProcess> processes;
  std::vector<analyzer::ReadIssue> issues;

  const LoadedProcess* ByPid(int pid) const;
  // Events of `op` on `name` over every process (every op if OP_UNSPECIFIED).
  std::vector<const LoadedEvent*> On(const std::string& name, Op op = OP_UNSPECIFIED) const;
  int Count(Op op, const std::string& name) const;
};

// Reads every trace file under `dir` (or the one file). Fails the calling
// test (and returns what it has) if a file cannot be read.
LoadedRun LoadRun(const std::string& dir);

// Per-file counts from `strace -f -y -o LOG`: what the kernel saw.
struct StraceFileCounts {
  int reads = 0;          // read, pread64, readv, preadv, preadv2 on the file
  uint64_t read_bytes = 0;
  int writes = 0;
  uint64_t write_bytes = 0;
  int opens = 0;          // open, openat, creat naming the file, failed ones too
  int copy_in = 0;        // copy_file_range / sendfile with the file as source
  uint64_t copy_in_bytes = 0;
};
std::map<std::string, StraceFileCounts> ParseStrace(const std::string& log_path);

// One system call of an `strace -f -y` log, in the log's order (a call
// strace split into "unfinished" and "resumed" lines is put back together).
struct StraceCall {
  std::string pid;                // the thread that made it
  std::string name;               // "pread64", "newfstatat", ...
  std::vector<std::string> args;  // as strace printed them
  long long result = 0;
  std::string fd_path;            // the first argument's descriptor's path (-y), or ""
  std::string result_path;        // the returned descriptor's path, or ""
};
std::vector<StraceCall> ParseStraceCalls(const std::string& log_path);

// What `iotap stats --json DIR` says of each file (path -> counts), checked
// against strace in ground-truth tests. Fails the test if the command fails.
struct StatsFileCounts {
  int reads = 0;
  uint64_t read_bytes = 0;
  int writes = 0;
  uint64_t write_bytes = 0;
  int opens = 0;
};
struct StatsSummary {
  int processes = 0;
  uint64_t events = 0;
  uint64_t dropped_events = 0;
  std::map<std::string, StatsFileCounts> files;
};
StatsSummary StatsOf(const std::string& trace_dir);

// Runs argv under both strace (-f -y, into `strace_log`) and iotap run.
RunResult RunTracedUnderStrace(const std::vector<std::string>& argv, const std::string& trace_dir,
                               const std::string& strace_log, const RunOptions& options = {});

// The whole of a file, or "" if it cannot be read.
std::string ReadFile(const std::string& path);
void WriteFile(const std::string& path, const std::string& contents);

}  // namespace iotap::testing

#endif  // IOTAP_TESTS_INTEGRATION_TESTING_H_
