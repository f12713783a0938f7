#include "analyzer/analysis/sliced_run.h"

#include <google/protobuf/util/message_differencer.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/read/trace_set.h"
#include "analyzer/testing/sample_runs.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kS = 1'000'000'000;
constexpr int64_t kMs = 1'000'000;

class SlicedRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-sliced-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Reads every trace of dir_ into `run` as `iotap top` does (frame by frame,
  // the followers kept alive), then seals everything.
  void Follow(SlicedRun& run) {
    absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(dir_.string());
    ASSERT_TRUE(files.ok());
    origin_ = CatalogTraceFiles(*files).start_unix_ns;
    run.SetOrigin(origin_);
    std::vector<ReadIssue> issues;
    for (const std::string& f : *files) {
      followers_.push_back(std::make_unique<TraceFollower>(f));
      ASSERT_TRUE(followers_.back()->ReadNew(&run, &issues).ok());
      ASSERT_TRUE(followers_.back()->Finish(&run, &issues).ok());
    }
    EXPECT_TRUE(issues.empty());
    run.Seal(run.last_seen_ns() + kS);
  }

  // The report of AnalyzeRun on [from, to) (ns from the run's start), and
  // the sliced run's on the same range, field by field.
  void ExpectSameReport(const SlicedRun& run, int64_t from, int64_t to) {
    AnalysisOptions options;
    options.range = TimeRange{.from_ns = from, .to_ns = to};
    options.top_files = 10;
    absl::StatusOr<report::Report> whole = AnalyzeRun(dir_.string(), options);
    ASSERT_TRUE(whole.ok()) << whole.status();
    absl::StatusOr<report::Report> sliced = run.Report(origin_ + from, origin_ + to);
    ASSERT_TRUE(sliced.ok()) << sliced.status();
    google::protobuf::util::MessageDifferencer diff;
    // Access patterns restart at each slice, and the window's time series
    // start with it (sliced_run.h): the timeline, drawn from them, shows
    // nothing of the run before the window.
    diff.IgnoreField(report::Report::descriptor()->FindFieldByName("timeline"));
    for (const google::protobuf::Descriptor* d :
         {report::File::descriptor(), report::Layer::descriptor(),
          report::DataFiles::descriptor()}) {
      diff.IgnoreField(d->FindFieldByName("read_pattern"));
    }
    std::string differences;
    diff.ReportDifferencesToString(&differences);
    EXPECT_TRUE(diff.Compare(*whole, *sliced)) << "[" << from / kMs << ", " << to / kMs << ") ms:\n"
                                               << differences;
  }

  std::filesystem::path dir_;
  int64_t origin_ = 0;
  std::vector<std::unique_ptr<TraceFollower>> followers_;
};

TEST_F(SlicedRunTest, EveryRangeOfSlicesIsTheReportOnThatRange) {
  // Two ranks with two loaders each, 10 ms steps: about 3 s.
  WriteManyStepRun(dir_.string(), 2, 2, 300);
  SlicedRun run(SlicedRun::Options{.keep_slices = 10});
  Follow(run);
  EXPECT_EQ(run.late_events(), 0u);
  ExpectSameReport(run, 0, 1 * kS);
  ExpectSameReport(run, 1 * kS, 2 * kS);
  ExpectSameReport(run, 1 * kS, 4 * kS);
  ExpectSameReport(run, 0, 4 * kS);
}

TEST_F(SlicedRunTest, EveryLayerAgreesWithTheReport) {
  // HDF5 reads made of POSIX reads, STDIO, a CUDA copy, CPU samples.
  WriteHostileRun(dir_.string());
  SlicedRun run(SlicedRun::Options{});
  Follow(run);
  ExpectSameReport(run, 0, run.sealed_until() - origin_);
}

TEST_F(SlicedRunTest, ACallAcrossSlicesCountsOnceWhereItEnds) {
  // A loader's 1.5 s read from 0.8 s to 2.3 s: the slice [2, 3) s holds it,
  // clipped to start at 2 s, as `iotap report --from 2 --to 3` does.
  const int64_t t0 = kSampleRunStartNs;
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, t0);
  trainer.End(EndOfTrace::REASON_EXIT, 0, t0 + 3 * kS);
  trainer.WriteTo((dir_ / "trainer.iotap").string());
  SyntheticProcess loader(101, 100, "/usr/bin/python3", {"python3", "train.py"}, t0,
                          ProcessHeader::ORIGIN_FORK);
  uint32_t f = loader.Path("/data/a.bin");
  loader.Read(OP_PREAD, t0 + 800 * kMs, t0 + 2300 * kMs, f, 0, 4096);
  loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, t0 + 3 * kS);
  loader.WriteTo((dir_ / "loader.iotap").string());
  SlicedRun run(SlicedRun::Options{});
  Follow(run);
  absl::StatusOr<report::Report> first = run.Report(origin_, origin_ + 2 * kS);
  absl::StatusOr<report::Report> last = run.Report(origin_ + 2 * kS, origin_ + 3 * kS);
  ASSERT_TRUE(first.ok() && last.ok());
  EXPECT_EQ(first->run().bytes_read(), 0);
  EXPECT_EQ(last->run().bytes_read(), 4096);
  EXPECT_DOUBLE_EQ(last->run().io_busy_s(), 0.3);
  ExpectSameReport(run, 2 * kS, 3 * kS);
}

TEST_F(SlicedRunTest, SlicesPastTheKeptOnesAreGone) {
  WriteManyStepRun(dir_.string(), 1, 1, 300);
  SlicedRun run(SlicedRun::Options{.keep_slices = 1});
  Follow(run);
  // Only the last sealed slice is kept: a range before it is refused.
  EXPECT_EQ(run.Report(origin_, origin_ + kS).status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_TRUE(run.Report(run.sealed_until() - kS, run.sealed_until()).ok());
}

}  // namespace
}  // namespace iotap::analyzer
