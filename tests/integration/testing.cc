#include "tests/integration/testing.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "analyzer/read/trace_set.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

extern char** environ;

namespace iotap::testing {

namespace fs = std::filesystem;

std::string IotapBinary() { return std::string(IOTAP_BINARY_DIR) + "/bin/iotap"; }
std::string ShimLibrary() { return std::string(IOTAP_BINARY_DIR) + "/lib/libiotap.so"; }
std::string TestProgram(const std::string& name) {
  return std::string(IOTAP_BINARY_DIR) + "/bin/" + name;
}
std::string SourcePath(const std::string& relative) {
  return std::string(IOTAP_SOURCE_DIR) + "/" + relative;
}
std::string Python() {
  const char* p = getenv("IOTAP_TEST_PYTHON");
  return p != nullptr && *p != '\0' ? p : "/usr/bin/python3";
}

std::map<std::string, std::vector<std::string>> MapSections() {
  std::istringstream map(ReadFile(SourcePath("interpose/libiotap.map")));
  std::map<std::string, std::vector<std::string>> sections;
  std::string section;
  bool listing = false;
  std::string line;
  while (std::getline(map, line)) {
    size_t marker = line.find("/* ---- ");
    size_t word = line.find(" layer");
    if (marker != std::string::npos && word != std::string::npos && word > marker) {
      section = line.substr(marker + 8, word - marker - 8);
    }
    if (line.find("global:") != std::string::npos) listing = true;
    if (line.find("local:") != std::string::npos) listing = false;
    size_t first = line.find_first_not_of(" \t");
    if (!listing || first == std::string::npos || line[first] == '/' || line[first] == '*' ||
        line.back() != ';') {
      continue;
    }
    sections[section].push_back(line.substr(first, line.size() - 1 - first));
  }
  return sections;
}

std::vector<std::string> MapSymbols(const std::string& layer) { return MapSections()[layer]; }

TempDir::TempDir() {
  const char* base = getenv("TMPDIR");
  std::string tmpl = std::string(base != nullptr && *base ? base : "/tmp") + "/iotap-test-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  char* made = mkdtemp(buf.data());
  if (made == nullptr) {
    ADD_FAILURE() << "mkdtemp failed: " << std::strerror(errno);
    return;
  }
  path_ = made;
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  // IOTAP_KEEP_FAILED=1 keeps a failed test's files (traces, logs) to look at.
  const char* keep = getenv("IOTAP_KEEP_FAILED");
  if (keep != nullptr && std::strcmp(keep, "1") == 0 &&
      ::testing::UnitTest::GetInstance()->current_test_info() != nullptr &&
      ::testing::Test::HasFailure()) {
    fprintf(stderr, "kept %s\n", path_.c_str());
    return;
  }
  std::error_code ec;
  // Tests make directories read-only on purpose; give access back first.
  for (auto it = fs::recursive_directory_iterator(path_, ec); it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (ec) break;
    if (it->is_directory(ec)) fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
  }
  fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
  fs::remove_all(path_, ec);
}

namespace {

void Drain(int fd, std::string* into) {
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof(buf));
  if (n > 0) into->append(buf, static_cast<size_t>(n));
}

}  // namespace

RunResult RunProgram(const std::vector<std::string>& argv, const RunOptions& options) {
  RunResult result;
  int out_pipe[2], err_pipe[2], in_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0 ||
      pipe2(in_pipe, O_CLOEXEC) != 0) {
    ADD_FAILURE() << "pipe: " << std::strerror(errno);
    return result;
  }
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string var = *e;
    std::string name = var.substr(0, var.find('='));
    if (options.env.count(name) != 0) continue;
    bool unset = false;
    for (const std::string& u : options.unset_env) unset = unset || u == name;
    if (!unset) env.push_back(var);
  }
  for (const auto& [name, value] : options.env) env.push_back(name + "=" + value);
  std::vector<char*> envp;
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  pid_t pid = fork();
  if (pid == 0) {
    dup2(in_pipe[0], 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    // A fresh process group, so a timeout can end everything it started.
    setpgid(0, 0);
    execvpe(cargv[0], cargv.data(), envp.data());
    _exit(127);
  }
  close(in_pipe[0]);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!options.stdin_data.empty()) {
    ssize_t ignored = write(in_pipe[1], options.stdin_data.data(), options.stdin_data.size());
    (void)ignored;
  }
  close(in_pipe[1]);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  bool out_open = true, err_open = true;
  while (out_open || err_open) {
    struct pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int r = poll(fds, 2, 1000);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > options.timeout_seconds) {
      ADD_FAILURE() << argv[0] << " timed out after " << options.timeout_seconds << " s";
      kill(-pid, SIGKILL);
      break;
    }
    if (r <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP))) continue;
      std::string* into = i == 0 ? &result.out : &result.err;
      size_t before = into->size();
      Drain(fds[i].fd, into);
      if (into->size() == before) (i == 0 ? out_open : err_open) = false;
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  return result;
}

RunResult RunTraced(const std::vector<std::string>& argv, const std::string& trace_dir,
                    const RunOptions& options) {
  std::vector<std::string> full = {IotapBinary(), "run", "-o", trace_dir, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  return RunProgram(full, options);
}

RunResult RunPreloaded(const std::vector<std::string>& argv, const std::string& trace_dir,
                       const RunOptions& options) {
  RunOptions o = options;
  o.env["LD_PRELOAD"] = ShimLibrary();
  o.env["IOTAP_DIR"] = trace_dir;
  return RunProgram(argv, o);
}

namespace {

class Loader : public analyzer::TraceVisitor {
 public:
  explicit Loader(LoadedRun* run) : run_(run) {}

  void OnProcess(const analyzer::ProcessTrace& p) override {
    run_->processes.emplace_back();
    current_ = &run_->processes.back();
    current_->trace_file = p.path();
    current_->header = p.header();
  }
  void OnEvents(const analyzer::ProcessTrace& p, const analyzer::EventBatch& batch) override {
    for (const analyzer::Event& e : batch.events) {
      LoadedEvent le;
      static_cast<analyzer::Event&>(le) = e;
      le.name = std::string(p.Text(e.file));
      if (e.op == OP_RENAME || e.op == OP_COPY_FILE_RANGE_IN || e.op == OP_COPY_FILE_RANGE_OUT ||
          e.op == OP_SENDFILE_IN || e.op == OP_SENDFILE_OUT) {
        le.aux_name = std::string(p.Text(static_cast<uint32_t>(e.aux)));
      }
      current_->events.push_back(std::move(le));
    }
  }
  void OnPacket(const analyzer::ProcessTrace& p, const Packet& packet) override {
    if (!packet.has_strings()) current_->packets.push_back(packet);
  }
  void OnFileEnd(const analyzer::ProcessTrace& p) override {
    current_->end = p.end();
    current_->dropped = p.dropped();
  }

 private:
  LoadedRun* run_;
  LoadedProcess* current_ = nullptr;
};

}  // namespace

std::vector<const LoadedEvent*> LoadedProcess::On(const std::string& name, Op op) const {
  std::vector<const LoadedEvent*> found;
  for (const LoadedEvent& e : events) {
    if (e.name == name && (op == OP_UNSPECIFIED || e.op == op)) found.push_back(&e);
  }
  return found;
}

const LoadedProcess* LoadedRun::ByPid(int pid) const {
  for (const LoadedProcess& p : processes) {
    if (p.header.pid() == pid) return &p;
  }
  return nullptr;
}

std::vector<const LoadedEvent*> LoadedRun::On(const std::string& name, Op op) const {
  std::vector<const LoadedEvent*> found;
  for (const LoadedProcess& p : processes) {
    for (const LoadedEvent* e : p.On(name, op)) found.push_back(e);
  }
  return found;
}

int LoadedRun::Count(Op op, const std::string& name) const {
  return static_cast<int>(On(name, op).size());
}

LoadedRun LoadRun(const std::string& dir) {
  LoadedRun run;
  auto files = analyzer::ListTraceFiles(dir);
  if (!files.ok()) {
    ADD_FAILURE() << files.status();
    return run;
  }
  Loader loader(&run);
  analyzer::TraceSetResult r = analyzer::ReadTraceSet(*files, &loader);
  run.issues = r.issues;
  return run;
}

namespace {

// strace shows a descriptor as N</path>; the path between the brackets.
std::string FdPath(const std::string& arg) {
  size_t lt = arg.find('<');
  size_t gt = arg.rfind('>');
  if (lt == std::string::npos || gt == std::string::npos || gt < lt) return "";
  return arg.substr(lt + 1, gt - lt - 1);
}

// Splits strace's argument list at top-level commas.
std::vector<std::string> SplitArgs(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (quoted) {
      cur += c;
      if (c == '\\' && i + 1 < s.size()) {
        cur += s[++i];
      } else if (c == '"') {
        quoted = false;
      }
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '{' || c == '[' || c == '(' || c == '<') ++depth;
    if (c == '}' || c == ']' || c == ')' || c == '>') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      while (i + 1 < s.size() && s[i + 1] == ' ') ++i;
      continue;
    }
    cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::string Unquote(const std::string& s) {
  if (s.size() < 2 || s.front() != '"') return s;
  return s.substr(1, s.size() - 2);
}

std::string Join(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return fs::path(dir + "/" + path).lexically_normal().string();
}

}  // namespace

// Splits "NAME(ARGS) = RESULT<PATH> ..." into its parts; false if the line is
// no such call (a signal, an exit, a "+++" line). Hand-written: logs of a
// few hundred thousand calls are common, and std::regex is slow.
bool ParseCallText(const std::string& body, StraceCall* c) {
  size_t paren = body.find('(');
  // The result follows ")" and " = "; strace pads with more spaces to align
  // results, as in a resumed call's `<... read resumed>""..., 9)    = 9`.
  size_t equals = body.rfind(" = ");
  if (equals == std::string::npos) return false;
  size_t close = body.find_last_not_of(' ', equals);
  if (paren == std::string::npos || close == std::string::npos || close < paren ||
      body[close] != ')') {
    return false;
  }
  for (size_t i = 0; i < paren; ++i) {
    if (!isalnum(static_cast<unsigned char>(body[i])) && body[i] != '_') return false;
  }
  c->name = body.substr(0, paren);
  c->args = SplitArgs(body.substr(paren + 1, close - paren - 1));
  const char* r = body.c_str() + equals + 3;
  char* after = nullptr;
  c->result = std::strtoll(r, &after, 10);
  if (after == r) return false;
  const char* gt = *after == '<' ? strchr(after, '>') : nullptr;
  c->result_path = gt != nullptr ? FdPath(std::string(after, static_cast<size_t>(gt + 1 - after))) : "";
  c->fd_path = c->args.empty() ? "" : FdPath(c->args[0]);
  return true;
}

std::vector<StraceCall> ParseStraceCalls(const std::string& log_path) {
  std::vector<StraceCall> calls;
  std::ifstream in(log_path);
  std::map<std::string, std::string> pending;  // pid -> unfinished call text
  const std::string kUnfinished = " <unfinished ...>";
  const std::string kResumed = "<... ";
  std::string line;
  while (std::getline(in, line)) {
    size_t digits = 0;
    while (digits < line.size() && isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    std::string pid = "0", body = line;
    if (digits > 0 && digits < line.size() && line[digits] == ' ') {
      pid = line.substr(0, digits);
      body = line.substr(line.find_first_not_of(' ', digits));
    }
    if (body.size() > kUnfinished.size() &&
        body.compare(body.size() - kUnfinished.size(), kUnfinished.size(), kUnfinished) == 0) {
      pending[pid] = body.substr(0, body.size() - kUnfinished.size());
      continue;
    }
    if (body.compare(0, kResumed.size(), kResumed) == 0) {
      size_t resumed = body.find(" resumed>");
      if (resumed == std::string::npos) continue;
      body = pending[pid] + body.substr(resumed + 9);
      pending.erase(pid);
    }
    StraceCall c;
    c.pid = pid;
    if (ParseCallText(body, &c)) calls.push_back(std::move(c));
  }
  return calls;
}

std::map<std::string, StraceFileCounts> ParseStrace(const std::string& log_path) {
  std::map<std::string, StraceFileCounts> counts;
  for (const StraceCall& c : ParseStraceCalls(log_path)) {
    const std::string& call = c.name;
    const std::vector<std::string>& args = c.args;
    long long result = c.result;
    if (args.empty()) continue;
    if (call == "read" || call == "pread64" || call == "readv" || call == "preadv" ||
        call == "preadv2") {
      StraceFileCounts& f = counts[c.fd_path];
      ++f.reads;
      if (result > 0) f.read_bytes += static_cast<uint64_t>(result);
    } else if (call == "write" || call == "pwrite64" || call == "writev" ||
               call == "pwritev" || call == "pwritev2") {
      StraceFileCounts& f = counts[c.fd_path];
      ++f.writes;
      if (result > 0) f.write_bytes += static_cast<uint64_t>(result);
    } else if (call == "openat" || call == "open" || call == "creat") {
      std::string path;
      if (!c.result_path.empty()) {
        path = c.result_path;
      } else if (call == "openat" && args.size() > 1) {
        path = Join(FdPath(args[0]), Unquote(args[1]));
      } else {
        path = Unquote(args[0]);
      }
      ++counts[path].opens;
    } else if (call == "copy_file_range") {
      StraceFileCounts& f = counts[c.fd_path];
      ++f.copy_in;
      if (result > 0) f.copy_in_bytes += static_cast<uint64_t>(result);
    } else if (call == "sendfile" && args.size() > 1) {
      StraceFileCounts& f = counts[FdPath(args[1])];
      ++f.copy_in;
      if (result > 0) f.copy_in_bytes += static_cast<uint64_t>(result);
    }
  }
  return counts;
}

StatsSummary StatsOf(const std::string& trace_dir) {
  StatsSummary summary;
  RunResult r = RunProgram({IotapBinary(), "stats", "--json", trace_dir});
  if (r.exit_code != 0) {
    ADD_FAILURE() << "iotap stats failed: " << r.err;
    return summary;
  }
  google::protobuf::Struct root;
  auto status = google::protobuf::util::JsonStringToMessage(r.out, &root);
  if (!status.ok()) {
    ADD_FAILURE() << "iotap stats --json is not JSON: " << status.ToString();
    return summary;
  }
  const auto& f = root.fields();
  summary.processes = static_cast<int>(f.at("processes").number_value());
  summary.events = static_cast<uint64_t>(f.at("events").number_value());
  summary.dropped_events = static_cast<uint64_t>(f.at("dropped_events").number_value());
  for (const auto& v : f.at("files").list_value().values()) {
    const auto& file = v.struct_value().fields();
    StatsFileCounts c;
    c.reads = static_cast<int>(file.at("reads").number_value());
    c.read_bytes = static_cast<uint64_t>(file.at("read_bytes").number_value());
    c.writes = static_cast<int>(file.at("writes").number_value());
    c.write_bytes = static_cast<uint64_t>(file.at("write_bytes").number_value());
    c.opens = static_cast<int>(file.at("opens").number_value());
    summary.files[file.at("path").string_value()] = c;
  }
  return summary;
}

RunResult RunTracedUnderStrace(const std::vector<std::string>& argv, const std::string& trace_dir,
                               const std::string& strace_log, const RunOptions& options) {
  std::vector<std::string> full = {"strace", "-f", "-y", "-s", "0", "-o", strace_log,
                                   "-e", "trace=%file,%desc",
                                   IotapBinary(), "run", "-o", trace_dir, "--"};
  full.insert(full.end(), argv.begin(), argv.end());
  // LeakSanitizer cannot work under ptrace: in a sanitized build the iotap
  // binary that strace follows keeps every other check but that one.
  RunOptions traced = options;
  const char* asan = getenv("ASAN_OPTIONS");
  traced.env["ASAN_OPTIONS"] = absl::StrCat(
      asan != nullptr && *asan != '\0' ? absl::StrCat(asan, ":") : "", "detect_leaks=0");
  return RunProgram(full, traced);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out << contents;
}

}  // namespace iotap::testing
