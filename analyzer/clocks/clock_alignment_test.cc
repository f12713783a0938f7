// Hosts whose clocks disagree by known offsets and drifts, with jitter on the
// step ends (analyzer/testing/skewed_hosts.h): the fits against the truth.
// The report's figures with and without the correction are in
// analysis/host_clocks_test.cc.

#include "analyzer/clocks/clock_alignment.h"

#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/skewed_hosts.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

RunCatalog Catalog(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir);
  EXPECT_TRUE(files.ok()) << files.status();
  return CatalogTraceFiles(files.ok() ? *files : std::vector<std::string>{});
}

// Every host's fitted correction, at every minute of the run, against the
// truth: the host's reading of a moment, corrected, is node0's reading of it.
void ExpectWithin50Us(const SkewedJob& job, const RunClocks& clocks) {
  ASSERT_EQ(clocks.reference_host, "node0");
  ASSERT_EQ(clocks.hosts.size(), job.hosts.size() - 1);
  for (size_t h = 1; h < job.hosts.size(); ++h) {
    const HostClockFit& fit = clocks.hosts[h - 1];
    ASSERT_EQ(fit.host, absl::StrCat("node", h));
    ASSERT_TRUE(fit.corrected) << fit.why_not;
    EXPECT_TRUE(fit.fit.drift_fitted);
    EXPECT_LT(fit.fit.uncertainty_ns, 50 * kUs);
    double worst = 0;
    for (int64_t t = job.start_ns; t <= job.start_ns + job.duration_ns; t += 60 * kSecond) {
      const int64_t error = clocks.corrections.at(fit.host).Apply(HostClockReading(job, h, t)) -
                            HostClockReading(job, 0, t);
      worst = std::max(worst, std::fabs(static_cast<double>(error)));
    }
    EXPECT_LE(worst, 50 * kUs) << fit.host;
    EXPECT_LE(worst, fit.fit.uncertainty_ns) << fit.host;
  }
}

TEST(ClockAlignmentTest, TwoHostsOverAnHourWithin50Us) {
  SkewedJob job;
  job.hosts = {{3e6, -20e-6}, {50e6, 50e-6}};  // node1: 47 ms ahead, 70 ppm faster
  job.duration_ns = 3600 * kSecond;
  const std::string dir = SkewedJobDirectory("two-hosts-hour", job);
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 2);
  EXPECT_EQ(clocks.source, "the step ends of iotap markers");
  ExpectWithin50Us(job, clocks);
  EXPECT_EQ(clocks.hosts[0].fit.anchors, 3599);
  EXPECT_EQ(clocks.hosts[0].ranks, std::vector<int>{1});
}

TEST(ClockAlignmentTest, FourHostsOfTwoRanksOverAnHourWithin50Us) {
  const SkewedJob job = FourHostsOfTwoRanksOverAnHour();
  const std::string dir = SkewedJobDirectory("four-hosts-hour", job);
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 2);
  ExpectWithin50Us(job, clocks);
  EXPECT_EQ(clocks.hosts[2].ranks, (std::vector<int>{6, 7}));
}

TEST(ClockAlignmentTest, ClocksThatAgreeAreLeftAlone) {
  SkewedJob job;
  job.hosts = {{0, 0}, {20e3, 0}};  // 20 us apart, step ends jitter by 250 us
  job.duration_ns = 30 * kSecond;
  const std::string dir = SkewedJobDirectory("agree", job);
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 1);
  ASSERT_EQ(clocks.hosts.size(), 1u);
  EXPECT_FALSE(clocks.hosts[0].corrected);
  EXPECT_TRUE(clocks.corrections.empty());
  EXPECT_NE(clocks.hosts[0].why_not.find("within the fit's uncertainty"), std::string::npos)
      << clocks.hosts[0].why_not;
}

// Ranks that do not wait for each other (the steps of independent jobs, or
// of a generated run): their step ends drift apart step by step, and no
// offset fits them. Nothing is corrected, and the report says why.
TEST(ClockAlignmentTest, StepsThatDoNotEndTogetherCorrectNothing) {
  SkewedJob job;
  job.hosts = {{0, 0}, {0, 0}};
  job.independent = true;
  job.step_ns = 250 * kMs;
  job.jitter_ns = 3 * kMs;
  job.duration_ns = 40 * kSecond;  // 159 steps
  const std::string dir = SkewedJobDirectory("independent", job);
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 1);
  ASSERT_EQ(clocks.hosts.size(), 1u);
  EXPECT_GE(clocks.hosts[0].fit.anchors, 4 * kWanderLag);
  EXPECT_GT(clocks.hosts[0].fit.wander, kMaxClockWander);
  EXPECT_FALSE(clocks.hosts[0].corrected);
  EXPECT_TRUE(clocks.corrections.empty());
  EXPECT_NE(clocks.hosts[0].why_not.find("its step ends do not keep pace with node0's"),
            std::string::npos)
      << clocks.hosts[0].why_not;
  // The same steps ending together are anchors again.
  job.independent = false;
  job.hosts = {{30e6, 0}, {0, 0}};
  RunClocks synchronous = FitRunClocks(Catalog(SkewedJobDirectory("together", job)), {}, 1);
  ASSERT_EQ(synchronous.hosts.size(), 1u);
  EXPECT_LT(synchronous.hosts[0].fit.wander, kMaxClockWander);
  EXPECT_TRUE(synchronous.hosts[0].corrected) << synchronous.hosts[0].why_not;
}

// Profiler traces of two ranks whose step ends scatter by milliseconds (a
// rank busy after the all-reduce) but whose two collectives per step end
// together within 10 us: the collectives carry the fit to 50 us.
TEST(ClockAlignmentTest, CollectiveEndsAreAnchorsBesideTheSteps) {
  SkewedJob job;
  job.hosts = {{0, 0}, {40e6, 30e-6}};
  job.duration_ns = 600 * kSecond;
  const std::string dir = SkewedJobDirectory("collectives", job);
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> late(0, 4e6), close(-10e3, 10e3);
  std::vector<StepLog> logs(2);
  for (int rank = 0; rank < 2; ++rank) {
    StepLog& log = logs[rank];
    log.source = StepSource::kProfiler;
    log.path = absl::StrCat("rank", rank, ".pt.trace.json");
    for (int64_t step = 0; step < 590; ++step) {
      const int64_t end = TrueStepEnd(job, step);
      StepSpan span;
      span.step = step;
      span.rank = rank;
      span.start_ns = HostClockReading(job, rank, end - 900 * kMs);
      span.end_ns = HostClockReading(job, rank, end + std::llround(late(random)));
      log.spans.push_back(span);
      for (int k = 0; k < 2; ++k) {
        const int64_t at = end - (300 - 200 * k) * kMs + std::llround(close(random));
        log.collectives.push_back({step, k, rank, HostClockReading(job, rank, at)});
      }
    }
  }
  RunClocks clocks = FitRunClocks(Catalog(dir), logs, 1);
  ASSERT_EQ(clocks.hosts.size(), 1u);
  const HostClockFit& fit = clocks.hosts[0];
  EXPECT_EQ(clocks.source, "the step and collective ends in rank0.pt.trace.json, rank1.pt.trace.json");
  EXPECT_EQ(fit.steps, 590);
  EXPECT_EQ(fit.collectives, 2 * 590);
  ASSERT_TRUE(fit.corrected) << fit.why_not;
  for (int64_t t = job.start_ns; t <= job.start_ns + job.duration_ns; t += 60 * kSecond) {
    const int64_t error =
        clocks.corrections.at("node1").Apply(HostClockReading(job, 1, t)) - HostClockReading(job, 0, t);
    EXPECT_LE(std::llabs(error), 50 * kUs) << (t - job.start_ns) / kSecond << " s";
  }
}

TEST(ClockAlignmentTest, OneHostReadsNothing) {
  SkewedJob job;
  job.hosts = {{5e6, 0}};
  const std::string dir = SkewedJobDirectory("one-host", job);
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 1);
  EXPECT_TRUE(clocks.hosts.empty());
  EXPECT_EQ(clocks.reference_host, "");
}

}  // namespace
}  // namespace iotap::analyzer
