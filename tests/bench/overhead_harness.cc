// Traced against untraced, in one invocation.
//
//   overhead_harness --shim build/lib/libiotap.so --worker build/bin/io_worker
//       --mode pread1 --calls 1000000 --threads 1 --pairs 15 --file DATA   (one line)
//
// --threads N has the worker create N threads that each run the loop;
// --threads main runs it on the worker's main thread, with no other thread
// (a single-threaded program, which Linux serves faster untraced).
//
// Runs the worker in pairs, once untraced and once with the shim (order
// alternating from pair to pair), and reports for each the median ns per call
// and the median of the per-pair differences: pairing cancels the slow drift
// of a shared machine, the median its spikes. For traced runs it also reports
// the trace's size per event, the events dropped and the worker's RSS growth.
// Prints a human summary and, with --json FILE, the numbers as JSON.
//
// With --baseline-layers LIST the baseline is traced too, with only the
// layers in LIST (IOTAP_LAYERS), so the difference is the cost of the other
// layers alone (TFRecord attribution: --baseline-layers posix,stdio,hdf5).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Sample {
  double wall = 0;
  double cpu = 0;
  double process_cpu = -1;  // when the worker reports it
  long rss_growth_kib = 0;
  long calls = 0;
};

std::map<std::string, std::string> Flags(int argc, char** argv) {
  std::map<std::string, std::string> flags;
  for (int i = 1; i + 1 < argc; i += 2) flags[argv[i]] = argv[i + 1];
  return flags;
}

// Runs the worker, with the shim if `trace_dir` is not empty, and parses its
// key=value line.
Sample RunWorker(const std::vector<std::string>& argv, const std::string& shim,
                 const std::string& trace_dir, const std::string& layers = "") {
  int pipefd[2];
  if (pipe(pipefd) != 0) std::exit(2);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 1);
    close(pipefd[0]);
    close(pipefd[1]);
    if (!trace_dir.empty()) {
      setenv("LD_PRELOAD", shim.c_str(), 1);
      setenv("IOTAP_DIR", trace_dir.c_str(), 1);
      if (!layers.empty()) setenv("IOTAP_LAYERS", layers.c_str(), 1);
    } else {
      unsetenv("LD_PRELOAD");
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipefd[1]);
  std::string out;
  char buf[512];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof(buf))) > 0) out.append(buf, n);
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "worker failed (status %d): %s\n", status, out.c_str());
    std::exit(2);
  }
  Sample s;
  if (std::sscanf(out.c_str(),
                  "ns_per_call=%lf cpu_ns_per_call=%lf calls=%ld rss_growth_kib=%ld"
                  " process_cpu_ns_per_call=%lf",
                  &s.wall, &s.cpu, &s.calls, &s.rss_growth_kib, &s.process_cpu) < 4) {
    std::fprintf(stderr, "unexpected worker output: %s\n", out.c_str());
    std::exit(2);
  }
  return s;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double Quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1) + 0.5)];
}

// A 95% interval for the median of `v`, by bootstrap (2,000 resamples, a
// fixed seed): how far the median of this many pairs can be trusted. On a
// shared VM one pair of 1-byte preads differs by tens of ns either way, so
// the median of 21 pairs moves by about 10 ns between sittings.
std::pair<double, double> MedianInterval(const std::vector<double>& v) {
  std::mt19937 rng(20261201);
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  std::vector<double> medians, sample(v.size());
  for (int b = 0; b < 2000; ++b) {
    for (double& x : sample) x = v[pick(rng)];
    medians.push_back(Median(sample));
  }
  return {Quantile(medians, 0.025), Quantile(medians, 0.975)};
}

// "events" and "dropped_events" from `iotap stats --json DIR`.
bool TraceCounts(const std::string& iotap, const std::string& dir, long* events, long* dropped) {
  std::string cmd = iotap + " stats --json " + dir;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return false;
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  size_t e = out.find("\"events\": ");
  size_t d = out.find("\"dropped_events\": ");
  if (e == std::string::npos || d == std::string::npos) return false;
  *events = std::atol(out.c_str() + e + 10);
  *dropped = std::atol(out.c_str() + d + 18);
  return true;
}

uint64_t DirectoryBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  auto flags = Flags(argc, argv);
  auto get = [&](const char* name, const char* fallback) {
    auto it = flags.find(name);
    return it == flags.end() ? std::string(fallback) : it->second;
  };
  std::string shim = get("--shim", "");
  std::string worker = get("--worker", "");
  std::string iotap = get("--iotap", "");
  std::string mode = get("--mode", "pread1");
  std::string calls = get("--calls", "1000000");
  std::string threads = get("--threads", "1");
  int pairs = std::atoi(get("--pairs", "11").c_str());
  std::string file = get("--file", "");
  std::string json = get("--json", "");
  std::string baseline_layers = get("--baseline-layers", "");
  if (shim.empty() || worker.empty() || file.empty()) {
    std::fprintf(stderr,
                 "usage: overhead_harness --shim LIB --worker BIN --file DATA [--mode MODE]"
                 " [--calls N] [--threads N|main] [--pairs N] [--iotap BIN] [--json FILE]"
                 " [--baseline-layers LIST]\n");
    return 1;
  }
  std::vector<std::string> wargv = {worker, mode, file, calls, threads};
  char tmpl[] = "/tmp/iotap-harness-XXXXXX";
  std::string base = mkdtemp(tmpl);

  std::vector<double> plain_wall, traced_wall, plain_cpu, traced_cpu, diff_wall, diff_cpu;
  std::vector<double> bytes_per_event, rss_growth, diff_process;
  long min_events = -1, max_dropped = 0;
  RunWorker(wargv, shim, "");  // warm the page cache and the binaries
  for (int p = 0; p < pairs; ++p) {
    std::string dir = base + "/run" + std::to_string(p);
    std::string baseline_dir =
        baseline_layers.empty() ? "" : base + "/baseline" + std::to_string(p);
    Sample plain, traced;
    if (p % 2 == 0) {
      plain = RunWorker(wargv, shim, baseline_dir, baseline_layers);
      traced = RunWorker(wargv, shim, dir);
    } else {
      traced = RunWorker(wargv, shim, dir);
      plain = RunWorker(wargv, shim, baseline_dir, baseline_layers);
    }
    plain_wall.push_back(plain.wall);
    traced_wall.push_back(traced.wall);
    plain_cpu.push_back(plain.cpu);
    traced_cpu.push_back(traced.cpu);
    diff_wall.push_back(traced.wall - plain.wall);
    diff_cpu.push_back(traced.cpu - plain.cpu);
    if (traced.process_cpu >= 0 && plain.process_cpu >= 0) {
      diff_process.push_back(traced.process_cpu - plain.process_cpu);
    }
    rss_growth.push_back(traced.rss_growth_kib - plain.rss_growth_kib);
    bytes_per_event.push_back(static_cast<double>(DirectoryBytes(dir)) / traced.calls);
    long events = 0, dropped = 0;
    if (!iotap.empty() && TraceCounts(iotap, dir, &events, &dropped)) {
      if (min_events < 0 || events < min_events) min_events = events;
      max_dropped = std::max(max_dropped, dropped);
    }
    fs::remove_all(dir);
    if (!baseline_dir.empty()) fs::remove_all(baseline_dir);
  }
  fs::remove_all(base);

  bool on_main = threads == "main";
  std::string where =
      on_main ? "on the main thread, no other thread" : "x " + threads + " created threads";
  std::printf("mode %s, %s calls %s, %d pairs\n", mode.c_str(), calls.c_str(), where.c_str(),
              pairs);
  std::string baseline =
      baseline_layers.empty() ? "untraced" : "baseline (traced, layers " + baseline_layers + ")";
  std::printf("  %-9s median %.1f ns/call (cpu %.1f)\n", baseline.c_str(), Median(plain_wall),
              Median(plain_cpu));
  std::printf("  traced    median %.1f ns/call (cpu %.1f)\n", Median(traced_wall),
              Median(traced_cpu));
  std::printf(
      "  added     median %.1f ns/call wall [p25 %.1f, p75 %.1f], %.1f ns/call cpu"
      " (%.1f%% of the baseline's wall time)\n",
      Median(diff_wall), Quantile(diff_wall, 0.25), Quantile(diff_wall, 0.75), Median(diff_cpu),
      100 * Median(diff_wall) / Median(plain_wall));
  const auto [low, high] = MedianInterval(diff_wall);
  std::printf("            95%% interval of the median %.1f to %.1f ns/call wall\n", low, high);
  // The fastest run of each side: on a shared machine noise only ever adds
  // time, so the difference of the two floors is the cost least disturbed by
  // it (the medians above include whatever the neighbours did).
  const double fastest_plain = *std::min_element(plain_wall.begin(), plain_wall.end());
  const double fastest_traced = *std::min_element(traced_wall.begin(), traced_wall.end());
  std::printf("  fastest   %.1f ns/call traced, %.1f untraced: %.1f ns/call added\n",
              fastest_traced, fastest_plain, fastest_traced - fastest_plain);
  if (!diff_process.empty()) {
    std::printf(
        "  process   median %.1f ns/call more CPU in the whole process (writer thread"
        " included)\n",
        Median(diff_process));
  }
  std::printf("  trace     median %.3f bytes/event (whole directory, headers included)\n",
              Median(bytes_per_event));
  std::printf("  rss       median %.0f KiB more than untraced\n", Median(rss_growth));
  if (min_events >= 0) {
    std::printf("  events    at least %ld recorded per run for %s calls, at most %ld dropped\n",
                min_events, calls.c_str(), max_dropped);
  }
  if (!json.empty()) {
    FILE* f = std::fopen(json.c_str(), "w");
    if (f != nullptr) {
      std::fprintf(f,
                   "{\"mode\": \"%s\", \"calls\": %s, \"threads\": %s, \"pairs\": %d,\n"
                   " \"untraced_ns_per_call\": %.2f, \"traced_ns_per_call\": %.2f,\n"
                   " \"added_ns_per_call\": %.2f, \"added_cpu_ns_per_call\": %.2f,\n"
                   " \"added_ns_per_call_interval\": [%.2f, %.2f],\n"
                   " \"fastest_added_ns_per_call\": %.2f,\n"
                   " \"bytes_per_event\": %.4f, \"rss_growth_kib\": %.0f,\n"
                   " \"min_events\": %ld, \"max_dropped\": %ld}\n",
                   mode.c_str(), calls.c_str(), on_main ? "\"main\"" : threads.c_str(), pairs,
                   Median(plain_wall), Median(traced_wall), Median(diff_wall), Median(diff_cpu),
                   low, high, fastest_traced - fastest_plain, Median(bytes_per_event),
                   Median(rss_growth), min_events, max_dropped);
      std::fclose(f);
    }
  }
  return 0;
}
