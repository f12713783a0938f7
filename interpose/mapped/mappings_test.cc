#include "interpose/mapped/mappings.h"

#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

void* At(uintptr_t a) { return reinterpret_cast<void*>(a); }

std::vector<DataMapping> Snapshot(uint64_t since) {
  std::vector<DataMapping> out(kMaxMappings + kRemovedHistory);
  out.resize(SnapshotDataMappings(since, out.data(), out.size()));
  return out;
}

const DataMapping* Find(const std::vector<DataMapping>& s, uintptr_t addr, uint64_t t) {
  uint64_t longest = 0;
  for (const DataMapping& m : s) longest = m.length > longest ? m.length : longest;
  return FindDataMapping(s.data(), s.size(), longest, addr, t);
}

// One table per process: each test removes what it added.
TEST(MappingsTest, FaultsResolveAgainstTheMappingOfTheirTime) {
  const uintptr_t base = 0x100000000;
  AddMapping(At(base), 0x10000, 7, 4096, true, 100);
  EXPECT_EQ(LiveDataMappings(), 1);
  EXPECT_EQ(RemoveMappingRange(At(base), 0x10000, 200), 7u);
  // The same address, another file, later: a loader mapping sample files in
  // turn.
  AddMapping(At(base), 0x10000, 8, 0, true, 300);
  auto s = Snapshot(0);
  ASSERT_EQ(s.size(), 2u);
  const DataMapping* early = Find(s, base + 0x2000, 150);
  ASSERT_NE(early, nullptr);
  EXPECT_EQ(early->file, 7u);
  EXPECT_EQ(early->offset, 4096);
  const DataMapping* late = Find(s, base + 0x2000, 350);
  ASSERT_NE(late, nullptr);
  EXPECT_EQ(late->file, 8u);
  EXPECT_EQ(Find(s, base + 0x2000, 250), nullptr);  // between the two
  EXPECT_EQ(Find(s, base + 0x10000, 350), nullptr);  // past the end
  EXPECT_EQ(RemoveMappingRange(At(base), 0x10000, 400), 8u);
  EXPECT_EQ(LiveDataMappings(), 0);
}

TEST(MappingsTest, PartialUnmapSplitsTheMapping) {
  const uintptr_t base = 0x200000000;
  AddMapping(At(base), 0x10000, 9, 0x1000, true, 10);
  EXPECT_EQ(RemoveMappingRange(At(base + 0x4000), 0x2000, 20), 9u);
  EXPECT_EQ(LiveDataMappings(), 2);
  auto s = Snapshot(1000);  // live ones only
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].start, base);
  EXPECT_EQ(s[0].length, 0x4000u);
  EXPECT_EQ(s[1].start, base + 0x6000);
  EXPECT_EQ(s[1].length, 0xa000u);
  EXPECT_EQ(s[1].offset, 0x7000);
  EXPECT_EQ(RemoveMappingRange(At(base), 0x10000, 30), 9u);
  EXPECT_EQ(LiveDataMappings(), 0);
  EXPECT_FALSE(HasMappingAt(At(base)));
}

TEST(MappingsTest, MremapMovesTheMappingAndItsOffset) {
  const uintptr_t base = 0x300000000;
  AddMapping(At(base), 0x4000, 11, 0x8000, true, 10);
  int64_t offset = 0;
  EXPECT_EQ(MoveMapping(At(base), At(base + 0x100000), 0x8000, 20, &offset), 11u);
  EXPECT_EQ(offset, 0x8000);
  EXPECT_TRUE(HasMappingAt(At(base + 0x100000)));
  auto s = Snapshot(0);
  const DataMapping* moved = Find(s, base + 0x100000 + 0x7000, 30);
  ASSERT_NE(moved, nullptr);
  EXPECT_EQ(moved->offset, 0x8000);
  EXPECT_EQ(MoveMapping(At(base + 0x999000), At(base), 1, 40, &offset), 0u);
  RemoveMappingRange(At(base + 0x100000), 0x8000, 50);
}

TEST(MappingsTest, OtherFilesAreKeptButNotData) {
  AddMapping(At(0x400000000), 0x1000, 12, 0, false, 10);
  EXPECT_TRUE(HasMappings());
  EXPECT_EQ(LiveDataMappings(), 0);
  EXPECT_EQ(RemoveMappingRange(At(0x400000000), 0x1000, 20), 12u);
}

TEST(MappingsTest, DataPathsAreTheAnalyzersDataFiles) {
  EXPECT_TRUE(IsDataPath("/data/imagenet/train.npy"));
  EXPECT_TRUE(IsDataPath("/tmp/x/db/data.mdb"));
  EXPECT_TRUE(IsDataPath("/scratch/a.arrow (deleted)"));
  EXPECT_FALSE(IsDataPath("/usr/lib/locale/locale-archive"));
  EXPECT_FALSE(IsDataPath("/dev/shm/torch_123_456"));
  EXPECT_FALSE(IsDataPath("/home/me/.venv/lib/python3.11/site-packages/x/y.bin"));
  EXPECT_FALSE(IsDataPath("/opt/lib/libfoo.so.1"));
  EXPECT_FALSE(IsDataPath("/memfd:pool (deleted)"));
  EXPECT_FALSE(IsDataPath("/SYSV00000000 (deleted)"));
  EXPECT_FALSE(IsDataPath("anon_inode:[io_uring]"));
}

}  // namespace
}  // namespace iotap::interpose
