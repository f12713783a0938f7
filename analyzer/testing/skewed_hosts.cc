#include "analyzer/testing/skewed_hosts.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "absl/strings/str_cat.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"

namespace iotap::analyzer {

namespace {

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;
// The first step ends this long after the job starts plus one step.
constexpr int64_t kWarmUpNs = 50 * kMs;

}  // namespace

int64_t HostClockReading(const SkewedJob& job, int host, int64_t true_ns) {
  const HostClockTruth& c = job.hosts[host];
  return true_ns + std::llround(c.offset_ns + c.drift * static_cast<double>(true_ns - job.start_ns));
}

int64_t TrueStepEnd(const SkewedJob& job, int64_t step) {
  return job.start_ns + kWarmUpNs + (step + 1) * job.step_ns;
}

void WriteSkewedJob(const std::string& dir, const SkewedJob& job) {
  std::mt19937_64 random(job.seed);
  std::normal_distribution<double> noise(0, job.jitter_ns);
  std::exponential_distribution<double> lateness(1 / job.late_mean_ns);
  std::uniform_real_distribution<double> coin(0, 1);
  const int64_t end_ns = job.start_ns + job.duration_ns;
  const int64_t steps = (job.duration_ns - 2 * kWarmUpNs) / job.step_ns;
  const int world = static_cast<int>(job.hosts.size()) * job.ranks_per_host;
  for (int h = 0; h < static_cast<int>(job.hosts.size()); ++h) {
    const std::string host = absl::StrCat("node", h);
    auto on = [&](int64_t true_ns) { return HostClockReading(job, h, true_ns); };
    for (int i = 0; i < job.ranks_per_host; ++i) {
      const int rank = h * job.ranks_per_host + i;
      const int pid = 1000 * (i + 1);
      SyntheticProcess trainer(pid, 1, "/usr/bin/python3", {"python3", "train.py"},
                               on(job.start_ns), ProcessHeader::ORIGIN_EXEC, host);
      SyntheticProcess loader(pid + 1, pid, "/usr/bin/python3", {"python3", "train.py"},
                              on(job.start_ns + 5 * kMs), ProcessHeader::ORIGIN_FORK, host);
      for (SyntheticProcess* p : {&trainer, &loader}) {
        p->header().set_rank(rank);
        p->header().set_world_size(world);
      }
      const uint32_t file = loader.Path(absl::StrCat("/data/shard", rank, ".bin"));
      int64_t begin = job.start_ns + kWarmUpNs;
      for (int64_t k = 0; k < steps; ++k) {
        const bool planted = h == job.planted_host && k == job.planted_step;
        const int64_t wait_start = planted ? begin + kMs : begin;
        const int64_t wait_end = wait_start + (planted ? job.planted_wait_ns : job.data_wait_ns);
        double late = coin(random) < job.late_share ? lateness(random) : 0;
        int64_t end = (job.independent ? begin + job.step_ns : TrueStepEnd(job, k)) +
                      std::llround(noise(random) + late);
        end = std::max(end, wait_end + 100 * kUs);
        trainer.Marker(OP_STEP_BEGIN, on(begin), on(begin), k);
        trainer.Marker(OP_DATA_WAIT, on(wait_start), on(wait_end), k);
        trainer.Marker(OP_STEP_END, on(end), on(end), k);
        loader.Read(OP_PREAD, on(wait_start + 100 * kUs), on(wait_end - 100 * kUs), file,
                    k * 65536, 65536);
        begin = end;
      }
      trainer.End(EndOfTrace::REASON_EXIT, 0, on(end_ns));
      loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, on(end_ns));
      trainer.WriteTo(absl::StrCat(dir, "/", host, ".trainer", rank, ".iotap"));
      loader.WriteTo(absl::StrCat(dir, "/", host, ".loader", rank, ".iotap"));
    }
  }
}

SkewedJob FourHostsOfTwoRanksOverAnHour() {
  SkewedJob job;
  job.hosts = {{-50e6, -50e-6}, {50e6, 50e-6}, {-12.5e6, 10e-6}, {31e6, -35e-6}};
  job.ranks_per_host = 2;
  job.duration_ns = 3600 * kSecond;
  job.seed = 2;
  return job;
}

std::string SkewedJobDirectory(const std::string& name, const SkewedJob& job) {
  const std::string dir = testing::TempDirectory() + "/" + name;
  std::filesystem::create_directories(dir);
  WriteSkewedJob(dir, job);
  return dir;
}

}  // namespace iotap::analyzer
