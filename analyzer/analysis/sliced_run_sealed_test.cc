// A sealed slice (sliced_run_sealed.h) of two processes that read one file
// in the same milliseconds: what each process keeps, and what goes into the
// slice's totals by path, by layer and by trainer group. The windows made
// from slices are compared with the report whole in sliced_run_test.cc.

#include "analyzer/analysis/sliced_run_sealed.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/analysis/process_analysis.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer::internal {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kUs = 1'000;
constexpr int64_t kMs = 1'000'000;

// The analysis of one second of `p`'s file, as SlicedRun makes a slice's
// (its files counted into `shared`, if given).
ProcessResult SliceOf(SyntheticProcess& p, PathTable* paths, const std::string& name,
                      SliceFiles* shared = nullptr) {
  const std::string path = testing::TempDirectory() + "/" + name;
  p.WriteTo(path);
  ProcessAnalyzer a(AnalysisScope::kFull, paths, kT0, /*resolution_ns=*/1000);
  a.set_sparse_ids();
  if (shared != nullptr) a.set_shared_files(shared);
  std::vector<ReadIssue> issues;
  EXPECT_TRUE(ReadTraceFile(path, &a, &issues).ok());
  EXPECT_TRUE(issues.empty());
  return a.Take();
}

class SealedSliceTest : public ::testing::Test {
 protected:
  // A trainer (file 0) reads /data/a.bin [1, 2) ms and /data/b.bin [3, 4)
  // ms; its loader (file 1) opens /data/a.bin and reads it [1.5, 2.5) ms.
  void SetUp() override { Analyze(nullptr); }

  void Analyze(SliceFiles* shared) {
    SyntheticProcess trainer(10, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
    const uint32_t a = trainer.Path("/data/a.bin");
    const uint32_t b = trainer.Path("/data/b.bin");
    trainer.Read(OP_PREAD, kT0 + 1 * kMs, kT0 + 2 * kMs, a, 0, 4096);
    trainer.Read(OP_PREAD, kT0 + 3 * kMs, kT0 + 4 * kMs, b, 0, 1000);
    trainer_ = SliceOf(trainer, &paths_, "sealed-trainer.iotap", shared);

    SyntheticProcess loader(11, 10, "/usr/bin/python3", {"python3", "train.py"}, kT0,
                            ProcessHeader::ORIGIN_FORK);
    const uint32_t la = loader.Path("/data/a.bin");
    loader.Add({.op = OP_OPENAT, .start_ns = kT0 + kMs, .end_ns = kT0 + kMs + 100 * kUs,
                .file = la, .result = 5});
    loader.Read(OP_PREAD, kT0 + 1500 * kUs, kT0 + 2500 * kUs, la, 0, 8192);
    loader_ = SliceOf(loader, &paths_, "sealed-loader.iotap", shared);
  }

  PathTable paths_;
  ProcessResult trainer_;
  ProcessResult loader_;
};

TEST_F(SealedSliceTest, EachProcessKeepsItsCountsAndThePathsAreSummed) {
  SliceTotals totals(kT0, /*resolution_ns=*/1000, /*slice_start_ns=*/kT0);
  const SealGroup group{.trainer = 0};
  ProcessSlice t = Seal(std::move(trainer_), 0, group, &totals);
  ProcessSlice l = Seal(std::move(loader_), 1, SealGroup{.trainer = 0, .loader = true}, &totals);
  Index(&totals);

  EXPECT_EQ(t.events, 2u);
  EXPECT_EQ(t.reads, 2u);
  EXPECT_EQ(t.read_bytes, 5096u);
  EXPECT_EQ(l.events, 2u);
  EXPECT_EQ(l.reads, 1u);
  EXPECT_EQ(l.read_bytes, 8192u);
  EXPECT_EQ(l.metadata_ops, 1u);

  ASSERT_EQ(totals.files->entries.size(), 2u);
  const uint32_t a = paths_.Intern("/data/a.bin").id;
  const uint32_t b = paths_.Intern("/data/b.bin").id;
  // Files in the order the processes first named them (the index by path is
  // gone once indexed).
  const SliceFile& fa = totals.files->entries[0];
  const SliceFile& fb = totals.files->entries[1];
  EXPECT_EQ(fa.path, a);
  EXPECT_EQ(fb.path, b);
  EXPECT_EQ(fa.counts.posix_reads, 2u);
  EXPECT_EQ(fa.counts.read_bytes, 12288u);
  EXPECT_EQ(fa.counts.opens, 1u);
  EXPECT_EQ(fa.detail.read_sizes.buckets[2], 2u);  // 1,000 to 10,000 bytes
  EXPECT_STREQ(fa.category, "data");
  EXPECT_EQ(fb.counts.read_bytes, 1000u);
  // Who named each path, path by path, in the order the processes were sealed.
  ASSERT_EQ(totals.named_by.size(), 3u);
  EXPECT_EQ(fa.first_named, 0u);
  EXPECT_EQ(fb.first_named, 2u);
  ASSERT_EQ(fa.named, 2u);
  EXPECT_EQ(totals.named_by[fa.first_named].first, 0);
  EXPECT_EQ(totals.named_by[fa.first_named + 1].first, 1);
  EXPECT_EQ(totals.named_by[fa.first_named].second, InternedString::KIND_PATH);
  ASSERT_EQ(fb.named, 1u);
  EXPECT_EQ(totals.named_by[fb.first_named].first, 0);

  const LayerAccumulator& posix = totals.layers[static_cast<int>(Layer::kPosix)];
  EXPECT_EQ(posix.reads, 3u);
  EXPECT_EQ(posix.read_bytes, 13288u);
  EXPECT_EQ(posix.metadata_ops, 1u);
  EXPECT_EQ(totals.data_read_sizes.log2[12], 1u);  // 4096
  EXPECT_EQ(totals.data_read_sizes.log2[13], 1u);  // 8192
  EXPECT_EQ(totals.data_read_sizes.log2[9], 1u);   // 1000
}

// As SlicedRun has them: the slice's analyzers count into one table by path,
// which the slice's totals take when it is sealed. The totals are the same.
TEST_F(SealedSliceTest, FilesCountedIntoOneTableAddUpAsSealingAddsThem) {
  SliceTotals apart(kT0, /*resolution_ns=*/1000, /*slice_start_ns=*/kT0);
  Seal(std::move(trainer_), 0, SealGroup{.trainer = 0}, &apart);
  Seal(std::move(loader_), 1, SealGroup{.trainer = 0, .loader = true}, &apart);
  Index(&apart);

  auto shared = std::make_unique<SliceFiles>();
  Analyze(shared.get());
  EXPECT_TRUE(trainer_.files.empty());  // counted into the table, not the result
  EXPECT_TRUE(loader_.file_details.empty());
  ASSERT_EQ(trainer_.file_refs.size(), 2u);
  SliceTotals together(kT0, /*resolution_ns=*/1000, /*slice_start_ns=*/kT0);
  together.files = std::move(shared);
  Seal(std::move(trainer_), 0, SealGroup{.trainer = 0}, &together);
  Seal(std::move(loader_), 1, SealGroup{.trainer = 0, .loader = true}, &together);
  Index(&together);

  ASSERT_EQ(together.files->entries.size(), apart.files->entries.size());
  for (size_t k = 0; k < apart.files->entries.size(); ++k) {
    SCOPED_TRACE(k);
    const SliceFile& a = apart.files->entries[k];
    const SliceFile& t = together.files->entries[k];
    EXPECT_EQ(t.path, a.path);
    EXPECT_STREQ(t.category, a.category);
    EXPECT_EQ(t.counts.opens, a.counts.opens);
    EXPECT_EQ(t.counts.posix_reads, a.counts.posix_reads);
    EXPECT_EQ(t.counts.read_bytes, a.counts.read_bytes);
    EXPECT_EQ(t.counts.read_ns, a.counts.read_ns);
    EXPECT_EQ(t.counts.metadata_ops, a.counts.metadata_ops);
    EXPECT_EQ(t.detail.read_sizes.buckets, a.detail.read_sizes.buckets);
    EXPECT_EQ(t.detail.read_pattern.total(), a.detail.read_pattern.total());
    EXPECT_EQ(t.detail.read_ranges.covered(), a.detail.read_ranges.covered());
    EXPECT_EQ(t.named, a.named);
    EXPECT_EQ(t.first_named, a.first_named);
  }
  EXPECT_EQ(together.named_by, apart.named_by);
  EXPECT_EQ(together.files->entries[0].counts.read_bytes, 12288u);
}

TEST_F(SealedSliceTest, AGroupsBusyTimeIsTheUnionOfItsProcessesCalls) {
  SliceTotals totals(kT0, /*resolution_ns=*/1000, /*slice_start_ns=*/kT0);
  Seal(std::move(trainer_), 0, SealGroup{.trainer = 0}, &totals);
  Seal(std::move(loader_), 1, SealGroup{.trainer = 0, .loader = true}, &totals);
  ASSERT_EQ(totals.groups.count(0), 1u);
  const SliceGroup& g = totals.groups.at(0);
  // [1, 2) and [1.5, 2.5) overlap: [1, 2.5), then [3, 4), and the open.
  EXPECT_EQ(g.io.Total(), 2'500 * kUs);
  EXPECT_EQ(g.read_bytes.SumOver(kT0, kT0 + 10 * kMs), 13288);
  EXPECT_EQ(g.read_calls.SumOver(kT0, kT0 + 10 * kMs), 3);
  EXPECT_EQ(totals.other_io.Total(), 0);
  // The layer's busy time is every call's, the open's too.
  EXPECT_EQ(totals.layer_busy[static_cast<int>(Layer::kPosix)].Total(), 2'500 * kUs);
}

TEST_F(SealedSliceTest, AProcessOfNoGroupCountsInTheOtherBusyTime) {
  SliceTotals totals(kT0, /*resolution_ns=*/1000, /*slice_start_ns=*/kT0);
  Seal(std::move(loader_), 1, SealGroup{}, &totals);
  EXPECT_TRUE(totals.groups.empty());
  // Its open [1, 1.1) ms and its read [1.5, 2.5) ms.
  EXPECT_EQ(totals.other_io.Total(), 1'100 * kUs);
}

}  // namespace
}  // namespace iotap::analyzer::internal
