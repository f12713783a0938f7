// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <string>
#include <vector>

#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "analyzer/clocks/clock_alignment.h"
#include "analyzer/clocks/clock_exchanger.h"
#include "analyzer/clocks/clock_exchanges.h"
#include "analyzer/clocks/clock_fit.h"
#include "analyzer/testing/test_files.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/steps/marker_steps.h"
#include "analyzer/testing/skewed_hosts.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(HeaderExamplesTest, ClockFit) {
  const int64_t run_start_ns = 1'700'000'000'000'000'000, run_end_ns = run_start_ns + 10 * kSecond;
  const int64_t host_ns = run_start_ns + 5 * kSecond;
  int64_t on_reference = 0;
  std::vector<ClockAnchor> anchors;
  for (int i = 0; i < 10; ++i) {
    const int64_t reference_ns = run_start_ns + i * kSecond;
    const int64_t at = reference_ns + 3'000'000;  // the host's clock, 3 ms ahead
    anchors.push_back({at, at - reference_ns});
  }
  // clock_fit.h
  ClockFit fit = FitClockLine(anchors, run_start_ns, run_end_ns);
  if (fit.anchors >= kMinClockAnchors) {
    on_reference = fit.correction.Apply(host_ns);
  }

  EXPECT_EQ(on_reference, host_ns - 3'000'000);
}

TEST(HeaderExamplesTest, ClockAlignment) {
  SkewedJob job;
  job.hosts = {{0, 0}, {20e6, 0}};  // node1 20 ms ahead
  const std::string dir = SkewedJobDirectory("header-example", job);
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir);
  ASSERT_TRUE(files.ok()) << files.status();
  RunCatalog catalog = CatalogTraceFiles(*files);
  const std::vector<StepLog> step_logs;
  const std::string path = dir + "/node1.trainer1.iotap";
  MarkerCollector visitor;
  std::vector<ReadIssue> issues;
  std::vector<std::string> why;
  // clock_alignment.h
  RunClocks clocks = FitRunClocks(catalog, step_logs, /*threads=*/2);
  CorrectCatalogClocks(clocks.corrections, &catalog);
  ASSERT_TRUE(ReadTraceFile(path, &visitor, &issues, &clocks.corrections).ok());
  for (const HostClockFit& h : clocks.hosts) why.push_back(h.why_not);

  ASSERT_EQ(clocks.hosts.size(), 1u);
  EXPECT_TRUE(clocks.hosts[0].corrected);
  EXPECT_EQ(why, std::vector<std::string>{""});
  EXPECT_NEAR(clocks.hosts[0].fit.correction.offset_ns, 20e6, 100'000);
  // node1's steps, read with the correction, end when node0's do.
  std::vector<StepLog> logs = visitor.TakeLogs();
  ASSERT_FALSE(logs.empty());
  ASSERT_FALSE(logs[0].spans.empty());
  EXPECT_NEAR(static_cast<double>(logs[0].spans[0].end_ns - TrueStepEnd(job, 0)), 0, 2'000'000);
}


TEST(HeaderExamplesTest, ClockExchanges) {
  // Two bursts of exchanges with a host 2 ms ahead, 50 us each way.
  const int64_t from_ns = 1'700'000'000'000'000'000, to_ns = from_ns + 100 * kSecond;
  std::string text = absl::StrCat(kClockExchangeMagic, "\nhost node7\nreference node1\n");
  for (int64_t at : {from_ns, to_ns}) {
    for (int i = 0; i < 8; ++i) {
      const int64_t t = at + i * 1'000'000;
      text += ClockExchangeLine({t + 2'000'000, t + 50'000, t + 60'000, t + 110'000 + 2'000'000});
    }
  }
  const std::string path = testing::WriteTemp("header-example.iotap-clock", text);
  // clock_exchanges.h
  absl::StatusOr<ClockExchangeFile> f = ReadClockExchanges(path);
  ExchangeAnchors a = PickExchangeAnchors(f->exchanges);
  ClockFit fit = FitClockLine(a.anchors, from_ns, to_ns);

  EXPECT_EQ(f->reference, "node1");
  EXPECT_EQ(a.anchors.size(), 16u);
  EXPECT_EQ(fit.correction.offset_ns, 2'000'000);
}

TEST(HeaderExamplesTest, ClockExchanger) {
  const std::string dir = testing::TempDirectory(), host = "node07";
  // A port of this host that nobody serves: the example's instance serves it.
  const std::string address = absl::StrCat("127.0.0.1:", 20000 + getpid() % 20000);
  // clock_exchanger.h
  ClockSyncOptions o{.address = address, .directory = dir, .host = host};
  absl::StatusOr<std::unique_ptr<ClockExchanger>> x = ClockExchanger::Start(o);
  // ... the job runs ...
  (*x)->Finish(/*linger_s=*/10);

  EXPECT_EQ((*x)->exchanges(), 0);
}

}  // namespace
}  // namespace iotap::analyzer
