// A synchronous training job on several hosts whose clocks disagree by known
// offsets and drifts, for the tests of clock correction: every time a
// process writes is its host's clock reading of the true moment.
//
//   SkewedJob job;
//   job.hosts = {{0, 0}, {50e6, 20e-6}};  // node1: 50 ms ahead, gaining 20 ppm
//   job.duration_ns = 3600 * kSecond;
//   WriteSkewedJob(dir, job);
//   int64_t node1_reads = HostClockReading(job, 1, true_ns);
//
// Each host runs `ranks_per_host` trainers (rank = host * ranks_per_host +
// i, pids 1000, 2000, ... on every host) with explicit step markers. All
// ranks end step k at the same true moment, each with its own jitter: normal
// noise, and now and then a late rank (descheduled, collecting garbage) much
// later. Each step starts where the rank's previous one ended and begins
// with a data wait, during which the rank's one loader (pid + 1, forked)
// reads a batch. The planted step on the planted host waits longer, and its
// loader's read takes that long. Output depends only on the job.

#ifndef IOTAP_ANALYZER_TESTING_SKEWED_HOSTS_H_
#define IOTAP_ANALYZER_TESTING_SKEWED_HOSTS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace iotap::analyzer {

inline constexpr int64_t kSecond = 1'000'000'000;

// A host's wall clock: reads true time + offset_ns + drift * (true time - job start).
struct HostClockTruth {
  double offset_ns = 0;
  double drift = 0;  // 1e-6: 1 ppm
};

struct SkewedJob {
  std::vector<HostClockTruth> hosts;  // node0, node1, ...
  int ranks_per_host = 1;
  int64_t start_ns = 1'700'000'000'000'000'000;  // true time
  int64_t duration_ns = 60 * kSecond;
  int64_t step_ns = 1 * kSecond;
  int64_t data_wait_ns = 2'000'000;
  double jitter_ns = 250'000;    // standard deviation of each rank's step end
  double late_share = 0.03;      // share of step ends a rank is late for
  double late_mean_ns = 10'000'000;  // how late, on average (exponential)
  int planted_host = -1;         // -1: none
  int64_t planted_step = 0;
  int64_t planted_wait_ns = 8'000'000;  // the planted data wait, from 1 ms into the step
  uint64_t seed = 1;
  // Ranks that run on their own (no collective ends their steps): each step
  // lasts step_ns, jittered, from the rank's own last step end.
  bool independent = false;
};

// What host `host`'s clock reads at `true_ns`.
int64_t HostClockReading(const SkewedJob& job, int host, int64_t true_ns);

// The true moment all ranks end step `step`.
int64_t TrueStepEnd(const SkewedJob& job, int64_t step);

// Writes the job's trace files into `dir` (HOST.trainerR.iotap,
// HOST.loaderR.iotap).
void WriteSkewedJob(const std::string& dir, const SkewedJob& job);

// Four hosts of two ranks, one step a second for an hour, with offsets of
// -50 to +50 ms and drifts of -50 to +50 ppm.
SkewedJob FourHostsOfTwoRanksOverAnHour();

// Writes the job into a new folder `name` of the test's temporary directory,
// and returns the folder.
std::string SkewedJobDirectory(const std::string& name, const SkewedJob& job);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_TESTING_SKEWED_HOSTS_H_
