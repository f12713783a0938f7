#include "analyzer/cli/perf_keeper.h"

#include <dirent.h>
#include <stdio.h>
#include <unistd.h>

#include <array>
#include <string>

#include "gtest/gtest.h"

namespace iotap::cli {
namespace {

// The perf event descriptors open in this process.
int OpenPerfEvents() {
  int n = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* d = readdir(dir)) {
    std::string link = std::string("/proc/self/fd/") + d->d_name;
    std::array<char, 256> target{};
    ssize_t len = readlink(link.c_str(), target.data(), target.size() - 1);
    if (len > 0 && std::string(target.data(), len) == "anon_inode:[perf_event]") ++n;
  }
  closedir(dir);
  return n;
}

TEST(PerfKeeperTest, OnlyForTheMappedLayer) {
  EXPECT_FALSE(PerfKeeper::ForLayers("posix,stdio,hdf5,tfrecord,cuda,waits").active());
  EXPECT_FALSE(PerfKeeper::ForLayers("mappedx").active());
  bool allowed = PerfKeeper::ForLayers("").active();
  EXPECT_EQ(PerfKeeper::ForLayers("posix, mapped").active(), allowed);
  EXPECT_EQ(PerfKeeper::ForLayers("mapped").active(), allowed);
  EXPECT_EQ(PerfKeeper::ForLayers("all").active(), allowed);  // the shim's name for every layer
}

TEST(PerfKeeperTest, OneEventWhileItLivesAndNoneForTheJob) {
  const int before = OpenPerfEvents();
  ASSERT_GE(before, 0);
  {
    PerfKeeper keeper = PerfKeeper::ForLayers("");
    if (!keeper.active()) GTEST_SKIP() << "perf events are refused here";
    EXPECT_EQ(OpenPerfEvents(), before + 1);
    // A command started the way `iotap run` starts the job sees none.
    FILE* job = popen("ls -l /proc/self/fd/ | grep -c perf_event", "r");
    ASSERT_NE(job, nullptr);
    std::array<char, 16> count{};
    ASSERT_NE(fgets(count.data(), count.size(), job), nullptr);
    pclose(job);
    EXPECT_EQ(std::string(count.data()), "0\n");
  }
  EXPECT_EQ(OpenPerfEvents(), before);
}

}  // namespace
}  // namespace iotap::cli
