// Time exchanges of `iotap run --clock-sync`: the file, the anchors picked
// from it, two instances exchanging over loopback with one clock shifted,
// and host clocks fitted from exchanges where the steps say nothing.

#include "analyzer/clocks/clock_exchanges.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "analyzer/clocks/clock_alignment.h"
#include "analyzer/clocks/clock_exchanger.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/skewed_hosts.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

// A fresh directory under the tests' temporary directory.
struct Dir {
  explicit Dir(const std::string& name) : path_(testing::TempDirectory() + "/" + name) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  std::string path_;
};

constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;

std::string Header(const std::string& host, const std::string& reference) {
  return absl::StrCat(kClockExchangeMagic, "\nhost ", host, "\nreference ", reference, "\n");
}

void Write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ClockExchangesTest, FileKeepsItsCompleteLines) {
  Dir dir("exchange-file");
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
  Dir dir("exchange-bad-files");
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

ClockSyncOptions Options(const std::string& address, const std::string& dir,
                         const std::string& host) {
  ClockSyncOptions o;
  o.address = address;
  o.directory = dir;
  o.host = host;
  return o;
}

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = {};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  EXPECT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  close(fd);
  return ntohs(a.sin_port);
}

// Two instances over loopback, the asking one's clock 200 ms ahead: the
// first to start serves, the second asks, and its file gives the offset
// within its round trip.
TEST(ClockExchangerTest, TwoInstancesOverLoopback) {
  Dir dir("exchanger-loopback");
  const std::string address = absl::StrCat("127.0.0.1:", FreePort());
  ClockSyncOptions serving = Options(address, dir.path(), "ref");
  auto server = ClockExchanger::Start(serving);
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE((*server)->serving());
  ClockSyncOptions asking = Options(address, dir.path(), "node1");
  asking.clock_offset_ns = 200 * kMs;
  auto asker = ClockExchanger::Start(asking);
  ASSERT_TRUE(asker.ok()) << asker.status();
  EXPECT_FALSE((*asker)->serving());
  // The first burst, and the one a second later (the next is 2 s after it).
  for (int i = 0; i < 1000 && (*asker)->exchanges() < 16 + 8; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (*asker)->Finish(0);
  (*server)->Finish(5);
  // With the last one.
  EXPECT_EQ((*asker)->exchanges(), 16 + 8 + 16);
  absl::StatusOr<std::vector<std::string>> none = ListTraceFiles(dir.path());
  EXPECT_FALSE(none.ok());  // no trace file among them
  const std::string path = dir.Sub(absl::StrCat("clock-node1-", getpid(), ".iotap-clock"));
  absl::StatusOr<ClockExchangeFile> f = ReadClockExchanges(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->host, "node1");
  EXPECT_EQ(f->reference, "ref");
  EXPECT_EQ(f->exchanges.size(), 40u);
  EXPECT_EQ(f->bad_lines, 0);
  ExchangeAnchors a = PickExchangeAnchors(f->exchanges);
  // The last burst follows the second within a few ms: one burst to the
  // picker, unless the machine stalled half a second between them.
  EXPECT_GE(a.bursts, 2);
  EXPECT_LE(a.bursts, 3);
  for (const ClockAnchor& anchor : a.anchors) {
    EXPECT_LE(std::llabs(anchor.offset_ns - 200 * kMs), 1 * kMs) << anchor.offset_ns;
  }
}

// An address that nobody serves and that is not this host's: the asking
// instance gives up at its deadline, or at Finish, and writes no exchange.
TEST(ClockExchangerTest, NoServerMeansNoExchanges) {
  Dir dir("exchanger-no-server");
  const int port = FreePort();
  // Serving would need this address: 192.0.2.1 (TEST-NET-1) is nobody's.
  ClockSyncOptions asking = Options(absl::StrCat("192.0.2.1:", port), dir.path(), "node1");
  asking.connect_timeout_s = 0.2;
  auto asker = ClockExchanger::Start(asking);
  ASSERT_TRUE(asker.ok()) << asker.status();
  EXPECT_FALSE((*asker)->serving());
  (*asker)->Finish(0);
  EXPECT_EQ((*asker)->exchanges(), 0);
  EXPECT_FALSE(ClockExchanger::Start(Options("no-port", dir.path(), "node1")).ok());
  EXPECT_FALSE(ClockExchanger::Start(Options("x:99999", dir.path(), "node1")).ok());
}

TEST(ClockExchangerTest, SlurmAddressIsTheFirstNode) {
  EXPECT_EQ(*SlurmClockSyncAddress("gpu[017-020,031],cpu4", "123456"), "gpu017:24456");
  EXPECT_EQ(*SlurmClockSyncAddress("node7,node8", "5"), "node7:24005");
  EXPECT_EQ(*SlurmClockSyncAddress("a[3]", "1000"), "a3:24000");
  EXPECT_FALSE(SlurmClockSyncAddress(nullptr, "5").ok());
  EXPECT_FALSE(SlurmClockSyncAddress("node7", nullptr).ok());
  EXPECT_FALSE(SlurmClockSyncAddress("node[7", "5").ok());
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
