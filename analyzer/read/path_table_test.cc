#include "analyzer/read/path_table.h"

#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(FileCategoryTest, DatasetsAreDataAndTheInterpreterIsNot) {
  for (const char* data : {"/data/imagenet/train/n01440764/x.JPEG", "/scratch/shards/s-0001.tar",
                           "/home/me/run/images.h5", "/tmp/checkpoint.pt", "/work/condition.csv"}) {
    EXPECT_STREQ(FileCategory(data), "data") << data;
  }
  for (const char* runtime :
       {"/usr/bin/pybuilddir.txt", "/usr/lib", "/usr/lib/python3.11/os.py",
        "/root/.pyenv/shims/python3", "/opt/conda/envs/ml/lib/python3.10/site-packages/x.so",
        "/home/me/.venv/lib/python3.11/site-packages/torch/__init__.py", "/home/me/proj/bin/run",
        "/etc/ld.so.cache", "/lib/x86_64-linux-gnu/libc.so.6"}) {
    EXPECT_STREQ(FileCategory(runtime), "runtime") << runtime;
  }
  for (const char* system : {"/proc/self/stat", "/dev/shm/torch_123", "/tmp/pymp-abc/listener-x"}) {
    EXPECT_STREQ(FileCategory(system), "system") << system;
  }
}

// FileCategory's rules spelled out one search at a time, as path_table.h
// states them; FileCategory looks once per slash instead.
const char* CategoryByDefinition(std::string_view path) {
  auto has = [&](std::string_view part) { return path.find(part) != std::string_view::npos; };
  if (path.starts_with("/proc/") || path.starts_with("/sys/") || path.starts_with("/dev/") ||
      has("/pymp-")) {
    return "system";
  }
  if (has("/site-packages/") || has("/dist-packages/") || has("/lib/python") || has("/bin/") ||
      has("/.pyenv/") || has("/conda") || has("/.venv/") || has("/venv/") ||
      path.starts_with("/usr/") || path == "/usr" || path.starts_with("/lib/") ||
      path.starts_with("/lib64/") || path.starts_with("/bin/") || path.starts_with("/sbin/") ||
      path.starts_with("/etc/") || has("/__pycache__/") || path.ends_with(".py") ||
      path.ends_with(".pyc") || path.ends_with(".so") || path.ends_with(".pth") || has(".so.")) {
    return "runtime";
  }
  return "data";
}

TEST(FileCategoryTest, AgreesWithTheRulesOnEveryNameAnywhere) {
  const std::vector<std::string> parts = {
      "pymp-", "site-packages/", "dist-packages/", "lib/python", "lib/", "lib64/", "bin/",
      ".pyenv/", "conda", ".venv/", "venv/", "__pycache__/", "usr/", "usr", "sbin/", "etc/",
      "proc/", "sys/", "dev/", "x.py", "x.pyc", "x.so", "x.pth", "x.so.6", "pym", "site-packages",
      "bin", "venv", "data", "", "/", "p", "s", "d", "l", "b", "c", "v", "_", "."};
  size_t checked = 0;
  for (const std::string& a : parts) {
    for (const std::string& b : parts) {
      for (const std::string& path :
           {a, "/" + a, "/" + a + "/" + b, "/data/" + a + b, "/data/" + a + "/" + b,
            "/" + a + "/pymp-1", "/" + b + a, a + "/" + b}) {
        EXPECT_STREQ(FileCategory(path), CategoryByDefinition(path)) << path;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 40u * 40u * 8u);
}

TEST(PathTableTest, OneIdAndCategoryPerPath) {
  PathTable paths;
  PathTable::Entry a = paths.Intern("/data/train/0001.jpg");
  PathTable::Entry b = paths.Intern("/usr/lib/python3.11/os.py");
  PathTable::Entry a2 = paths.Intern(std::string("/data/train/") + "0001.jpg");
  EXPECT_EQ(a.id, 0u);
  EXPECT_EQ(b.id, 1u);
  EXPECT_EQ(a2.id, a.id);
  EXPECT_STREQ(a.category, "data");
  EXPECT_STREQ(b.category, "runtime");
  EXPECT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths.path(a.id), "/data/train/0001.jpg");
  EXPECT_EQ(paths.path(b.id), "/usr/lib/python3.11/os.py");
}

TEST(PathTableTest, CategoryOnlyWhenAskedFor) {
  PathTable paths;
  PathTable::Entry a = paths.Intern("/proc/self/stat", /*categorize=*/false);
  EXPECT_EQ(a.category, nullptr);
  PathTable::Entry again = paths.Intern("/proc/self/stat");
  EXPECT_EQ(again.id, a.id);
  EXPECT_STREQ(again.category, "system");
  EXPECT_STREQ(paths.Intern("/proc/self/stat", /*categorize=*/false).category, "system");
}

TEST(PathTableTest, LongPathsAndManyOfThem) {
  PathTable paths;
  std::string long_path = "/data/" + std::string(100000, 'x');
  uint32_t long_id = paths.Intern(long_path).id;
  for (int i = 0; i < 20000; ++i) paths.Intern("/data/f" + std::to_string(i));
  EXPECT_EQ(paths.size(), 20001u);
  EXPECT_EQ(paths.path(long_id), long_path);
  EXPECT_EQ(paths.path(20000), "/data/f19999");
  EXPECT_EQ(paths.Intern("/data/f123").id, 124u);
}

TEST(PathTableTest, ThreadsInterningTheSamePathsAgree) {
  PathTable paths;
  std::vector<std::vector<uint32_t>> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5000; ++i) ids[t].push_back(paths.Intern("/d/" + std::to_string(i)).id);
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(paths.size(), 5000u);
  for (int t = 1; t < 4; ++t) EXPECT_EQ(ids[t], ids[0]);
  for (int i = 0; i < 5000; ++i) EXPECT_EQ(paths.path(ids[0][i]), "/d/" + std::to_string(i));
}

}  // namespace
}  // namespace iotap::analyzer
