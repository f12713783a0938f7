// `iotap run`: start a command with libiotap.so preloaded, wait for it, and
// leave its exit status and signals exactly as they would be without iotap.

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analyzer/base/numbers.h"
#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/perf_keeper.h"
#include "analyzer/clocks/clock_exchanger.h"
#include "analyzer/live/session_file.h"
#include "proto/wire/layer_names.h"
#include "proto/wire/settings.h"

extern char** environ;

namespace iotap::cli {

namespace {

constexpr char kRunHelp[] =
    "usage: iotap run [-o DIR] [OPTIONS] [--] COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND with libiotap.so preloaded. COMMAND and every process it starts\n"
    "(forks, exec'd programs, DataLoader workers) write one trace file each into\n"
    "DIR. The exit code and any terminating signal of COMMAND are passed through.\n"
    "\n"
    "  -o, --output DIR         where traces go (default: ./iotap-YYYYMMDD-HHMMSS);\n"
    "                           created with mode 0700 if missing\n"
    "  --flush-interval MS      write buffered events at least this often, 10 to 3600000\n"
    "                           (default 1000; a killed job keeps all but the last MS)\n"
    "  --sample-interval MS     sample each process's CPU use this often, 10 to 3600000\n"
    "                           (default 100)\n"
    "  --buffer-events N        events per thread buffer, a power of two from 256 to\n"
    "                           65536 (default 4096)\n"
    "  --layers LIST            comma list of posix,stdio,hdf5,tfrecord,cuda,mapped,\n"
    "                           uring,waits (default all)\n"
    "  --zstd-level N           compression level 1-19, -7 to -1 for zstd's fast levels\n"
    "                           (larger traces, less CPU), or 0 to store (default 1)\n"
    "                           (a value out of these ranges, from an option or its\n"
    "                           IOTAP_* variable, is refused before COMMAND starts, as\n"
    "                           is a word a variable below does not take)\n"
    "  --quiet                  no warnings from the shim\n"
    "  --wait-orphans SECONDS   after COMMAND ends, wait up to this long for processes\n"
    "                           it left running (a DataLoader's resource tracker, a\n"
    "                           backgrounded helper) so their traces are complete\n"
    "                           (default 10; 0: do not wait)\n"
    "  --torch-steps            record the steps of unmodified PyTorch jobs: every wait\n"
    "                           for a DataLoader batch, every optimizer step, every epoch\n"
    "                           (Python processes load the iotap helper through a\n"
    "                           sitecustomize on PYTHONPATH when they import torch),\n"
    "                           and sample the Python stacks of the processes that do\n"
    "  --py-samples             sample the Python stacks of every Python process, for\n"
    "                           the report's breakdown of the loaders' CPU time by\n"
    "                           function (on by default with --torch-steps)\n"
    "  --py-sample-rate HZ      stack samples per second of each thread's CPU time\n"
    "                           (default 100; 0: none, also with --torch-steps)\n"
    "  --clock-sync HOST:PORT   put the nodes of a multi-node job on one clock: give\n"
    "                           every node's iotap run the same address (the first\n"
    "                           node's, a free port; \"slurm\": the Slurm job's first\n"
    "                           node, port 24000 + the job id's last 3 digits); the\n"
    "                           instance on HOST answers on PORT, the others exchange\n"
    "                           time stamps with it at the start, every minute or so\n"
    "                           and at the end, and the report puts every host on its\n"
    "                           clock from them (after the job, the instance on HOST\n"
    "                           waits up to 10 s for the others' last exchanges)\n"
    "\n"
    "The shim's settings as environment variables, for LD_PRELOAD use without iotap run:\n"
    "  LD_PRELOAD=/path/to/libiotap.so IOTAP_DIR=DIR COMMAND\n"
    "  IOTAP_DIR, IOTAP_FLUSH_INTERVAL_MS, IOTAP_SAMPLE_INTERVAL_MS, IOTAP_BUFFER_EVENTS,\n"
    "  IOTAP_LAYERS, IOTAP_ZSTD_LEVEL, IOTAP_QUIET=1, IOTAP_CLOCK=monotonic (no TSC;\n"
    "  tsc, the default, where trusted), IOTAP_WAIT_THRESHOLD_US, IOTAP_TIME_UNIT_NS,\n"
    "  IOTAP_CUPTI=1 (see the README; the switches take 1 or 0),\n"
    "  IOTAP_PY_SAMPLES=HZ (with PYTHONPATH=P/iotap/_site:P, P the helper's directory:\n"
    "  lib/python in a build tree, lib/iotap/python when installed),\n"
    "  IOTAP_DISABLE=1 (load but record nothing), IOTAP_SESSION (set by iotap run).\n"
    "iotap run passes on those from IOTAP_FLUSH_INTERVAL_MS to IOTAP_CUPTI (an option\n"
    "given wins) and sets the others itself.\n";

pid_t g_child = -1;

// Forwards signals sent to iotap to the command. Signals a terminal sends to
// its foreground process group already reached the command; those are not
// sent twice.
void Forward(int sig, siginfo_t* info, void*) {
  if (g_child <= 0) return;
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  kill(g_child, sig);
}

std::string SelfDirectory() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  buf[n] = '\0';
  std::string path(buf);
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// Where the shim and the Python helper are, relative to the directory of the
// iotap binary (README.md, "Installing"): the build tree's lib/ (build/bin/iotap,
// build/lib/libiotap.so, build/lib/python), or an installed tree's library
// directory (P/bin/iotap, P/LIBDIR/libiotap.so, P/LIBDIR/iotap/python), whose
// place relative to bin/ was fixed at configure time. Nothing absolute is
// compiled in: a moved tree still finds its own files.
constexpr char kBuildLibDir[] = "../lib";
constexpr char kBuildPythonDir[] = "../lib/python";
constexpr char kInstalledLibDir[] = IOTAP_LIBDIR_FROM_BINDIR;
constexpr char kInstalledPythonDir[] = IOTAP_LIBDIR_FROM_BINDIR "/iotap/python";

// The first directory of `dirs` (relative to the iotap binary's directory)
// that holds a readable `file`, with symbolic links resolved; or "".
std::string FindNextToSelf(std::initializer_list<const char*> dirs, const std::string& file) {
  std::string self = SelfDirectory();
  for (const char* dir : dirs) {
    std::string candidate = absl::StrCat(self, "/", dir);
    char resolved[PATH_MAX];
    if (access(absl::StrCat(candidate, "/", file).c_str(), R_OK) == 0 &&
        realpath(candidate.c_str(), resolved) != nullptr) {
      return resolved;
    }
  }
  return "";
}

// libiotap.so: $IOTAP_LIBRARY, or found from the iotap binary.
std::string FindLibrary() {
  if (const char* env = std::getenv("IOTAP_LIBRARY"); env != nullptr && *env != '\0') {
    return env;
  }
  std::string dir = FindNextToSelf({kBuildLibDir, kInstalledLibDir}, "libiotap.so");
  return dir.empty() ? "" : dir + "/libiotap.so";
}

// The directory holding the iotap Python package (interpose/python, copied
// into the build tree and installed): $IOTAP_PYTHON_DIR, or found from the
// iotap binary.
std::string FindPythonDirectory() {
  if (const char* env = std::getenv("IOTAP_PYTHON_DIR"); env != nullptr && *env != '\0') {
    return env;
  }
  return FindNextToSelf({kBuildPythonDir, kInstalledPythonDir}, "iotap/_site/sitecustomize.py");
}

std::string DefaultDirectory() {
  time_t now = time(nullptr);
  struct tm tm;
  localtime_r(&now, &tm);
  char base[64];
  strftime(base, sizeof(base), "iotap-%Y%m%d-%H%M%S", &tm);
  std::string dir = base;
  for (int i = 2; access(dir.c_str(), F_OK) == 0; ++i) dir = absl::StrCat(base, "-", i);
  return dir;
}

// Creates DIR (0700) or checks that an existing DIR is a real directory of
// ours. Returns its absolute path, or "" after printing why not.
std::string PrepareDirectory(const std::string& dir) {
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "iotap run: cannot create %s: %s\n", dir.c_str(), std::strerror(errno));
    return "";
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "iotap run: %s is not a directory (a symbolic link is refused)\n",
                 dir.c_str());
    return "";
  }
  if (st.st_uid != geteuid()) {
    std::fprintf(stderr, "iotap run: %s belongs to another user; choose another -o\n",
                 dir.c_str());
    return "";
  }
  char resolved[PATH_MAX];
  if (realpath(dir.c_str(), resolved) == nullptr) {
    std::fprintf(stderr, "iotap run: %s: %s\n", dir.c_str(), std::strerror(errno));
    return "";
  }
  return resolved;
}

std::string SessionId() {
  unsigned char bytes[8] = {};
  int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    if (read(fd, bytes, sizeof(bytes)) != sizeof(bytes)) std::memset(bytes, 0, sizeof(bytes));
    close(fd);
  }
  std::string id;
  for (unsigned char b : bytes) absl::StrAppendFormat(&id, "%02x", b);
  return id;
}

int CountTraces(const std::string& dir) {
  int n = 0;
  if (DIR* d = opendir(dir.c_str())) {
    while (struct dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name.size() > 6 && name.compare(name.size() - 6, 6, ".iotap") == 0) ++n;
    }
    closedir(d);
  }
  return n;
}

// Reaps the processes the command left behind (iotap is their subreaper),
// waiting up to `seconds` for the last to end. Returns how many still run.
int WaitForOrphans(double seconds) {
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    }
    if (pid < 0) return 0;  // ECHILD: none left
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    double waited = static_cast<double>(now.tv_sec - start.tv_sec) +
                    analyzer::Seconds(now.tv_nsec - start.tv_nsec);
    if (waited >= seconds) break;
    struct timespec pause = {0, 20'000'000};
    nanosleep(&pause, nullptr);
  }
  // Count those still running: our children now, in /proc.
  int left = 0;
  std::string self = std::to_string(getpid());
  if (DIR* d = opendir("/proc")) {
    while (struct dirent* e = readdir(d)) {
      if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
      std::FILE* f = std::fopen(absl::StrCat("/proc/", e->d_name, "/stat").c_str(), "r");
      if (f == nullptr) continue;
      char buf[512];
      size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
      std::fclose(f);
      buf[n] = '\0';
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const char* close = std::strrchr(buf, ')');
      char state = 0;
      int ppid = 0;
      if (close != nullptr && std::sscanf(close + 1, " %c %d", &state, &ppid) == 2 &&
          std::to_string(ppid) == self) {
        ++left;
      }
    }
    closedir(d);
  }
  return left;
}

// Ends iotap the way the command ended.
[[noreturn]] void ExitLike(int status) {
  if (WIFEXITED(status)) std::exit(WEXITSTATUS(status));
  int sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
  // Die of the same signal, without a core file of our own.
  struct rlimit no_core = {0, 0};
  setrlimit(RLIMIT_CORE, &no_core);
  signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, nullptr);
  raise(sig);
  std::_Exit(128 + sig);
}

// The host name the shim writes into traces (interpose/file/packets.h):
// the test-only IOTAP_TEST_HOSTNAME, else the node name.
std::string TraceHostname() {
  if (const char* test = std::getenv("IOTAP_TEST_HOSTNAME"); test != nullptr && *test != '\0') {
    return test;
  }
  struct utsname u;
  return uname(&u) == 0 ? u.nodename : "unknown";
}

// --clock-sync: starts the time exchanges, or says why not (the job runs
// either way).
std::unique_ptr<analyzer::ClockExchanger> StartClockSync(const Args& args, const std::string& dir) {
  if (!args.Has("--clock-sync")) return nullptr;
  analyzer::ClockSyncOptions options;
  options.address = args.Get("--clock-sync");
  if (options.address == "slurm") {
    const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
    absl::StatusOr<std::string> address = analyzer::SlurmClockSyncAddress(
        nodelist != nullptr ? nodelist : std::getenv("SLURM_NODELIST"), std::getenv("SLURM_JOB_ID"));
    if (!address.ok()) {
      std::fprintf(stderr, "iotap: %s; the hosts' clocks will be fitted from the steps alone\n",
                   std::string(address.status().message()).c_str());
      return nullptr;
    }
    options.address = *address;
  }
  options.directory = dir;
  options.host = TraceHostname();
  // The test-only shift of the traces' wall clock applies to ours alike.
  if (const char* offset = std::getenv("IOTAP_TEST_CLOCK_OFFSET_NS")) {
    options.clock_offset_ns = std::strtoll(offset, nullptr, 10);
  }
  absl::StatusOr<std::unique_ptr<analyzer::ClockExchanger>> x =
      analyzer::ClockExchanger::Start(options);
  if (!x.ok()) {
    std::fprintf(stderr, "iotap: %s; the hosts' clocks will be fitted from the steps alone\n",
                 std::string(x.status().message()).c_str());
    return nullptr;
  }
  return std::move(*x);
}

// The shim's settings that options of ours set (interpose/core/config.h).
constexpr std::pair<const char*, const char*> kOptionSettings[] = {
    {"--flush-interval", "IOTAP_FLUSH_INTERVAL_MS"},
    {"--sample-interval", "IOTAP_SAMPLE_INTERVAL_MS"},
    {"--buffer-events", "IOTAP_BUFFER_EVENTS"},
    {"--layers", "IOTAP_LAYERS"},
    {"--zstd-level", "IOTAP_ZSTD_LEVEL"},
    {"--quiet", "IOTAP_QUIET"},
};
// ... and those only the environment sets (the README's table).
constexpr const char* kEnvironmentSettings[] = {"IOTAP_WAIT_THRESHOLD_US", "IOTAP_TIME_UNIT_NS",
                                                "IOTAP_CLOCK", "IOTAP_CUPTI"};

// Whether the job gets `var`, an IOTAP_* variable of our environment: one
// of the shim's settings, unless an option of ours sets it (the option
// wins), IOTAP_LIBRARY, and the test-only IOTAP_TEST_*. The rest (IOTAP_DIR,
// IOTAP_SESSION, the Python helper's) is ours to set for this run.
bool PassesThrough(absl::string_view var, const Args& args) {
  absl::string_view name = var.substr(0, var.find('='));
  if (name == "IOTAP_LIBRARY" || absl::StartsWith(name, "IOTAP_TEST_")) return true;
  for (const auto& [option, variable] : kOptionSettings) {
    if (name == variable) return !args.Has(option);
  }
  for (const char* variable : kEnvironmentSettings) {
    if (name == variable) return true;
  }
  return false;
}

// Why the shim could not take --layers' `list` as given, or "" if it can:
// an item that names no layer (the shim would leave it out), or a list of
// empty items only (","), which would trace no layer at all. Empty items
// beside names ("posix,") it skips, and so does this; an empty list is all.
std::string BadLayers(const std::string& list) {
  if (list.empty() || list == "all") return "";
  bool named = false;
  for (absl::string_view item : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    if (wire::LayerIndex(item.data(), item.size()) < 0) {
      return absl::StrCat("no layer is named \"", item, "\"");
    }
    named = true;
  }
  return named ? "" : absl::StrCat("\"", list, "\" names no layer");
}

// Why the job could not take the numeric and worded settings it would get,
// or "" if it can take them all: an option of ours, or the variable that
// reaches the job in its stead (PassesThrough), holding a value the shim
// would replace with its default (proto/wire/settings.h). A variable that
// does not pass through (IOTAP_PY_SAMPLES: --py-sample-rate's, checked
// there; IOTAP_DISABLE) is ours to set and not checked here.
std::string BadSetting(const Args& args) {
  for (const wire::NumericSetting& s : wire::kNumericSettings) {
    std::string given;
    std::string value;
    const char* v = std::getenv(s.variable);
    if (s.option[0] != '\0' && args.Has(s.option)) {
      value = args.Get(s.option);
      given = absl::StrCat(s.option, " ", value);
    } else if (v != nullptr && *v != '\0' && PassesThrough(s.variable, args)) {
      value = v;
      given = absl::StrCat(s.variable, "=", value);
    } else {
      continue;
    }
    int64_t parsed = 0;
    if (!wire::ParseSetting(value.c_str(), s, &parsed)) {
      return absl::StrCat(given, ": takes ", s.meaning, ", from ", s.lo, " to ", s.hi);
    }
  }
  for (const wire::WordSetting& s : wire::kWordSettings) {
    const char* v = std::getenv(s.variable);
    if (v != nullptr && *v != '\0' && PassesThrough(s.variable, args) &&
        wire::ParseWord(v, s) < 0) {
      return absl::StrCat(s.variable, "=", v, ": takes ", s.words[1], " or ", s.words[0]);
    }
  }
  return "";
}

}  // namespace

int RunCommand(int argc, char** argv) {
  if (ShowHelpIfAsked(argc, argv, kRunHelp, /*command_follows=*/true)) return kExitOk;
  auto args = Args::Parse(argc, argv,
                          {{"-o", "--output", true},
                           {"", "--flush-interval", true},
                           {"", "--sample-interval", true},
                           {"", "--buffer-events", true},
                           {"", "--layers", true},
                           {"", "--zstd-level", true},
                           {"", "--quiet", false},
                           {"", "--wait-orphans", true},
                           {"", "--torch-steps", false},
                           {"", "--py-samples", false},
                           {"", "--py-sample-rate", true},
                           {"", "--clock-sync", true}},
                          /*stop_at_first_positional=*/true);
  if (!args.ok() || args->positional().empty()) {
    std::fprintf(stderr, "iotap run: %s\n\n%s",
                 args.ok() ? "no command to run" : std::string(args.status().message()).c_str(),
                 kRunHelp);
    return kExitUsage;
  }
  // The layers the shim will trace: --layers, else IOTAP_LAYERS, else all.
  const char* layers_env = std::getenv("IOTAP_LAYERS");
  const char* layers_from = args->Has("--layers") ? "--layers" : "IOTAP_LAYERS";
  const std::string layers =
      args->Has("--layers") ? args->Get("--layers") : (layers_env != nullptr ? layers_env : "");
  if (std::string bad = BadLayers(layers); !bad.empty()) {
    std::fprintf(stderr, "iotap run: %s: %s; the layers: %s\n", layers_from, bad.c_str(),
                 wire::kLayerList.text);
    return kExitUsage;
  }
  if (std::string bad = BadSetting(*args); !bad.empty()) {
    std::fprintf(stderr, "iotap run: %s\n", bad.c_str());
    return kExitUsage;
  }
  double orphan_wait = 10;
  if (args->Has("--wait-orphans") &&
      (!absl::SimpleAtod(args->Get("--wait-orphans"), &orphan_wait) || orphan_wait < 0 ||
       orphan_wait > 86400)) {
    std::fprintf(stderr, "iotap run: --wait-orphans takes seconds, from 0 to 86400\n");
    return kExitUsage;
  }
  std::string library = FindLibrary();
  if (library.empty()) {
    std::fprintf(stderr,
                 "iotap run: cannot find libiotap.so in %s/%s or %s/%s; set IOTAP_LIBRARY to "
                 "its path\n",
                 SelfDirectory().c_str(), kBuildLibDir, SelfDirectory().c_str(), kInstalledLibDir);
    return kExitUsage;
  }
  // LD_PRELOAD separates its paths with spaces and colons and has no escape.
  if (library.find_first_of(" :") != std::string::npos) {
    std::fprintf(stderr,
                 "iotap run: %s cannot be preloaded: LD_PRELOAD cannot carry a path with a "
                 "space or colon; install iotap where its path has none\n",
                 library.c_str());
    return kExitUsage;
  }
  int py_sample_hz = 100;
  if (args->Has("--py-sample-rate") &&
      (!absl::SimpleAtoi(args->Get("--py-sample-rate"), &py_sample_hz) || py_sample_hz < 0 ||
       py_sample_hz > 10000)) {
    std::fprintf(stderr, "iotap run: --py-sample-rate takes samples per CPU-second, 0 to 10000\n");
    return kExitUsage;
  }
  const bool torch_steps = args->Has("--torch-steps");
  const bool py_samples = (torch_steps || args->Has("--py-samples")) && py_sample_hz > 0;
  std::string python_dir;
  if (torch_steps || py_samples) {
    const char* python_option = torch_steps ? "--torch-steps" : "--py-samples";
    python_dir = FindPythonDirectory();
    if (python_dir.empty()) {
      std::fprintf(stderr,
                   "iotap run: %s: cannot find the iotap Python package in %s/%s or %s/%s; "
                   "set IOTAP_PYTHON_DIR to the directory holding iotap/\n",
                   python_option, SelfDirectory().c_str(), kBuildPythonDir,
                   SelfDirectory().c_str(), kInstalledPythonDir);
      return kExitUsage;
    }
    if (python_dir.find(':') != std::string::npos) {
      std::fprintf(stderr,
                   "iotap run: %s: %s cannot go on PYTHONPATH, which separates its "
                   "paths with colons; install iotap where its path has none\n",
                   python_option, python_dir.c_str());
      return kExitUsage;
    }
  }
  std::string dir = PrepareDirectory(args->Get("--output", DefaultDirectory()));
  if (dir.empty()) return kExitUsage;

  // The command's environment: ours plus the shim and its settings.
  std::vector<std::string> env;
  std::string preload = library;
  // --torch-steps, --py-samples: our sitecustomize first (it runs the one it
  // hides), then the iotap package, then whatever the user had.
  std::string python_path =
      python_dir.empty() ? "" : python_dir + "/iotap/_site:" + python_dir;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string var = *e;
    if (var.rfind("LD_PRELOAD=", 0) == 0) {
      std::string old = var.substr(11);
      if (!old.empty()) preload += " " + old;
      continue;
    }
    if (!python_path.empty() && var.rfind("PYTHONPATH=", 0) == 0) {
      std::string old = var.substr(11);
      if (!old.empty()) python_path += ":" + old;
      continue;
    }
    if (var.rfind("IOTAP_", 0) == 0 && !PassesThrough(var, *args)) continue;
    env.push_back(var);
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("IOTAP_DIR=" + dir);
  const std::string session_id = SessionId();
  env.push_back("IOTAP_SESSION=" + session_id);
  // The mark `iotap top` reads to know when the job has ended; the job runs
  // without it if it cannot be written.
  absl::StatusOr<analyzer::SessionFile> session = analyzer::StartSession(dir, session_id);
  if (!session.ok()) {
    std::fprintf(stderr, "iotap: %s (iotap top will not see the job end)\n",
                 std::string(session.status().message()).c_str());
  }
  for (const auto& [option, variable] : kOptionSettings) {
    if (!args->Has(option)) continue;
    const bool flag = option == std::string_view("--quiet");  // takes no value
    env.push_back(absl::StrCat(variable, "=", flag ? "1" : args->Get(option)));
  }
  if (!python_path.empty()) env.push_back("PYTHONPATH=" + python_path);
  if (torch_steps) env.push_back("IOTAP_TORCH_STEPS=1");
  if (py_samples) {
    env.push_back(absl::StrCat("IOTAP_PY_SAMPLES=", py_sample_hz));
    // --torch-steps alone: the processes that import torch.
    if (!args->Has("--py-samples")) env.push_back("IOTAP_PY_SAMPLES_WHEN=torch");
  }
  std::vector<char*> envp;
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::vector<std::string> command = args->positional();
  std::vector<char*> cargv;
  for (std::string& a : command) cargv.push_back(a.data());
  cargv.push_back(nullptr);

  // Signals are forwarded from the moment the child exists.
  struct sigaction forward = {};
  forward.sa_sigaction = Forward;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&forward.sa_mask);
  const int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH};
  struct sigaction saved[sizeof(kForwarded) / sizeof(int)];
  // Processes the command leaves behind become ours rather than init's, so
  // that we can wait for their traces too.
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
  // The job's page-fault samplers then open without the kernel's wait for
  // the first per-task perf event (perf_keeper.h).
  PerfKeeper perf_keeper = PerfKeeper::ForLayers(layers);
  std::fflush(nullptr);
  pid_t child = fork();
  if (child < 0) {
    std::fprintf(stderr, "iotap run: cannot fork: %s\n", std::strerror(errno));
    return kExitUsage;
  }
  if (child == 0) {
    execvpe(cargv[0], cargv.data(), envp.data());
    int err = errno;
    std::fprintf(stderr, "iotap run: cannot run %s: %s\n", cargv[0], std::strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  g_child = child;
  for (size_t i = 0; i < sizeof(kForwarded) / sizeof(int); ++i) {
    sigaction(kForwarded[i], &forward, &saved[i]);
  }
  std::unique_ptr<analyzer::ClockExchanger> clock_sync = StartClockSync(*args, dir);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) {
      std::fprintf(stderr, "iotap run: waiting for the command failed: %s\n",
                   std::strerror(errno));
      status = 0;
      break;
    }
  }
  // While waiting for the last time exchanges and for what the command left
  // running, a signal ends iotap as it would have ended before the command
  // started.
  g_child = -1;
  for (size_t i = 0; i < sizeof(kForwarded) / sizeof(int); ++i) {
    sigaction(kForwarded[i], &saved[i], nullptr);
  }
  // The last exchanges right at the job's end (a serving instance waits for
  // the others' up to 10 s).
  if (clock_sync != nullptr) {
    clock_sync->Finish(/*linger_s=*/10);
    if (!clock_sync->serving() && clock_sync->exchanges() == 0) {
      std::fprintf(stderr, "iotap: --clock-sync %s: no time exchange succeeded\n",
                   args->Get("--clock-sync").c_str());
    }
  }
  int left = WaitForOrphans(orphan_wait);
  if (left > 0) {
    std::fprintf(stderr,
                 "iotap: %d process%s started by the command still run%s after %g s; "
                 "%s when %s\n",
                 left, left == 1 ? "" : "es", left == 1 ? "s" : "", orphan_wait,
                 left == 1 ? "its trace ends" : "their traces end", left == 1 ? "it does" : "they do");
  }
  if (session.ok()) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL);
    if (absl::Status s = session->End(code); !s.ok()) {
      std::fprintf(stderr, "iotap: %s\n", std::string(s.message()).c_str());
    }
  }
  std::fprintf(stderr, "iotap: %d trace files in %s\niotap: see `iotap stats %s`\n",
               CountTraces(dir), dir.c_str(), dir.c_str());
  ExitLike(status);
}

}  // namespace iotap::cli
