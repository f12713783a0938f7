// Time exchanges of `iotap run --clock-sync`: the file, the anchors picked
// from it, and host clocks fitted from exchanges where the steps say nothing
// (the instances that make them: clock_exchanger_test.cc).

#include "analyzer/clocks/clock_exchanges.h"

#include <cmath>
#include <fstream>
#include <random>

#include "absl/strings/str_cat.h"
#include "analyzer/clocks/clock_alignment.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/skewed_hosts.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::FreshDirectory;

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;

std::string Header(const std::string& host, const std::string& reference) {
  return absl::StrCat(kClockExchangeMagic, "\nhost ", host, "\nreference ", reference, "\n");
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ClockExchangesTest, FileKeepsItsCompleteLines) {
  FreshDirectory dir("exchange-file");
  const std::string path = dir.Sub("a.iotap-clock");
  ClockExchange x{100, 50, 60, 130};
  Write(path, Header("node1", "node0") + ClockExchangeLine(x) + "x 1 2 three 4\n" +
                  "something else\n" + ClockExchangeLine({200, 150, 160, 230}) + "x 300 25");
  absl::StatusOr<ClockExchangeFile> f = ReadClockExchanges(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->host, "node1");
  EXPECT_EQ(f->reference, "node0");
  ASSERT_EQ(f->exchanges.size(), 2u);  // the last line was cut short
  EXPECT_EQ(f->exchanges[1].t3, 160);
  EXPECT_EQ(f->bad_lines, 2);
  // Asked at 100, answered at 50-60 on the other clock, back at 130: 60
  // ahead, with a round trip of 20.
  EXPECT_DOUBLE_EQ(x.Offset(), 60);
  EXPECT_EQ(x.Delay(), 20);
}

TEST(ClockExchangesTest, BadFilesAreNamed) {
  FreshDirectory dir("exchange-bad-files");
  Write(dir.Sub("a"), "iotap-clock 2\nhost x\n");
  Write(dir.Sub("b"), std::string(kClockExchangeMagic) + "\nhost x\n");
  for (const char* name : {"a", "b", "missing"}) {
    absl::StatusOr<ClockExchangeFile> f = ReadClockExchanges(dir.Sub(name));
    ASSERT_FALSE(f.ok()) << name;
    EXPECT_NE(f.status().message().find(dir.Sub(name)), std::string::npos) << f.status();
  }
  EXPECT_NE(ReadClockExchanges(dir.Sub("b")).status().message().find("names no reference host"),
            std::string::npos);
}

// A burst of exchanges over a link with 40 us each way, the host 5 ms
// ahead; some answers queued on the way back (one-sided delays). Only the
// fast ones are anchors, and they give the offset exactly.
TEST(ClockExchangesTest, SlowExchangesOfABurstAreLeftOut) {
  constexpr int64_t kOffset = 5 * kMs, kWay = 40 * kUs;
  std::vector<ClockExchange> xs;
  for (int burst = 0; burst < 3; ++burst) {
    for (int i = 0; i < 8; ++i) {
      const int64_t t = 1'000'000 * kMs + burst * 1000 * kMs + i * kMs;  // true time
      const int64_t back = i % 3 == 0 ? 900 * kUs : kWay;                // queued answers
      xs.push_back({t + kOffset, t + kWay, t + kWay + 10 * kUs, t + kWay + 10 * kUs + back + kOffset});
    }
  }
  ExchangeAnchors a = PickExchangeAnchors(xs);
  EXPECT_EQ(a.exchanges, 24);
  EXPECT_EQ(a.bursts, 3);
  ASSERT_EQ(a.anchors.size(), 15u);  // 5 of each 8
  for (const ClockAnchor& anchor : a.anchors) EXPECT_EQ(anchor.offset_ns, kOffset);
  EXPECT_DOUBLE_EQ(a.best_delay_ns, 2 * kWay);
  EXPECT_DOUBLE_EQ(a.median_delay_ns, 2 * kWay);
}

RunCatalog Catalog(const std::string& dir) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir);
  EXPECT_TRUE(files.ok()) << files.status();
  return CatalogTraceFiles(files.ok() ? *files : std::vector<std::string>{});
}

// Exchanges between `asker` and `server` (host indices of `job`; -1: a
// server that traced nothing, on the true clock) every 64 s, in bursts of 8,
// 30 us each way give or take 5, one answer in four queued 0.5 ms.
std::string Exchanges(const SkewedJob& job, int asker, int server) {
  auto reading = [&](int host, int64_t t) {
    return host < 0 ? t : HostClockReading(job, host, t);
  };
  auto name = [](int host) { return host < 0 ? std::string("server") : absl::StrCat("node", host); };
  std::mt19937_64 random(7);
  std::normal_distribution<double> jitter(0, 5 * kUs);
  std::string text = Header(name(asker), name(server));
  for (int64_t at = job.start_ns; at < job.start_ns + job.duration_ns; at += 64 * kSecond) {
    for (int i = 0; i < 8; ++i) {
      const int64_t t = at + i * kMs;
      const int64_t there = 30 * kUs + std::llround(jitter(random));
      const int64_t back = 30 * kUs + std::llround(jitter(random)) + (i % 4 == 1 ? 500 * kUs : 0);
      ClockExchange x{reading(asker, t), reading(server, t + there), reading(server, t + there + 5 * kUs),
                      reading(asker, t + there + 5 * kUs + back)};
      text += ClockExchangeLine(x);
    }
  }
  return text;
}

void ExpectWithin50Us(const SkewedJob& job, const RunClocks& clocks) {
  ASSERT_EQ(clocks.reference_host, "node0");
  for (const HostClockFit& fit : clocks.hosts) {
    ASSERT_TRUE(fit.corrected) << fit.host << ": " << fit.why_not;
    EXPECT_NE(fit.source.find("time exchanges"), std::string::npos) << fit.source;
    const int h = fit.host.back() - '0';
    for (int64_t t = job.start_ns; t <= job.start_ns + job.duration_ns; t += 60 * kSecond) {
      const int64_t error = clocks.corrections.at(fit.host).Apply(HostClockReading(job, h, t)) -
                            HostClockReading(job, 0, t);
      EXPECT_LE(std::llabs(error), 50 * kUs) << fit.host << " at " << (t - job.start_ns) / kSecond;
      EXPECT_LE(std::fabs(static_cast<double>(error)), fit.fit.uncertainty_ns) << fit.host;
    }
  }
}

// Ranks whose steps end on their own say nothing of the clocks (the step
// fit refuses them: clock_alignment_test); the exchanges still do, over an
// hour with 40 ms of offset and 60 ppm of drift between the hosts.
TEST(ClockExchangesTest, ExchangesFitHostsWhoseStepsSayNothing) {
  SkewedJob job;
  job.hosts = {{-10e6, -20e-6}, {30e6, 40e-6}};
  job.independent = true;
  job.duration_ns = 3600 * kSecond;
  const std::string dir = SkewedJobDirectory("exchanges-hour", job);
  Write(dir + "/clock-node1-7.iotap-clock", Exchanges(job, 1, 0));
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 1);
  ASSERT_EQ(clocks.hosts.size(), 1u);
  EXPECT_EQ(clocks.hosts[0].exchanges, 57 * 8);
  EXPECT_EQ(clocks.hosts[0].exchanged_with, "node0");
  EXPECT_TRUE(clocks.hosts[0].fit.drift_fitted);
  EXPECT_EQ(clocks.hosts[0].steps, 3599);  // both ranks ended them; compared, not used
  ExpectWithin50Us(job, clocks);
}

// The reference host's instance asked the other (it started second), or
// both asked a third that traced nothing: the same corrections.
TEST(ClockExchangesTest, AnyInstanceMayServe) {
  SkewedJob job;
  job.hosts = {{-10e6, -20e-6}, {30e6, 40e-6}, {0, 5e-6}};
  job.duration_ns = 1800 * kSecond;
  const std::string dir = SkewedJobDirectory("exchanges-served-by-node1", job);
  Write(dir + "/clock-node0-7.iotap-clock", Exchanges(job, 0, 1));
  Write(dir + "/clock-node2-7.iotap-clock", Exchanges(job, 2, 1));
  RunClocks by_node1 = FitRunClocks(Catalog(dir), {}, 1);
  ASSERT_EQ(by_node1.hosts.size(), 2u);
  // 29 bursts of 8 in each file: node1 from node0's own file, node2 from
  // its file and node0's.
  EXPECT_EQ(by_node1.hosts[0].exchanges, 232);
  EXPECT_EQ(by_node1.hosts[0].exchanged_with, "node1");
  EXPECT_EQ(by_node1.hosts[1].exchanges, 464);
  EXPECT_EQ(by_node1.hosts[1].exchanged_with, "node1");
  ExpectWithin50Us(job, by_node1);

  const std::string third = SkewedJobDirectory("exchanges-served-by-a-third", job);
  for (int h = 0; h < 3; ++h) {
    Write(absl::StrCat(third, "/clock-node", h, "-7.iotap-clock"), Exchanges(job, h, -1));
  }
  RunClocks by_server = FitRunClocks(Catalog(third), {}, 1);
  ASSERT_EQ(by_server.hosts.size(), 2u);
  for (const HostClockFit& fit : by_server.hosts) {
    EXPECT_EQ(fit.exchanges, 464) << fit.host;
    EXPECT_EQ(fit.exchanged_with, "server") << fit.host;
  }
  ExpectWithin50Us(job, by_server);
}

// Hosts on one clock (as two "hosts" of one machine): the exchanges find
// no offset beyond their uncertainty, and nothing is corrected.
TEST(ClockExchangesTest, ClocksThatAgreeAreLeftAlone) {
  SkewedJob job;
  job.hosts = {{0, 0}, {0, 0}};
  job.duration_ns = 600 * kSecond;
  const std::string dir = SkewedJobDirectory("exchanges-agree", job);
  Write(dir + "/clock-node1-7.iotap-clock", Exchanges(job, 1, 0));
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 1);
  ASSERT_EQ(clocks.hosts.size(), 1u);
  EXPECT_EQ(clocks.hosts[0].exchanges, 10 * 8);
  EXPECT_FALSE(clocks.hosts[0].corrected);
  EXPECT_NE(clocks.hosts[0].why_not.find("as closely as the time exchanges can tell"),
            std::string::npos)
      << clocks.hosts[0].why_not;
}

TEST(ClockExchangesTest, AFileThatCannotBeReadIsSaid) {
  SkewedJob job;
  job.hosts = {{0, 0}, {30e6, 0}};
  const std::string dir = SkewedJobDirectory("exchanges-bad", job);
  Write(dir + "/clock-node1-7.iotap-clock", "garbage\n");
  RunClocks clocks = FitRunClocks(Catalog(dir), {}, 1);
  ASSERT_EQ(clocks.problems.size(), 1u);
  EXPECT_NE(clocks.problems[0].find("clock-node1-7.iotap-clock: does not start with"),
            std::string::npos)
      << clocks.problems[0];
  ASSERT_EQ(clocks.hosts.size(), 1u);
  EXPECT_EQ(clocks.hosts[0].exchanges, 0);  // fitted from the steps
  EXPECT_TRUE(clocks.hosts[0].corrected);
}

}  // namespace
}  // namespace iotap::analyzer
