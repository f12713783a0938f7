#include "interpose/mapped/proc_maps.h"

#include <string>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

TEST(ProcMapsTest, ParsesAFileMapping) {
  std::string line =
      "7f3a12000000-7f3a12400000 r--s 00100000 fe:01 1234567                    "
      "/data/train shards/a.bin";
  MapsLine m;
  ASSERT_TRUE(ParseMapsLine(line.data(), line.size(), &m));
  EXPECT_EQ(m.start, 0x7f3a12000000u);
  EXPECT_EQ(m.end, 0x7f3a12400000u);
  EXPECT_EQ(m.offset, 0x100000);
  EXPECT_TRUE(m.readable);
  EXPECT_FALSE(m.executable);
  EXPECT_EQ(std::string(m.path, m.path_size), "/data/train shards/a.bin");
}

TEST(ProcMapsTest, ParsesAnonymousAndExecutableMappings) {
  std::string anon = "55d0c0a00000-55d0c0a21000 rw-p 00000000 00:00 0 ";
  MapsLine m;
  ASSERT_TRUE(ParseMapsLine(anon.data(), anon.size(), &m));
  EXPECT_EQ(m.path_size, 0u);
  std::string lib = "7f0000000000-7f0000001000 r-xp 00002000 08:01 42   /usr/lib/libc.so.6";
  ASSERT_TRUE(ParseMapsLine(lib.data(), lib.size(), &m));
  EXPECT_TRUE(m.executable);
  EXPECT_EQ(m.offset, 0x2000);
  EXPECT_EQ(std::string(m.path, m.path_size), "/usr/lib/libc.so.6");
}

TEST(ProcMapsTest, RejectsWhatIsNotAMapsLine) {
  MapsLine m;
  for (std::string bad :
       {"", "zz-10 r--p 0 0 0", "1000-0800 r--p 00000000 00:00 0", "1000-2000", "1000-2000 r--p"}) {
    EXPECT_FALSE(ParseMapsLine(bad.data(), bad.size(), &m)) << bad;
  }
}

TEST(ProcMapsTest, EarlyRereadsWaitLongerWhileTheyFindNothing) {
  EarlyRereads early;
  EXPECT_EQ(early.wait_ns(), EarlyRereads::kFirstWaitNs);
  early.After(false);
  EXPECT_EQ(early.wait_ns(), 2 * EarlyRereads::kFirstWaitNs);
  early.After(false);
  EXPECT_EQ(early.wait_ns(), 4 * EarlyRereads::kFirstWaitNs);
  for (int i = 0; i < 20; ++i) early.After(false);
  EXPECT_EQ(early.wait_ns(), EarlyRereads::kMaxWaitNs);
  early.After(true);  // a data mapping found: back to the first wait
  EXPECT_EQ(early.wait_ns(), EarlyRereads::kFirstWaitNs);
}

}  // namespace
}  // namespace iotap::interpose
