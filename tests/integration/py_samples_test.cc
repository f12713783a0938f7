// The Python stack sampler (interpose/python/iotap/_sampler.py) in real
// programs under `iotap run --py-samples` and `--torch-steps`: every thread
// that uses CPU is sampled with its stack, its tid and its CPU time, threads
// that do not are not, and forked, spawned and forkserver children sample
// too. tests/integration/programs/py_sampler.py prints the CPU time each of
// its functions used (time.thread_time_ns), which the samples' weights are
// compared with.

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analyzer/read/trace_reader.h"
#include "analyzer/read/trace_set.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

constexpr int64_t kMs = 1000000;
// The sampler's interval at 100 samples per CPU-second.
constexpr int64_t kInterval = 10 * kMs;

struct Sample {
  uint32_t tid = 0;      // the thread sampled (aux)
  uint32_t sampler = 0;  // the thread that recorded it
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  int64_t cpu_ns = 0;
  std::vector<std::string> functions;  // qualified names, outermost first
  std::vector<uint64_t> lines;
  bool cut = false;  // the stack was cut at the depth limit
};

struct SampledProcess {
  int pid = 0;
  uint32_t py_sample_hz = 0;    // the header's
  std::vector<int64_t> states;  // OP_PY_SAMPLER results
  std::vector<uint64_t> rates;  // and their samples per CPU-second
  std::vector<std::string> notes;
  std::vector<Sample> samples;
  std::vector<std::string> bad_stacks;  // stacks that did not decode
};

// The varints of a KIND_PY_STACK string; false if they do not decode.
bool Varints(std::string_view bytes, std::vector<uint64_t>* out) {
  uint64_t v = 0;
  int shift = 0;
  for (unsigned char c : bytes) {
    if (shift > 63) return false;
    v |= static_cast<uint64_t>(c & 0x7f) << shift;
    shift += 7;
    if ((c & 0x80) == 0) {
      out->push_back(v);
      v = 0;
      shift = 0;
    }
  }
  return shift == 0;
}

class SampleCollector : public analyzer::TraceVisitor {
 public:
  void OnProcess(const analyzer::ProcessTrace& p) override {
    processes.emplace_back();
    processes.back().pid = p.header().pid();
    processes.back().py_sample_hz = p.header().py_sample_hz();
  }
  void OnEvents(const analyzer::ProcessTrace& p, const analyzer::EventBatch& batch) override {
    SampledProcess& out = processes.back();
    for (const analyzer::Event& e : batch.events) {
      if (e.op == OP_PY_SAMPLER) {
        out.states.push_back(e.result);
        out.rates.push_back(e.aux);
        out.notes.emplace_back(p.Text(e.file));
      }
      if (e.op != OP_PY_SAMPLE) continue;
      Sample s;
      s.tid = static_cast<uint32_t>(e.aux);
      s.sampler = e.tid;
      s.start_ns = e.start_ns;
      s.end_ns = e.end_ns;
      s.cpu_ns = static_cast<int64_t>(e.requested);
      std::vector<uint64_t> v;
      if (p.Name(e.file).kind != InternedString::KIND_PY_STACK || !Varints(p.Text(e.file), &v) ||
          v.size() % 2 != 0 || v.empty()) {
        out.bad_stacks.emplace_back(p.Text(e.file));
        continue;
      }
      for (size_t i = 0; i < v.size(); i += 2) {
        if (i == 0 && v[0] == 0) {
          s.cut = true;
          continue;
        }
        const auto& f = p.Name(static_cast<uint32_t>(v[i]));
        if (f.kind != InternedString::KIND_PY_FUNCTION) {
          out.bad_stacks.emplace_back(p.Text(e.file));
          break;
        }
        s.functions.emplace_back(f.value.substr(0, f.value.find('\0')));
        s.lines.push_back(v[i + 1]);
      }
      out.samples.push_back(std::move(s));
    }
  }

  std::vector<SampledProcess> processes;
};

std::vector<SampledProcess> LoadSamples(const std::string& dir) {
  auto files = analyzer::ListTraceFiles(dir);
  EXPECT_TRUE(files.ok()) << files.status();
  if (!files.ok()) return {};
  SampleCollector collector;
  analyzer::TraceSetResult r = analyzer::ReadTraceSet(*files, &collector);
  EXPECT_TRUE(r.issues.empty()) << r.issues[0].ToString();
  for (const SampledProcess& p : collector.processes) {
    EXPECT_TRUE(p.bad_stacks.empty()) << "pid " << p.pid << ": a sample's stack does not decode";
  }
  return collector.processes;
}

// What py_sampler.py printed: function -> (tid, CPU ns).
struct Spent {
  uint32_t tid = 0;
  int64_t cpu_ns = 0;
};
std::map<std::string, Spent> ParseSpent(const std::string& out) {
  std::map<std::string, Spent> spent;
  std::istringstream in(out);
  std::string name;
  Spent s;
  while (in >> name >> s.tid >> s.cpu_ns) spent[name] = s;
  return spent;
}

// The states a process's sampler recorded, in order of state (threads'
// events reach the trace in the order their buffers are written, not in the
// order of time), and each one's note.
std::map<int64_t, std::string> States(const SampledProcess& p) {
  std::map<int64_t, std::string> out;
  for (size_t i = 0; i < p.states.size(); ++i) out[p.states[i]] = p.notes[i];
  return out;
}
std::vector<int64_t> StateList(const SampledProcess& p) {
  std::vector<int64_t> out;
  for (const auto& [state, note] : States(p)) out.push_back(state);
  return out;
}

bool Contains(const Sample& s, const std::string& function) {
  for (const std::string& f : s.functions) {
    if (f == function) return true;
  }
  return false;
}

// CPU time of the samples of thread `tid` whose stack holds `function`.
int64_t CpuIn(const SampledProcess& p, uint32_t tid, const std::string& function,
              int* count = nullptr) {
  int64_t sum = 0;
  for (const Sample& s : p.samples) {
    if (s.tid == tid && Contains(s, function)) {
      sum += s.cpu_ns;
      if (count != nullptr) ++*count;
    }
  }
  return sum;
}

// `python3 py_sampler.py ARGS...`.
std::vector<std::string> SamplerProgram(std::initializer_list<std::string> args) {
  std::vector<std::string> argv = {Python(),
                                   SourcePath("tests/integration/programs/py_sampler.py")};
  argv.insert(argv.end(), args);
  return argv;
}

RunResult RunSampled(const std::vector<std::string>& options, const std::vector<std::string>& argv,
                     const std::string& trace_dir, int cpu_ms = 300,
                     const std::map<std::string, std::string>& env = {}) {
  std::vector<std::string> full = {IotapBinary(), "run", "-o", trace_dir};
  full.insert(full.end(), options.begin(), options.end());
  full.push_back("--");
  full.insert(full.end(), argv.begin(), argv.end());
  RunOptions o;
  o.env = env;
  o.env["PY_SAMPLER_CPU_S"] = std::to_string(cpu_ms / 1000.0);
  return RunProgram(full, o);
}

// A thread that starts after the sampler is first seen at the sampler's
// next look at the threads, which, while every thread is sampled by signal,
// comes at one wake-up in ten (py_stacks.cc, kSignalLookEvery): up to ten
// intervals of its CPU time, more when the machine delays the wake-ups, go
// unsampled.
constexpr int64_t kUntilSeen = 10 * kInterval;

// A function's samples add up to the CPU time it used, to within what the
// sampler cannot place: the CPU before a thread's first sighting (`unseen`
// more for a thread started later) and after its last sample (under half an
// interval each), and at the moments the thread moved from one function to
// the next (under an interval, more when the machine delays the sampler's
// wake-ups: a quarter of the time allowed).
void ExpectCpuNear(int64_t sampled, int64_t measured, const std::string& what, int64_t unseen = 0) {
  double slack = 3.0 * kInterval + 0.25 * static_cast<double>(measured);
  EXPECT_LE(static_cast<double>(sampled), static_cast<double>(measured) + slack)
      << what << ": samples hold " << sampled / kMs << " ms of the " << measured / kMs
      << " ms it used";
  EXPECT_GE(static_cast<double>(sampled), static_cast<double>(measured - unseen) - slack)
      << what << ": samples hold " << sampled / kMs << " ms of the " << measured / kMs
      << " ms it used";
}

TEST(PySamplesTest, EachThreadWhereItSpentItsCpu) {
  TempDir dir;
  RunResult r = RunSampled({"--py-samples"}, SamplerProgram({"threads"}), dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, Spent> spent = ParseSpent(r.out);
  for (const char* name :
       {"spin_long", "spin_short", "thread_work", "c_thread_work", "hash_work", "idle_wait"}) {
    ASSERT_EQ(spent.count(name), 1u) << name << " missing from\n" << r.out;
  }
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  ASSERT_EQ(processes.size(), 1u);
  const SampledProcess& p = processes[0];
  EXPECT_EQ(p.py_sample_hz, 100u);
  // Started, and sampling by signal (CPython 3.11.1 or later, here).
  ASSERT_EQ(p.states.size(), 2u);
  ASSERT_EQ(StateList(p), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(p.rates, (std::vector<uint64_t>{100, 100}));
  EXPECT_EQ(States(p)[1].rfind("cpython 3.", 0), 0u) << States(p)[1];
  EXPECT_EQ(States(p)[3], "");

  uint32_t main_tid = spent["spin_long"].tid;
  EXPECT_EQ(spent["spin_short"].tid, main_tid);
  EXPECT_EQ(spent["hash_work"].tid, main_tid);
  std::set<uint32_t> samplers;
  for (const Sample& s : p.samples) {
    samplers.insert(s.sampler);
    // One thread cannot use more CPU than the window's wall time.
    EXPECT_LE(s.cpu_ns, s.end_ns - s.start_ns + 20) << "tid " << s.tid;
    EXPECT_GE(s.cpu_ns, kInterval / 2) << "tid " << s.tid;
    EXPECT_FALSE(s.cut);
  }
  ASSERT_EQ(samplers.size(), 1u);
  uint32_t sampler = *samplers.begin();
  EXPECT_NE(sampler, main_tid);
  for (const Sample& s : p.samples) {
    EXPECT_NE(s.tid, sampler) << "the sampler sampled itself";
    EXPECT_NE(s.tid, spent["idle_wait"].tid) << "a thread that only waited was sampled";
  }

  for (const char* name : {"spin_long", "spin_short", "thread_work", "c_thread_work"}) {
    int count = 0;
    int64_t cpu = CpuIn(p, spent[name].tid, name, &count);
    bool later = spent[name].tid != main_tid;
    ExpectCpuNear(cpu, spent[name].cpu_ns, name, later ? kUntilSeen : 0);
    // About one sample per interval of CPU time: at most one per half.
    EXPECT_LE(count, spent[name].cpu_ns / (kInterval / 2) + 1) << name;
    EXPECT_GE(count, spent[name].cpu_ns / (5 * kInterval)) << name;
  }
  // A thread started by C code has no Python caller: its stack starts at the
  // callback.
  for (const Sample& s : p.samples) {
    if (s.tid == spent["c_thread_work"].tid) {
      EXPECT_EQ(s.functions.front(), "c_thread_work");
    }
  }
  // Time in C code (hashlib, the GIL released) is charged to the Python
  // function that called it, the innermost frame.
  int64_t in_hash = 0;
  for (const Sample& s : p.samples) {
    if (s.tid == main_tid && Contains(s, "hash_work") && s.functions.back() == "hash_work") {
      in_hash += s.cpu_ns;
    }
  }
  ExpectCpuNear(in_hash, spent["hash_work"].cpu_ns, "hash_work as the innermost frame");
}

// The share of thread `tid`'s samples whose CPU time lies within 0.2 ms of
// a multiple of 2 ms (a fifth of the interval), and how many there are:
// about a fifth for CPU times spread evenly.
double OnTheGrid(const SampledProcess& p, uint32_t tid, int* count) {
  int on = 0;
  *count = 0;
  for (const Sample& s : p.samples) {
    if (s.tid != tid) continue;
    ++*count;
    int64_t off = s.cpu_ns % (kInterval / 5);
    on += off <= kMs / 5 || off >= kInterval / 5 - kMs / 5;
  }
  return *count == 0 ? 0 : static_cast<double>(on) / *count;
}

// A sampled thread's signal comes after a period of its CPU time drawn at
// random, one signal per sample (py_signal.cc), so its samples' CPU times
// spread evenly; where the event's descriptor cannot be kept (a limit of 128
// descriptors) they are whole numbers of fifths of an interval (the signal
// every fifth, one in three taken) and still add up to the time spent. (The
// kernel starts each period when it handles the last one's timer, so a
// late timer moves the grid: with the ASan build under ctest -j2, 46% of
// the samples were within 0.1 ms of it in one run, against all of them on
// an idle machine.)
TEST(PySamplesTest, SamplesFallAtRandomMomentsOfCpuTime) {
  for (bool few_descriptors : {false, true}) {
    SCOPED_TRACE(few_descriptors ? "a limit of 128 descriptors" : "the usual limit");
    TempDir dir;
    std::vector<std::string> argv = SamplerProgram({"threads"});
    if (few_descriptors) argv.insert(argv.begin(), {"prlimit", "--nofile=128:128", "--"});
    RunResult r = RunSampled({"--py-samples"}, argv, dir.Sub("trace"), 500);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::map<std::string, Spent> spent = ParseSpent(r.out);
    // prlimit's own process has no sampler.
    std::vector<SampledProcess> processes;
    for (SampledProcess& p : LoadSamples(dir.Sub("trace"))) {
      if (!p.states.empty()) processes.push_back(std::move(p));
    }
    ASSERT_EQ(processes.size(), 1u);
    const SampledProcess& p = processes[0];
    ASSERT_EQ(StateList(p), (std::vector<int64_t>{1, 3}));
    uint32_t tid = spent["spin_long"].tid;
    ExpectCpuNear(CpuIn(p, tid, "spin_long"), spent["spin_long"].cpu_ns, "spin_long");
    int count = 0;
    double on_grid = OnTheGrid(p, tid, &count);
    std::cout << count << " samples, " << 100 * on_grid << "% on the grid\n";
    ASSERT_GE(count, 50);
    if (few_descriptors) {
      EXPECT_GE(on_grid, 0.45);
    } else {
      EXPECT_LE(on_grid, 0.35);
    }
  }
}

// A job that closes every descriptor (the sampler's parked events among
// them) and opens files of its own on their numbers: its files stay open
// (the sampler closes a number only while it still names its event), and
// its threads are still sampled.
TEST(PySamplesTest, AJobThatClosesEveryDescriptorKeepsItsFilesAndItsSamples) {
  TempDir dir;
  RunResult r = RunSampled({"--py-samples"}, SamplerProgram({"closefds"}), dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  size_t at = r.out.find("kept ");
  ASSERT_NE(at, std::string::npos) << r.out;
  int kept = -1;
  int of = -2;
  ASSERT_EQ(sscanf(r.out.c_str() + at, "kept %d of %d", &kept, &of), 2) << r.out;
  EXPECT_EQ(kept, of);
  EXPECT_GE(of, 100);
  std::map<std::string, Spent> spent = ParseSpent(r.out.substr(0, at));
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  ASSERT_EQ(processes.size(), 1u);
  for (const char* name : {"before_close", "after_close"}) {
    ASSERT_EQ(spent.count(name), 1u) << name << " missing from\n" << r.out;
    ExpectCpuNear(CpuIn(processes[0], spent[name].tid, name), spent[name].cpu_ns, name, kUntilSeen);
  }
}

// One busy process per core for the object's life: every core taken, as
// when other jobs share the machine.
class BusyCores {
 public:
  BusyCores() {
    unsigned n = std::thread::hardware_concurrency();
    for (unsigned i = 0; i < (n == 0 ? 1 : n); ++i) {
      pid_t pid = fork();
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (;;) asm volatile("");
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~BusyCores() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  BusyCores(const BusyCores&) = delete;
  BusyCores& operator=(const BusyCores&) = delete;

 private:
  std::vector<pid_t> pids_;
};

// CPU time spent in C code that holds the GIL (bytes.translate) is charged
// to the Python function that called it, with every core busy: each
// function's share of the samples' CPU time is within 8 points of its share
// by the program's own thread CPU timers (6 s of CPU: about 600 samples, so
// a share near 40% has a standard error of 2 points by chance alone). Runs
// here were within 3 points when quiet, and up to 7 points off when other
// tests ran beside the busy loops, or the ASan build's suite alone (hold_gil
// 32% and 33% against 38% and 37%); issue 16's bar for the report's
// profile is 10 points.
// The sampler that waits for the GIL (IOTAP_TEST_PY_GIL_SAMPLER=1) put
// hold_gil at 42% and 46% and release_gil at 36% and 32%, against 30% and
// 48% by their timers; a POSIX CPU-clock timer's signal (the fallback where
// perf events are refused, IOTAP_TEST_NO_PERF=1) put python_work at 11% and
// 7% against 22%.
TEST(PySamplesTest, CpuInCodeThatHoldsTheGilIsChargedToIt) {
  TempDir dir;
  RunResult r;
  {
    BusyCores busy;
    r = RunSampled({"--py-samples"}, SamplerProgram({"gil"}), dir.Sub("trace"), 6000);
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, Spent> spent = ParseSpent(r.out);
  const std::vector<std::string> names = {"hold_gil", "release_gil", "python_work"};
  double timed = 0;
  for (const std::string& name : names) {
    ASSERT_EQ(spent.count(name), 1u) << name << " missing from\n" << r.out;
    timed += static_cast<double>(spent[name].cpu_ns);
  }
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  ASSERT_EQ(processes.size(), 1u);
  const SampledProcess& p = processes[0];
  uint32_t tid = spent["hold_gil"].tid;
  std::map<std::string, double> sampled;
  double total = 0;
  for (const std::string& name : names) {
    sampled[name] = static_cast<double>(CpuIn(p, tid, name));
    total += sampled[name];
  }
  ASSERT_GT(total, 0);
  ExpectCpuNear(static_cast<int64_t>(total), static_cast<int64_t>(timed), "the three functions");
  for (const std::string& name : names) {
    double by_samples = sampled[name] / total;
    double by_timer = static_cast<double>(spent[name].cpu_ns) / timed;
    std::cout << name << ": " << 100 * by_samples << "% of the samples' CPU time, "
              << 100 * by_timer << "% by its timer\n";
    EXPECT_NEAR(by_samples, by_timer, 0.08) << name;
  }
}

// A process sampled with the GIL says so and why, and the report warns
// that CPU in C code that holds the GIL is then counted for the code after
// it; one sampled by signal needs no such note.
TEST(PySamplesTest, TheTraceAndTheReportSayHowSamplesWereTaken) {
  for (bool gil : {true, false}) {
    TempDir dir;
    std::map<std::string, std::string> env;
    if (gil) env["IOTAP_TEST_PY_GIL_SAMPLER"] = "1";
    RunResult r =
        RunSampled({"--py-samples"}, SamplerProgram({"threads"}), dir.Sub("trace"), 300, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
    ASSERT_EQ(processes.size(), 1u);
    const SampledProcess& p = processes[0];
    ASSERT_EQ(p.states.size(), 2u);
    ASSERT_EQ(StateList(p), (std::vector<int64_t>{1, gil ? 4 : 3}));
    EXPECT_EQ(States(p)[gil ? 4 : 3], gil ? "IOTAP_TEST_PY_GIL_SAMPLER=1" : "");
    EXPECT_FALSE(p.samples.empty());
    RunResult report = RunProgram({IotapBinary(), "report", dir.Sub("trace")});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    std::string note = "Python stack samples of process(es) " + std::to_string(p.pid) +
                       " were taken with the GIL (IOTAP_TEST_PY_GIL_SAMPLER=1)";
    EXPECT_EQ(report.out.find(note) != std::string::npos, gil) << report.out;
    EXPECT_EQ(report.out.find("taken with the GIL") != std::string::npos, gil) << report.out;
  }
}

// A forked child samples its own threads into its own trace, from the
// moment it exists; the parent's samples stay in the parent's trace.
TEST(PySamplesTest, ForkedChildSamplesItself) {
  TempDir dir;
  RunResult r = RunSampled({"--py-samples"}, SamplerProgram({"fork"}), dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, Spent> spent = ParseSpent(r.out);
  ASSERT_EQ(spent.size(), 2u) << r.out;
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  ASSERT_EQ(processes.size(), 2u);
  const SampledProcess* parent = nullptr;
  const SampledProcess* child = nullptr;
  for (const SampledProcess& p : processes) {
    (static_cast<uint32_t>(p.pid) == spent["child_work"].tid ? child : parent) = &p;
  }
  ASSERT_NE(child, nullptr);
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(parent->states.size(), 2u);
  EXPECT_EQ(StateList(*parent), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(child->states.size(), 2u);
  EXPECT_EQ(StateList(*child), (std::vector<int64_t>{1, 3}));
  ExpectCpuNear(CpuIn(*parent, spent["parent_work"].tid, "parent_work"),
                spent["parent_work"].cpu_ns, "parent_work");
  ExpectCpuNear(CpuIn(*child, spent["child_work"].tid, "child_work"), spent["child_work"].cpu_ns,
                "child_work");
  for (const Sample& s : child->samples) {
    EXPECT_EQ(s.tid, spent["child_work"].tid);
    EXPECT_FALSE(Contains(s, "parent_work"));
  }
  EXPECT_EQ(CpuIn(*parent, spent["parent_work"].tid, "child_work"), 0);
}

// DataLoader workers, however started, sample their __getitem__ work; under
// --torch-steps alone the sampler starts when a process imports torch, so
// the spawned workers' CPU from then on is there.
class PySamplesLoaderTest : public ::testing::TestWithParam<const char*> {};

TEST_P(PySamplesLoaderTest, WorkersSampleTheirDataset) {
  TempDir dir;
  RunResult r =
      RunSampled({"--torch-steps"}, SamplerProgram({"loader", GetParam()}), dir.Sub("trace"), 400);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "batches 4\n");
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  int workers = 0;
  int64_t decode_cpu = 0;
  for (const SampledProcess& p : processes) {
    EXPECT_EQ(p.py_sample_hz, 100u);
    int64_t in_decode = 0;
    for (const Sample& s : p.samples) {
      if (!Contains(s, "Slow.decode")) continue;
      in_decode += s.cpu_ns;
      EXPECT_TRUE(Contains(s, "_worker_loop"));
      EXPECT_TRUE(Contains(s, "Slow.__getitem__"));
    }
    if (in_decode > 0) {
      ++workers;
      EXPECT_EQ(p.states.size(), 2u);
      EXPECT_EQ(StateList(p), (std::vector<int64_t>{1, 3}));
    }
    decode_cpu += in_decode;
  }
  EXPECT_EQ(workers, 2);
  // 16 samples of 50 ms each.
  ExpectCpuNear(decode_cpu, 800 * kMs, "Slow.decode in the workers");
}

INSTANTIATE_TEST_SUITE_P(StartMethods, PySamplesLoaderTest,
                         ::testing::Values("fork", "spawn", "forkserver"));

// A program that enters CPython's evaluation loop from C as often as it can
// (py_churn.py), sampled at 1000 Hz: signals land in the instructions where
// the interpreter's frame pointers are being set up or torn down. The
// handler's first version, which followed them with plain loads, died with
// SIGSEGV in 2 of 12 five-second runs; the job must finish as it would
// untraced, and every sample kept must be a whole stack, from <module> down.
TEST(PySamplesTest, SignalsMidUpdateNeverFaultAndKeepOnlyWholeStacks) {
  TempDir dir;
  RunResult r = RunSampled({"--py-samples", "--py-sample-rate", "1000"},
                           {Python(), SourcePath("tests/integration/programs/py_churn.py"), "8"},
                           dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("rounds ", 0), 0u) << r.out;
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  ASSERT_EQ(processes.size(), 1u);
  const SampledProcess& p = processes[0];
  int main_thread = 0;
  int in_deep = 0;
  int at_exit = 0;
  for (const Sample& s : p.samples) {
    if (s.tid != static_cast<uint32_t>(p.pid)) continue;
    ++main_thread;
    ASSERT_FALSE(s.functions.empty());
    // After the module's code, the interpreter calls threading._shutdown on
    // the main thread as it exits (a sample there is whole too).
    if (s.functions.front() == "_shutdown") {
      ++at_exit;
      continue;
    }
    EXPECT_EQ(s.functions.front(), "<module>");
    EXPECT_FALSE(s.cut);
    // deep(d) recurses into itself only: a stack that holds it holds
    // nothing else below it but what deep may call.
    size_t first = 0;
    while (first < s.functions.size() && s.functions[first] != "deep") ++first;
    if (first == s.functions.size()) continue;
    ++in_deep;
    EXPECT_EQ(first, 1u);
    for (size_t i = first; i < s.functions.size(); ++i) EXPECT_EQ(s.functions[i], "deep");
  }
  // 8 s of CPU at 1000 Hz, whatever the machine's load took of it.
  EXPECT_GT(main_thread, 1000);
  EXPECT_GT(in_deep, 0);
  EXPECT_LE(at_exit, 5);  // _shutdown takes well under 5 ms with no thread to join
}

// -I and -S interpreters never reach the helper: they run as before, and
// their header still says samples were asked for (the report names them).
TEST(PySamplesTest, IsolatedInterpretersRunUnsampled) {
  std::string probe = "import sys; print(sorted(m for m in sys.modules if m.startswith('iotap')))";
  for (const char* flag : {"-I", "-S"}) {
    TempDir d;
    RunResult isolated = RunSampled({"--py-samples"}, {Python(), flag, "-c", probe}, d.Sub("t"));
    ASSERT_EQ(isolated.exit_code, 0) << isolated.err;
    EXPECT_EQ(isolated.out, "[]\n") << flag;
    std::vector<SampledProcess> processes = LoadSamples(d.Sub("t"));
    ASSERT_EQ(processes.size(), 1u);
    EXPECT_EQ(processes[0].py_sample_hz, 100u);
    EXPECT_TRUE(processes[0].states.empty());
    EXPECT_TRUE(processes[0].samples.empty());
  }
}

// Started by the program itself on a non-CPython interpreter (faked here):
// the trace says why there are no samples, and nothing else changes.
TEST(PySamplesTest, UnsupportedInterpreterLeavesANote) {
  TempDir dir;
  RunOptions o;
  o.env["PYTHONPATH"] = SourcePath("interpose/python");
  RunResult r = RunPreloaded({Python(), "-c",
                              "import sys; sys.implementation.name = 'pypy'; import iotap; "
                              "print(iotap.sample_stacks(), sum(range(10**6)))"},
                             dir.Sub("trace"), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "False 499999500000\n");
  std::vector<SampledProcess> processes = LoadSamples(dir.Sub("trace"));
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].py_sample_hz, 0u);
  EXPECT_EQ(processes[0].states, std::vector<int64_t>{2});
  EXPECT_EQ(processes[0].notes[0].rfind("pypy 3.", 0), 0u) << processes[0].notes[0];
  EXPECT_NE(processes[0].notes[0].find("need CPython"), std::string::npos);
  EXPECT_TRUE(processes[0].samples.empty());
}

}  // namespace
}  // namespace iotap::testing
