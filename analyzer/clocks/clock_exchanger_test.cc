// The instances of `iotap run --clock-sync` that make the time exchanges:
// two over loopback with one clock shifted, one with no server, and the
// address a Slurm job's nodes agree on.

#include "analyzer/clocks/clock_exchanger.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/clocks/clock_exchanges.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::FreshDirectory;

constexpr int64_t kMs = 1'000'000;

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
  FreshDirectory dir("exchanger-loopback");
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
  FreshDirectory dir("exchanger-no-server");
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

}  // namespace
}  // namespace iotap::analyzer
