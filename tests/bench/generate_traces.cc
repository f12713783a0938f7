// Writes a synthetic job's traces for the analyzer's scale benchmark
// (run-analyzer-scale.sh): trace files as libiotap.so would leave them, with
// as many processes and events as asked.
//
//   generate_traces DIR [--processes=1000] [--events=100000000] [--hosts=2]
//                       [--ranks=8] [--files=N] [--duration-s=120]
//                       [--layout=files|shards|stress] [--seed=1] [--threads=2]
//                       [--part=K/M] [--flush-s=S]
//   generate_traces DIR PROCESSES EVENTS_PER_PROCESS   (the old stress job)
//
// --layout=files (the default) and --layout=shards are DataLoader jobs:
// - `--ranks` trainer processes (one per GPU) spread over `--hosts` hosts,
//   and the rest of `--processes` as forked DataLoader workers, shared out
//   evenly among the trainers (1000 processes, 8 ranks: 124 or 125 each);
// - a dataset shared by every worker, read in a shuffled order (each epoch
//   its own order, workers interleaved as a DistributedSampler and worker
//   sharding would);
//   - files: an ImageFolder dataset of `--files` (default 4,000) JPEGs of a
//     few hundred KB (60 KiB to about 1 MiB) in 100 class directories under
//     /datasets/imagenet/train. A worker opens a sample (openat, fstat),
//     reads it as Pillow does (a 4 KiB header read, then pieces of 64 KiB,
//     256 KiB or 1 MiB, and the read that finds the end) and closes it; the
//     dataset is read as many times as the event budget allows;
//   - shards: a WebDataset of `--files` (default 20,000) tar shards under
//     /datasets/webdataset/train, every shard read once in the first epoch
//     and about a quarter of them again in a second one; a shard holds the
//     same number of samples as every other, chosen so that this happens
//     within the event budget. A worker opens a shard (openat, fstat), reads
//     each sample as tarfile does (a 512-byte header, the JPEG, a 512-byte
//     header, the JSON label, each rounded up to 512 bytes) and closes it;
// - at start a worker reads the dataset's index and a few files of its
//   runtime and of /proc;
// - a trainer starts by importing Python (stat, open, read and close of
//   about 300 modules, some stats failing), reads the index, then runs
//   steps of about 250 ms: a step marker pair, a data wait (the Python
//   helper's span), two pinned asynchronous host-to-device copies; rank 0
//   writes a checkpoint (16 writes of 4 MiB and an fsync) every 200 steps;
// - every process writes a clock snapshot every second and a resource
//   sample (CPU, run queue, RSS) every 100 ms, as the shim does, and times
//   count in 10 ns units (the shim's default);
// - the run lasts `--duration-s` seconds; workers start 3 to 5 s after
//   their trainer and spread their events over the rest of the run.
// Trainers' events are what they are; the workers share the rest of
// `--events` evenly, so the total is exact.
//
// --layout=stress is the job this generator used to write: one trainer
// that only marks steps and loaders that each read their own distinct files,
// 64 reads per file (1.56 million paths for 100 million events over 1000
// processes): a stress case for the file table, not a realistic job.
//
// --flush-s=S also ends a frame where S seconds of a process's events (from
// its start) do, as the shim's flushes cut them, and leaves out the clock
// snapshots: grow_traces (beside this) writes such a job's files as they
// would grow, moving its wall clock to the present, which the snapshots'
// wall-clock readings would contradict.
//
// --part=K/M writes only the trainers of ranks r with r % M == K and their
// workers: the part of the job one of M analysis ranks reads (they are
// dealt a trainer's group at a time), so that a cluster-sized job's share
// can be measured without writing the whole job (run-analyzer-cluster.sh);
// the M parts written into one directory are the whole job, file for file.
//
// Output is deterministic for given arguments. Files are written by
// `--threads` threads (one process at a time each).

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analyzer/testing/synthetic_trace.h"

namespace {

using iotap::EndOfTrace;
using iotap::ProcessHeader;
using iotap::analyzer::SyntheticProcess;
using Spec = SyntheticProcess::EventSpec;

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kS = 1'000'000'000;
constexpr uint32_t kTimeUnitNs = 10;
constexpr size_t kEventsPerFrame = 16384;
constexpr uint32_t kTracked = iotap::FLAG_HAS_OFFSET | iotap::FLAG_OFFSET_TRACKED;
constexpr uint64_t kORdOnly = 0x80000;       // O_RDONLY | O_CLOEXEC
constexpr uint64_t kOWrCreat = 0x80241;      // O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC
constexpr int64_t kStepNs = 250 * kMs;
constexpr int kCheckpointEvery = 200;        // steps
constexpr int kModules = 300;                // imported by each trainer
constexpr double kSecondEpochShare = 0.25;

struct Options {
  std::string dir;
  std::string layout = "files";
  long processes = 1000;
  long long events = 100'000'000;
  int hosts = 2;
  int ranks = 8;
  long files = 0;  // 0: the layout's default
  double duration_s = 120;
  uint64_t seed = 1;
  int threads = 2;
  // --part=K/M: only the trainers of rank r with r % M == K and their
  // workers (a 1/M part of the job, as one rank of M gets its groups).
  int part = 0;
  int parts = 1;
  double flush_s = 0;  // 0: frames of kEventsPerFrame events, with clock snapshots
};

// splitmix64: small, fast, and the same everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

uint64_t Hash(uint64_t a, uint64_t b) { return Random(a * 0x100000001b3ull ^ b).Next(); }

int64_t RoundUp512(int64_t n) { return (n + 511) / 512 * 512; }

// --- The job's shape, the same for every process ---------------------------

struct Job {
  Options options;
  int trainers = 0;
  long loaders = 0;
  long samples_per_shard = 1;        // shards layout
  std::vector<long> loader_events;   // per global loader index
  std::vector<uint32_t> visit_order; // shard per visit, epochs concatenated
};

struct ProcessPlan {
  int host = 0;
  int pid = 0;
  int ppid = 0;
  int rank = 0;           // trainers and their workers
  int local_rank = 0;
  bool trainer = false;
  long loader = -1;       // global loader index
  int64_t start_ns = 0;
};

// Every process's identity: per host, each trainer followed by its workers.
std::vector<ProcessPlan> PlanProcesses(const Job& job) {
  std::vector<ProcessPlan> plans;
  std::vector<int> next_pid(job.options.hosts, 2000);
  long loader = 0;
  for (int r = 0; r < job.trainers; ++r) {
    int host = r * job.options.hosts / job.trainers;
    ProcessPlan t;
    t.host = host;
    t.pid = next_pid[host]++;
    t.ppid = 1999;  // the launcher (torchrun), not traced
    t.rank = r;
    t.local_rank = r - (host * job.trainers + job.options.hosts - 1) / job.options.hosts;
    t.trainer = true;
    t.start_ns = kT0 + r * 7 * kMs;
    plans.push_back(t);
    long mine = job.loaders / job.trainers + (r < job.loaders % job.trainers ? 1 : 0);
    for (long w = 0; w < mine; ++w) {
      ProcessPlan l = t;
      l.pid = next_pid[host]++;
      l.ppid = t.pid;
      l.trainer = false;
      l.loader = loader++;
      l.start_ns = t.start_ns + 3 * kS + static_cast<int64_t>(Hash(job.options.seed, l.loader) % (2 * kS));
      plans.push_back(l);
    }
  }
  return plans;
}

std::string ShardPath(uint32_t shard) {
  char name[96];
  std::snprintf(name, sizeof(name), "/datasets/webdataset/train/shard-%06u.tar", shard);
  return name;
}

// A sample's JPEG and JSON sizes: skewed like photos (most 40-200 KiB, a
// few up to 1 MiB) and short labels.
std::pair<int64_t, int64_t> SampleSizes(uint32_t shard, long sample) {
  uint64_t h = Hash(shard, static_cast<uint64_t>(sample));
  int64_t jpeg = 8'000 + static_cast<int64_t>(h % 160'000);
  if ((h >> 20) % 16 == 0) jpeg += static_cast<int64_t>((h >> 24) % 900'000);
  int64_t json = 200 + static_cast<int64_t>((h >> 40) % 700);
  return {jpeg, json};
}

int64_t ShardBytes(const Job& job, uint32_t shard) {
  int64_t bytes = 1024;  // the end-of-archive blocks
  for (long s = 0; s < job.samples_per_shard; ++s) {
    auto [jpeg, json] = SampleSizes(shard, s);
    bytes += 1024 + RoundUp512(jpeg) + RoundUp512(json);
  }
  return bytes;
}

std::string DatasetDir(const Job& job) {
  return job.options.layout == "files" ? "/datasets/imagenet/train" : "/datasets/webdataset/train";
}

std::string SamplePath(uint32_t sample) {
  char name[96];
  std::snprintf(name, sizeof(name), "/datasets/imagenet/train/n%08u/%08u.JPEG",
                1'440'000 + sample % 100, sample);
  return name;
}

// An ImageFolder sample's size: a few hundred KB, one in eight larger.
int64_t SampleFileBytes(uint32_t sample) {
  uint64_t h = Hash(0x5eed, sample);
  int64_t bytes = 60'000 + static_cast<int64_t>(h % 400'000);
  if ((h >> 32) % 8 == 0) bytes += static_cast<int64_t>((h >> 36) % 600'000);
  return bytes;
}

// --- Writing processes -----------------------------------------------------

// Adds the shim's periodic packets: a clock snapshot every second (unless
// --flush-s), a resource sample every 100 ms, with CPU use at `busy` of
// elapsed time.
void Periodic(const Options& o, SyntheticProcess* p, int64_t start, int64_t end, double busy,
              uint64_t rss_kib) {
  uint64_t run_queue = 0;
  for (int64_t t = start + 100 * kMs, k = 1; t <= end; t += 100 * kMs, ++k) {
    if (k % 10 == 0 && o.flush_s == 0) {
      iotap::Packet clock;
      clock.mutable_clock()->set_monotonic_ns(static_cast<uint64_t>(t));
      clock.mutable_clock()->set_realtime_ns(static_cast<uint64_t>(t));
      clock.mutable_clock()->set_uncertainty_ns(40);
      p->TimedPacket(clock, t);
    }
    iotap::Packet sample;
    iotap::ResourceSample* r = sample.mutable_resources();
    double cpu = busy * static_cast<double>(t - start);
    r->set_monotonic_ns(static_cast<uint64_t>(t));
    r->set_user_cpu_ns(static_cast<uint64_t>(cpu * 0.9));
    r->set_system_cpu_ns(static_cast<uint64_t>(cpu * 0.1));
    r->set_max_rss_kib(rss_kib);
    r->set_voluntary_context_switches(static_cast<uint64_t>(k * 40));
    r->set_involuntary_context_switches(static_cast<uint64_t>(k * 3));
    r->set_minor_faults(static_cast<uint64_t>(k * 200));
    run_queue += static_cast<uint64_t>(2 * kMs + (k * 7919) % (3 * kMs));
    r->set_run_queue_ns(run_queue);
    p->TimedPacket(sample, t);
  }
}

// The period of the frames (0: none, frames of kEventsPerFrame events).
int64_t FlushNs(const Options& o) { return static_cast<int64_t>(o.flush_s * 1e9); }

// Appends one call; returns its end.
int64_t Call(SyntheticProcess* p, iotap::Op op, int64_t at, int64_t duration, uint32_t file,
             int64_t offset, uint64_t requested, int64_t result, uint64_t aux = 0,
             uint32_t flags = 0, uint32_t error = 0) {
  Spec e;
  e.op = op;
  e.start_ns = at;
  e.end_ns = at + duration;
  e.file = file;
  e.offset = offset;
  e.requested = requested;
  e.result = result;
  e.aux = aux;
  e.flags = flags;
  e.error = error;
  p->Add(e);
  return e.end_ns;
}

// A read's time: latency plus transfer at about 1.5 GB/s, with jitter.
int64_t ReadNs(Random& rng, int64_t bytes) {
  return 4 * kUs + bytes * 2 / 3 + rng.Between(0, 6 * kUs);
}

SyntheticProcess NewProcess(const Job& job, const ProcessPlan& plan) {
  char host[32];
  std::snprintf(host, sizeof(host), "node%02d", plan.host);
  SyntheticProcess p(plan.pid, plan.ppid, "/usr/bin/python3.11",
                     {"python3", "train.py", "--data", DatasetDir(job)},
                     plan.start_ns,
                     plan.trainer ? ProcessHeader::ORIGIN_EXEC : ProcessHeader::ORIGIN_FORK,
                     host);
  ProcessHeader& h = p.header();
  h.set_rank(plan.rank);
  h.set_local_rank(plan.local_rank);
  h.set_world_size(job.trainers);
  h.set_cpus(128);
  h.set_flush_interval_ms(job.options.flush_s > 0 ? static_cast<uint32_t>(job.options.flush_s * 1000)
                                                  : 1000);
  h.set_buffer_events(4096);
  h.set_time_source(ProcessHeader::TIME_SOURCE_TSC);
  for (auto [name, value] : {std::pair<const char*, int>{"RANK", plan.rank},
                             {"LOCAL_RANK", plan.local_rank},
                             {"WORLD_SIZE", job.trainers}}) {
    iotap::EnvVar* v = h.add_env();
    v->set_name(name);
    v->set_value(std::to_string(value));
  }
  p.set_time_unit_ns(kTimeUnitNs);
  return p;
}

// The dataset's index, read whole by every process at start.
int64_t ReadIndex(const Job& job, SyntheticProcess* p, Random& rng, int64_t t) {
  uint32_t index = p->Path(DatasetDir(job) + "/index.json");
  constexpr int64_t kIndexBytes = 1'800'000;
  t = Call(p, iotap::OP_STAT, t, 9 * kUs, index, -1, 0, 0, kIndexBytes) + 5 * kUs;
  t = Call(p, iotap::OP_OPENAT, t, 14 * kUs, index, -1, 0, 5, kORdOnly) + 2 * kUs;
  t = Call(p, iotap::OP_FSTAT, t, 2 * kUs, index, -1, 0, 0, kIndexBytes) + kUs;
  t = Call(p, iotap::OP_READ, t, ReadNs(rng, kIndexBytes), index, 0, kIndexBytes + 1,
           kIndexBytes, 0, kTracked) + kUs;
  t = Call(p, iotap::OP_READ, t, 2 * kUs, index, kIndexBytes, 1, 0, 0, kTracked) + kUs;
  return Call(p, iotap::OP_CLOSE, t, 3 * kUs, index, -1, 0, 0) + 40 * kMs;
}

// Writes a trainer's file; returns its number of events.
long WriteTrainer(const Job& job, const ProcessPlan& plan, const std::string& path) {
  SyntheticProcess p = NewProcess(job, plan);
  Random rng(Hash(job.options.seed, 1'000'000 + plan.rank));
  const int64_t end = kT0 + static_cast<int64_t>(job.options.duration_s * kS);
  int64_t t = plan.start_ns + 20 * kMs;
  // Python's imports: a failed stat in the first sys.path entry, then the
  // module's .pyc (or extension .so) found and read.
  for (int m = 0; m < kModules; ++m) {
    bool extension = m % 10 == 9;
    std::string base = m < 120 ? "/usr/lib/python3.11/" : "/opt/venv/lib/python3.11/site-packages/";
    std::string name = "mod" + std::to_string(m);
    uint32_t missing = p.Path("/work/" + name + ".py");
    t = Call(&p, iotap::OP_STAT, t, 4 * kUs, missing, -1, 0, -1, 0, 0, 2 /* ENOENT */) + kUs;
    std::string found = extension ? base + name + ".cpython-311-x86_64-linux-gnu.so"
                                  : base + "__pycache__/" + name + ".cpython-311.pyc";
    uint32_t f = p.Path(found);
    int64_t size = extension ? 400'000 + rng.Between(0, 4'000'000) : rng.Between(2'000, 90'000);
    t = Call(&p, iotap::OP_STAT, t, 5 * kUs, f, -1, 0, 0, static_cast<uint64_t>(size)) + kUs;
    t = Call(&p, iotap::OP_OPENAT, t, 11 * kUs, f, -1, 0, 5, kORdOnly) + kUs;
    t = Call(&p, iotap::OP_FSTAT, t, 2 * kUs, f, -1, 0, 0, static_cast<uint64_t>(size)) + kUs;
    if (extension) {
      t = Call(&p, iotap::OP_READ, t, 6 * kUs, f, 0, 832, 832, 0, kTracked) + kUs;
      t = Call(&p, iotap::OP_MMAP, t, 9 * kUs, f, 0, static_cast<uint64_t>(size), 0, 5,
               iotap::FLAG_HAS_OFFSET) + kUs;
    } else {
      t = Call(&p, iotap::OP_READ, t, ReadNs(rng, size), f, 0, static_cast<uint64_t>(size + 1),
               size, 0, kTracked) + kUs;
      t = Call(&p, iotap::OP_READ, t, 2 * kUs, f, size, 1, 0, 0, kTracked) + kUs;
    }
    t = Call(&p, iotap::OP_CLOSE, t, 3 * kUs, f, -1, 0, 0) + rng.Between(100 * kUs, 900 * kUs);
  }
  t = ReadIndex(job, &p, rng, t);
  // Training steps, from when the workers are up.
  t = std::max(t, plan.start_ns + 5 * kS);
  for (int step = 0; t + kStepNs < end; ++step) {
    int64_t wait = rng.Between(2 * kMs, step % 50 == 0 ? 180 * kMs : 60 * kMs);
    p.Marker(iotap::OP_STEP_BEGIN, t, t, step);
    Spec w;
    w.op = iotap::OP_DATA_WAIT;
    w.start_ns = t + 20 * kUs;
    w.end_ns = w.start_ns + wait;
    w.aux = static_cast<uint64_t>(step);
    w.flags = iotap::FLAG_EXPLICIT_TIMES;
    p.Add(w);
    int64_t c = w.end_ns + 30 * kUs;
    for (uint64_t bytes : {uint64_t{256} * 3 * 224 * 224 * 4, uint64_t{256} * 8}) {
      c = Call(&p, iotap::OP_CUDA_MEMCPY_HTOD, c, 25 * kUs, 0, -1, bytes, 0, 0x7f3a1c000000,
               iotap::FLAG_CUDA_PINNED | iotap::FLAG_CUDA_ASYNC) + 5 * kUs;
    }
    if (plan.rank == 0 && step > 0 && step % kCheckpointEvery == 0) {
      uint32_t ckpt = p.Path("/checkpoints/run-17/step-" + std::to_string(step) + ".pt");
      c = Call(&p, iotap::OP_OPENAT, c, 30 * kUs, ckpt, -1, 0, 9, kOWrCreat) + kUs;
      for (int64_t k = 0; k < 16; ++k) {
        c = Call(&p, iotap::OP_WRITE, c, 2 * kMs + rng.Between(0, kMs), ckpt, k << 22, 4 << 20,
                 4 << 20, 0, kTracked) + 10 * kUs;
      }
      c = Call(&p, iotap::OP_FSYNC, c, 40 * kMs, ckpt, -1, 0, 0) + kUs;
      c = Call(&p, iotap::OP_CLOSE, c, 5 * kUs, ckpt, -1, 0, 0);
    }
    int64_t step_end = std::max(c + kMs, t + kStepNs + rng.Between(-5 * kMs, 5 * kMs));
    p.Marker(iotap::OP_STEP_END, step_end, step_end, step);
    t = step_end + 50 * kUs;
  }
  Periodic(job.options, &p, plan.start_ns, end, 1.0, 9'000'000);
  p.End(EndOfTrace::REASON_EXIT, 0, end);
  p.WriteTo(path, kEventsPerFrame, FlushNs(job.options));
  return static_cast<long>(p.event_count());
}

// Appends a worker's calls until it has written `budget` events.
class BudgetedProcess {
 public:
  BudgetedProcess(SyntheticProcess* p, long budget) : p_(p), budget_(budget) {}
  bool Room() const { return static_cast<long>(p_->event_count()) < budget_; }
  // As Call; does nothing once the budget is spent.
  bool Add(int64_t* t, int64_t pause, iotap::Op op, int64_t duration, uint32_t file,
           int64_t offset, uint64_t requested, int64_t result, uint64_t aux = 0,
           uint32_t flags = 0) {
    if (!Room()) return false;
    *t = Call(p_, op, *t, duration, file, offset, requested, result, aux, flags) + pause;
    return true;
  }

 private:
  SyntheticProcess* p_;
  long budget_;
};

void WriteLoader(const Job& job, const ProcessPlan& plan, const std::string& path) {
  SyntheticProcess p = NewProcess(job, plan);
  BudgetedProcess b(&p, job.loader_events[plan.loader]);
  Random rng(Hash(job.options.seed, static_cast<uint64_t>(plan.loader)));
  const int64_t end = kT0 + static_cast<int64_t>(job.options.duration_s * kS) - 50 * kMs;
  int64_t t = plan.start_ns + 2 * kMs;
  // What a forked worker touches before its first batch.
  uint32_t status = p.Path("/proc/self/status");
  uint32_t jpeg_lib = p.Path("/opt/venv/lib/python3.11/site-packages/pillow.libs/libjpeg.so.62");
  b.Add(&t, kUs, iotap::OP_OPENAT, 8 * kUs, status, -1, 0, 7, kORdOnly);
  b.Add(&t, kUs, iotap::OP_READ, 12 * kUs, status, 0, 4096, 1400, 0, kTracked);
  b.Add(&t, kUs, iotap::OP_CLOSE, 2 * kUs, status, -1, 0, 0);
  b.Add(&t, kUs, iotap::OP_OPENAT, 9 * kUs, jpeg_lib, -1, 0, 7, kORdOnly);
  b.Add(&t, kUs, iotap::OP_READ, 5 * kUs, jpeg_lib, 0, 832, 832, 0, kTracked);
  b.Add(&t, kUs, iotap::OP_MMAP, 8 * kUs, jpeg_lib, 0, 700'000, 0, 5, iotap::FLAG_HAS_OFFSET);
  b.Add(&t, kUs, iotap::OP_CLOSE, 2 * kUs, jpeg_lib, -1, 0, 0);
  if (b.Room()) t = ReadIndex(job, &p, rng, t);
  const bool files = job.options.layout == "files";
  // Each sample takes its share of the time left, so that the budget lasts
  // until the end of the run: 4 reads of a shard, or about 7 calls for a
  // sample file.
  const long samples = std::max(1L, (job.loader_events[plan.loader] -
                                     static_cast<long>(p.event_count())) / (files ? 7 : 4));
  const int64_t per_sample = std::max<int64_t>(200 * kUs, (end - t) / samples);
  for (long v = 0; b.Room(); ++v) {
    size_t slot = static_cast<size_t>(plan.loader + v * job.loaders) % job.visit_order.size();
    uint32_t item = job.visit_order[slot];
    uint32_t f = p.Path(files ? SamplePath(item) : ShardPath(item));
    int64_t size = files ? SampleFileBytes(item) : ShardBytes(job, item);
    int64_t sample_start = t;
    b.Add(&t, kUs, iotap::OP_OPENAT, rng.Between(20 * kUs, 90 * kUs), f, -1, 0, 11, kORdOnly);
    b.Add(&t, kUs, iotap::OP_FSTAT, 2 * kUs, f, -1, 0, 0, static_cast<uint64_t>(size));
    int64_t offset = 0;
    if (files) {
      // Pillow: the header, then pieces until a read finds the end.
      for (int64_t piece = 4096; b.Room();) {
        int64_t bytes = std::min(piece, size - offset);
        b.Add(&t, rng.Between(1 * kUs, 4 * kUs), iotap::OP_READ, ReadNs(rng, bytes), f, offset,
              static_cast<uint64_t>(piece), bytes, 0, kTracked);
        offset += bytes;
        if (bytes == 0) break;
        uint64_t pick = rng.Next() % 20;
        piece = pick < 12 ? 64 << 10 : pick < 17 ? 256 << 10 : 1 << 20;
      }
      b.Add(&t, 20 * kUs, iotap::OP_CLOSE, 4 * kUs, f, -1, 0, 0);
      // Decoding and augmenting the sample.
      t = std::max(t, sample_start + per_sample + rng.Between(-per_sample / 4, per_sample / 4));
      continue;
    }
    for (long s = 0; s < job.samples_per_shard && b.Room(); ++s) {
      auto [jpeg, json] = SampleSizes(item, s);
      sample_start = t;
      for (int64_t bytes : {int64_t{512}, RoundUp512(jpeg), int64_t{512}, RoundUp512(json)}) {
        b.Add(&t, rng.Between(1 * kUs, 4 * kUs), iotap::OP_READ, ReadNs(rng, bytes), f, offset,
              static_cast<uint64_t>(bytes), bytes, 0, kTracked);
        offset += bytes;
      }
      // Decoding and augmenting the sample.
      t = std::max(t, sample_start + per_sample + rng.Between(-per_sample / 4, per_sample / 4));
    }
    b.Add(&t, 20 * kUs, iotap::OP_CLOSE, 4 * kUs, f, -1, 0, 0);
  }
  int64_t last = std::max(t, end);
  Periodic(job.options, &p, plan.start_ns, last, 0.85, 2'400'000);
  p.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, last + kMs);
  p.WriteTo(path, kEventsPerFrame, FlushNs(job.options));
}

// The job this generator used to write (--layout=stress).
void WriteStressProcess(const Options& o, int index, long events, const std::string& path) {
  bool trainer = index == 0;
  SyntheticProcess proc(1000 + index, trainer ? 1 : 1000, "/usr/bin/python3",
                        {"python3", "train.py"}, kT0,
                        trainer ? ProcessHeader::ORIGIN_EXEC : ProcessHeader::ORIGIN_FORK);
  int64_t t = kT0 + 1000;
  if (trainer) {
    for (long s = 0; s < events / 3; ++s) {
      proc.Marker(iotap::OP_STEP_BEGIN, t, t, s);
      proc.Marker(iotap::OP_DATA_WAIT, t, t + 20'000, s);
      proc.Marker(iotap::OP_STEP_END, t + 100'000, t + 100'000, s);
      t += 100'000;
    }
  } else {
    long files = std::max(1L, events / 64);
    long made = 0;
    for (long f = 0; f < files && made < events; ++f) {
      uint32_t id = proc.Path("/data/shard-" + std::to_string(index) + "-" + std::to_string(f) +
                              ".bin");
      int64_t offset = 0;
      for (int k = 0; k < 64 && made < events; ++k, ++made) {
        uint64_t size = (k % 8 == 0) ? 131072 : 4096;
        int64_t d = 2'000 + (k * 37 % 500);
        proc.Read(iotap::OP_PREAD, t, t + d, id, offset, size);
        offset += static_cast<int64_t>(size);
        t += d + 300 + (k * 13 % 200);
      }
      if (f % 10 == 0) proc.Cpu(t, static_cast<uint64_t>((t - kT0) / 2));
    }
  }
  proc.End(EndOfTrace::REASON_EXIT, 0, t);
  proc.WriteTo(path);
}

// Runs `work(i)` for i in [0, n) on `threads` threads.
template <typename Work>
void Parallel(long n, int threads, Work work) {
  std::atomic<long> next{0};
  auto run = [&] {
    for (long i = next++; i < n; i = next++) work(i);
  };
  std::vector<std::thread> pool;
  for (int k = 1; k < threads; ++k) pool.emplace_back(run);
  run();
  for (std::thread& th : pool) th.join();
}

std::string FileName(const Options& o, const ProcessPlan& plan) {
  char name[64];
  std::snprintf(name, sizeof(name), "/node%02d.%d.iotap", plan.host, plan.pid);
  return o.dir + name;
}

int DataLoaderJob(const Options& o) {
  Job job;
  job.options = o;
  job.trainers = std::min<long>(o.ranks, o.processes);
  job.loaders = o.processes - job.trainers;
  std::vector<ProcessPlan> plans = PlanProcesses(job);
  // Trainers first: what they write decides what is left for the workers.
  std::vector<long> trainer_events(job.trainers, 0);
  std::vector<const ProcessPlan*> trainers;
  for (const ProcessPlan& plan : plans) {
    if (plan.trainer) trainers.push_back(&plan);
  }
  Parallel(static_cast<long>(trainers.size()), o.threads, [&](long i) {
    // Outside the part, a trainer is written only for its count of events,
    // under a name of its own, so that the parts of a job can be written
    // into one directory.
    bool outside = trainers[i]->rank % o.parts != o.part;
    std::string path = FileName(o, *trainers[i]) + (outside ? ".counted" : "");
    trainer_events[i] = WriteTrainer(job, *trainers[i], path);
    if (outside) std::filesystem::remove(path);
  });
  long long left = o.events;
  for (long e : trainer_events) left -= e;
  if (job.loaders == 0 || left < job.loaders * 20) {
    std::fprintf(stderr, "generate_traces: %lld events leave too few for %ld workers\n", o.events,
                 job.loaders);
    return job.loaders == 0 ? 0 : 1;
  }
  for (long l = 0; l < job.loaders; ++l) {
    job.loader_events.push_back(static_cast<long>(left / job.loaders) +
                                (l < left % job.loaders ? 1 : 0));
  }
  // Shards: samples per shard such that every shard is read once and a
  // quarter of them twice. Sample files: at least 6 calls per visit.
  long per_visit = 6;
  if (o.layout == "shards") {
    double visits = static_cast<double>(o.files) * (1 + kSecondEpochShare);
    job.samples_per_shard =
        std::max(1L, static_cast<long>((static_cast<double>(left) / visits - 3) / 4));
    per_visit = 3 + 4 * job.samples_per_shard;
  }
  long needed = job.loaders * (job.loader_events[0] / per_visit + 2);
  for (uint64_t epoch = 0; static_cast<long>(job.visit_order.size()) < needed; ++epoch) {
    std::vector<uint32_t> order(static_cast<size_t>(o.files));
    for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<uint32_t>(k);
    Random rng(Hash(o.seed, 77 + epoch));
    for (size_t k = order.size() - 1; k > 0; --k) std::swap(order[k], order[rng.Next() % (k + 1)]);
    job.visit_order.insert(job.visit_order.end(), order.begin(), order.end());
  }
  std::vector<const ProcessPlan*> loaders;
  for (const ProcessPlan& plan : plans) {
    if (!plan.trainer && plan.rank % o.parts == o.part) loaders.push_back(&plan);
  }
  Parallel(static_cast<long>(loaders.size()), o.threads,
           [&](long i) { WriteLoader(job, *loaders[i], FileName(o, *loaders[i])); });
  if (o.layout == "files") {
    std::printf("%ld processes (%d trainers on %d hosts, %ld workers), %lld events, %ld sample "
                "files, %.0f s\n",
                o.processes, job.trainers, o.hosts, job.loaders, o.events, o.files, o.duration_s);
  } else {
    std::printf("%ld processes (%d trainers on %d hosts, %ld workers), %lld events, %ld shards "
                "of %ld samples, %.0f s\n",
                o.processes, job.trainers, o.hosts, job.loaders, o.events, o.files,
                job.samples_per_shard, o.duration_s);
  }
  return 0;
}

int Stress(const Options& o) {
  long per_process = static_cast<long>(o.events / o.processes);
  Parallel(o.processes, o.threads, [&](long i) {
    WriteStressProcess(o, static_cast<int>(i), per_process,
                       o.dir + "/p" + std::to_string(i) + ".iotap");
  });
  std::printf("%ld processes, %ld events each (stress layout)\n", o.processes, per_process);
  return 0;
}

bool ParseFlag(std::string_view arg, Options* o) {
  size_t eq = arg.find('=');
  if (!arg.starts_with("--") || eq == std::string_view::npos) return false;
  std::string_view name = arg.substr(2, eq - 2);
  std::string value(arg.substr(eq + 1));
  char* rest = nullptr;
  if (name == "layout") {
    o->layout = value;
    return value == "files" || value == "shards" || value == "stress";
  }
  if (name == "part") {
    size_t slash = value.find('/');
    if (slash == std::string::npos) return false;
    o->part = std::atoi(value.substr(0, slash).c_str());
    o->parts = std::atoi(value.substr(slash + 1).c_str());
    return o->parts >= 1 && o->part >= 0 && o->part < o->parts;
  }
  double number = std::strtod(value.c_str(), &rest);
  if (rest == value.c_str() || *rest != '\0' || number < 0) return false;
  if (name == "processes") {
    o->processes = static_cast<long>(number);
  } else if (name == "events") {
    o->events = static_cast<long long>(number);
  } else if (name == "hosts") {
    o->hosts = static_cast<int>(number);
  } else if (name == "ranks") {
    o->ranks = static_cast<int>(number);
  } else if (name == "files") {
    o->files = static_cast<long>(number);
  } else if (name == "duration-s") {
    o->duration_s = number;
  } else if (name == "seed") {
    o->seed = static_cast<uint64_t>(number);
  } else if (name == "threads") {
    o->threads = static_cast<int>(number);
  } else if (name == "flush-s") {
    o->flush_s = number;
  } else {
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> positional;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--")) {
      ok = ok && ParseFlag(a, &o);
    } else {
      positional.emplace_back(a);
    }
  }
  if (ok && positional.size() == 3) {  // DIR PROCESSES EVENTS_PER_PROCESS
    o.layout = "stress";
    o.processes = std::atol(positional[1].c_str());
    o.events = std::atoll(positional[2].c_str()) * o.processes;
  } else if (positional.size() != 1) {
    ok = false;
  }
  if (!ok || o.processes < 1 || o.events < 1 || o.hosts < 1 || o.ranks < 1 || o.files < 0 ||
      o.duration_s < 10 || o.threads < 1) {
    std::fprintf(stderr,
                 "usage: generate_traces DIR [--processes=1000] [--events=100000000] "
                 "[--hosts=2] [--ranks=8]\n"
                 "         [--files=20000] [--duration-s=120] [--layout=shards|stress] "
                 "[--seed=1] [--threads=2] [--part=K/M] [--flush-s=S]\n"
                 "       generate_traces DIR PROCESSES EVENTS_PER_PROCESS   (stress layout)\n");
    return 1;
  }
  o.dir = positional[0];
  o.hosts = std::min(o.hosts, o.ranks);
  if (o.files == 0) o.files = o.layout == "shards" ? 20'000 : 4'000;
  std::filesystem::create_directories(o.dir);
  return o.layout == "stress" ? Stress(o) : DataLoaderJob(o);
}
