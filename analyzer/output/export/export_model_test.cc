#include "analyzer/output/export/export_model.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

ExportSlice Slice(int64_t start, int64_t end, uint32_t name = 1) {
  ExportSlice s;
  s.start_ns = start;
  s.end_ns = end;
  s.name = name;
  return s;
}

TEST(NestSlicesTest, SortsByStartWithParentsBeforeTheirChildren) {
  // An HDF5 call is recorded after the reads made inside it.
  std::vector<ExportSlice> slices = {Slice(12, 14, 2), Slice(15, 18, 2), Slice(10, 20, 1),
                                     Slice(30, 31, 3)};
  EXPECT_EQ(NestSlices(&slices), 0u);
  ASSERT_EQ(slices.size(), 4u);
  EXPECT_EQ(slices[0].start_ns, 10);
  EXPECT_EQ(slices[0].name, 1u);
  EXPECT_EQ(slices[1].start_ns, 12);
  EXPECT_EQ(slices[2].start_ns, 15);
  EXPECT_EQ(slices[3].start_ns, 30);
}

TEST(NestSlicesTest, CutsASliceThatOutlivesTheOneItStartsIn) {
  std::vector<ExportSlice> slices = {Slice(0, 10), Slice(5, 15), Slice(10, 12), Slice(20, 20)};
  EXPECT_EQ(NestSlices(&slices), 1u);
  EXPECT_EQ(slices[1].start_ns, 5);
  EXPECT_EQ(slices[1].end_ns, 10);    // cut at its parent's end
  EXPECT_EQ(slices[2].start_ns, 10);  // starts where both ended: a sibling, uncut
  EXPECT_EQ(slices[2].end_ns, 12);
  EXPECT_EQ(slices[3].end_ns, 20);
}

TEST(NestSlicesTest, InstantsNeverHoldOtherSlices) {
  ExportSlice mark = Slice(5, 5);
  mark.instant = true;
  std::vector<ExportSlice> slices = {Slice(0, 10), mark, Slice(6, 8)};
  EXPECT_EQ(NestSlices(&slices), 0u);
  EXPECT_EQ(slices[2].end_ns, 8);
}

TEST(ExportIdsTest, RenumbersOnlyIdsAnotherHostUsedFirst) {
  ExportIds ids;
  EXPECT_EQ(ids.Pid("a", 100), 100);
  EXPECT_EQ(ids.Pid("a", 100), 100);
  const int b = ids.Pid("b", 100);
  EXPECT_NE(b, 100);
  EXPECT_GE(b, 1 << 28);
  EXPECT_EQ(ids.Pid("b", 100), b);
  EXPECT_EQ(ids.Pid("b", 200), 200);
  // Thread ids are numbered on their own: tid 100 of host a is not pid 100's.
  EXPECT_EQ(ids.Tid("a", 100), 100);
  EXPECT_EQ(ids.Tid("b", 100), b);  // the same (host, id), the same number
  const int fresh = ids.Fresh();
  EXPECT_NE(fresh, b);
  EXPECT_NE(ids.Pid("c", 100), fresh);
}

TEST(ExportStringsTest, InternsOncePerValue) {
  ExportStrings s;
  EXPECT_EQ(s.Intern(""), 0u);
  const uint32_t a = s.Intern("pread");
  EXPECT_EQ(s.Intern("pread"), a);
  EXPECT_NE(s.Intern("read"), a);
  EXPECT_EQ(s[a], "pread");
}

}  // namespace
}  // namespace iotap::analyzer
