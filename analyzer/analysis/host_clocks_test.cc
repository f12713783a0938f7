// The report's clocks of hosts that disagree by known offsets and drifts
// (analyzer/testing/skewed_hosts.h): the figures of each host's fit
// (host_clocks.cc), the steps, waits and notes with and without the
// correction. The fits themselves: clocks/clock_alignment_test.cc.

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/skewed_hosts.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kMs = 1'000'000;

report::Report Analyze(const std::string& dir, bool correct = true,
                       std::vector<std::string> step_logs = {}) {
  AnalysisOptions options;
  options.correct_clocks = correct;
  options.step_logs = std::move(step_logs);
  absl::StatusOr<report::Report> r = AnalyzeRun(dir, options);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : report::Report();
}

// Four hosts of two ranks over an hour: the report's figures of each host's
// clock, at the run's start (node0's, corrected).
TEST(HostClocksTest, FourHostsOfTwoRanksOverAnHour) {
  const SkewedJob job = FourHostsOfTwoRanksOverAnHour();
  const std::string dir = SkewedJobDirectory("four-hosts-hour", job);
  report::Report r = Analyze(dir);
  ASSERT_EQ(r.run().host_clocks_size(), 3);
  for (int h = 1; h < 4; ++h) {
    const report::HostClock& c = r.run().host_clocks(h - 1);
    const int64_t start = job.start_ns;
    EXPECT_EQ(c.host(), absl::StrCat("node", h));
    EXPECT_EQ(c.reference_host(), "node0");
    EXPECT_TRUE(c.corrected());
    EXPECT_EQ(c.not_corrected(), "");
    EXPECT_EQ(c.steps(), 3599);
    EXPECT_NEAR(c.offset_s(),
                static_cast<double>(HostClockReading(job, h, start) - HostClockReading(job, 0, start)) / 1e9,
                50e-6);
    EXPECT_NEAR(c.drift_ppm(), (job.hosts[h].drift - job.hosts[0].drift) * 1e6, 0.05);
    EXPECT_LT(c.uncertainty_s(), 50e-6);
    EXPECT_GT(c.spread_s(), 100e-6);  // the jitter of the step ends
  }
}

// Without jitter the anchors lie on the line: every step of every rank
// lines up with node0's to the nanosecond.
TEST(HostClocksTest, StepsWithoutJitterLineUpExactly) {
  SkewedJob job;
  job.hosts = {{0, 0}, {-43'210'987, 42e-6}};
  job.jitter_ns = 0;
  job.late_share = 0;
  const std::string dir = SkewedJobDirectory("exact", job);
  report::Report r = Analyze(dir);
  ASSERT_EQ(r.run().host_clocks_size(), 1);
  EXPECT_TRUE(r.run().host_clocks(0).corrected());
  EXPECT_NEAR(r.run().host_clocks(0).drift_ppm(), 42, 1e-6);
  EXPECT_LT(r.run().host_clocks(0).uncertainty_s(), 1e-9);
  std::map<std::pair<int, double>, const report::Step*> steps;
  for (const report::Step& s : r.steps()) steps[std::make_pair(s.rank(), s.step())] = &s;
  ASSERT_EQ(steps.size(), 2u * 59);
  for (int k = 0; k < 59; ++k) {
    const report::Step* zero = steps[std::make_pair(0, static_cast<double>(k))];
    const report::Step* one = steps[std::make_pair(1, static_cast<double>(k))];
    ASSERT_TRUE(zero != nullptr && one != nullptr) << k;
    EXPECT_NEAR(one->end_s(), zero->end_s(), 1.5e-9) << k;
    EXPECT_NEAR(one->start_s(), zero->start_s(), 1.5e-9) << k;
  }
  // The run starts when node0's processes did, node1's being 43 ms earlier
  // on its own clock only.
  EXPECT_EQ(static_cast<int64_t>(r.run().start_unix_s()), job.start_ns / kSecond);
  for (const report::Process& p : r.processes()) {
    EXPECT_NEAR(p.start_s(), p.role() == report::TRAINER ? 0 : 0.005, 1e-9) << p.host();
  }
}

// The span of `kind` of `rank` and `step` in the report's timeline.
const report::Span* SpanOf(const report::Report& r, const std::string& kind, int rank,
                           double step) {
  for (const report::Span& s : r.timeline().spans()) {
    if (s.kind() == kind && s.rank() == rank && s.step() == step) return &s;
  }
  return nullptr;
}

// The step of `rank` whose span holds [start_s, end_s], or -1.
double StepHolding(const report::Report& r, int rank, double start_s, double end_s) {
  for (const report::Span& s : r.timeline().spans()) {
    if (s.kind() == "step" && s.rank() == rank && s.start_s() <= start_s && end_s <= s.end_s()) {
      return s.step();
    }
  }
  return -1;
}

// Steps of 20 ms, node1 50 ms ahead: a long data wait of rank 1 in step 1500
// shows in rank 0's step 1500 once the clocks are corrected, and 2.5 steps
// later without.
TEST(HostClocksTest, APlantedDataWaitLinesUpWithItsStep) {
  SkewedJob job;
  job.hosts = {{0, 0}, {50e6, 30e-6}};
  job.step_ns = 20 * kMs;
  job.planted_host = 1;
  job.planted_step = 1500;
  job.planted_wait_ns = 6 * kMs;
  const std::string dir = SkewedJobDirectory("planted", job);
  for (bool correct : {true, false}) {
    SCOPED_TRACE(correct ? "corrected" : "not corrected");
    report::Report r = Analyze(dir, correct);
    const report::Span* wait = SpanOf(r, "data_wait", 1, 1500);
    ASSERT_NE(wait, nullptr);
    EXPECT_NEAR(wait->end_s() - wait->start_s(), 0.006, 1e-6);
    EXPECT_EQ(StepHolding(r, 0, wait->start_s(), wait->end_s()), correct ? 1500 : 1502);
    // The loader's read (5.8 ms, counted in slots of 1 us) is where the
    // wait is: its own trainer group saw it in step 1500 either way, its
    // events' times corrected each with the drift at its moment.
    for (const report::Step& s : r.steps()) {
      if (s.rank() == 1 && s.step() == 1500) {
        EXPECT_NEAR(s.fetch_s(), 0.0058, 2e-6);
      }
    }
    ASSERT_EQ(r.run().host_clocks_size(), 1);
    const report::HostClock& c = r.run().host_clocks(0);
    EXPECT_EQ(c.corrected(), correct);
    EXPECT_EQ(c.not_corrected(), correct ? "" : "turned off (--no-clock-correction)");
    EXPECT_NEAR(c.offset_s(), 0.050, 50e-6);
    int warnings = 0;
    for (const report::Note& n : r.notes()) {
      if (n.message().rfind("the clock of node1 ", 0) != 0) continue;
      ++warnings;
      EXPECT_EQ(n.level(), report::Note::WARNING);
      EXPECT_NE(n.message().find(correct ? "its times are put on node0's clock"
                                         : "not corrected: turned off (--no-clock-correction)"),
                std::string::npos)
          << n.message();
    }
    EXPECT_EQ(warnings, 1);
  }
}

// Each rank's JSON-lines step log, on its host's clock: the anchors, and the
// steps the report uses, corrected by the host of the rank that wrote them.
TEST(HostClocksTest, StepLogsOfRanksAreAnchorsToo) {
  SkewedJob job;
  job.hosts = {{0, 0}, {-20e6, 0}};
  job.jitter_ns = 0;
  job.late_share = 0;
  const std::string dir = SkewedJobDirectory("step-logs", job);
  std::vector<std::string> logs;
  for (int rank = 0; rank < 2; ++rank) {
    std::string lines;
    for (int k = 0; k < 59; ++k) {
      // 1 ms after the markers' end: a log that says something else.
      auto on = [&](int64_t t) {
        return absl::StrFormat("%d.%09d", HostClockReading(job, rank, t) / kSecond,
                               HostClockReading(job, rank, t) % kSecond);
      };
      absl::StrAppend(&lines, "{\"step\": ", k, ", \"rank\": ", rank, ", \"start\": ",
                      on(TrueStepEnd(job, k) - job.step_ns + kMs),
                      ", \"end\": ", on(TrueStepEnd(job, k) + kMs), "}\n");
    }
    logs.push_back(testing::WriteTemp(absl::StrCat("rank", rank, ".jsonl"), lines));
  }
  report::Report r = Analyze(dir, true, logs);
  ASSERT_EQ(r.run().host_clocks_size(), 1);
  const report::HostClock& c = r.run().host_clocks(0);
  EXPECT_TRUE(c.corrected());
  EXPECT_EQ(c.source(), absl::StrCat("the step ends in ", logs[0], ", ", logs[1]));
  EXPECT_NEAR(c.offset_s(), -0.020, 1e-9);
  int steps = 0;
  for (const report::Step& s : r.steps()) {
    EXPECT_NEAR(s.end_s(), 0.05 + 0.001 + (s.step() + 1), 1e-9) << s.rank() << " " << s.step();
    ++steps;
  }
  EXPECT_EQ(steps, 2 * 59);
}

TEST(HostClocksTest, TooFewStepsCorrectNothingAndSaySo) {
  SkewedJob job;
  job.hosts = {{0, 0}, {30e6, 0}};
  job.duration_ns = 4 * kSecond + 100 * kMs;  // 4 steps
  const std::string dir = SkewedJobDirectory("few-steps", job);
  report::Report r = Analyze(dir);
  ASSERT_EQ(r.run().host_clocks_size(), 1);
  const report::HostClock& c = r.run().host_clocks(0);
  EXPECT_FALSE(c.corrected());
  EXPECT_EQ(c.steps(), 4);
  EXPECT_EQ(c.not_corrected(), "only 4 steps in common with node0's ranks (5 needed)");
  EXPECT_EQ(c.offset_s(), 0);
  int said = 0;
  for (const report::Note& n : r.notes()) {
    said += n.message() ==
            "the clock of node1 is not corrected: only 4 steps in common with node0's ranks (5 "
            "needed); its times are as its clock gave them";
  }
  EXPECT_EQ(said, 1);
}

TEST(HostClocksTest, OneHostSaysNothingOfClocks) {
  SkewedJob job;
  job.hosts = {{5e6, 0}};
  const std::string dir = SkewedJobDirectory("one-host", job);
  report::Report r = Analyze(dir);
  EXPECT_EQ(r.run().host_clocks_size(), 0);
  for (const report::Note& n : r.notes()) EXPECT_EQ(n.message().find("clock"), std::string::npos);
}

}  // namespace
}  // namespace iotap::analyzer
