#include "interpose/core/strings.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::interpose {
namespace {

std::string Absolute(int dirfd, const char* path) {
  char out[PATH_MAX];
  size_t n = AbsolutePath(dirfd, path, out, sizeof(out));
  return std::string(out, n);
}

TEST(AbsolutePathTest, NormalisesLexically) {
  EXPECT_EQ(Absolute(AT_FDCWD, "/a/./b//c/../d"), "/a/b/d");
  EXPECT_EQ(Absolute(AT_FDCWD, "/a/b/"), "/a/b");
  EXPECT_EQ(Absolute(AT_FDCWD, "/../../x"), "/x");
  EXPECT_EQ(Absolute(AT_FDCWD, "/a/.."), "/");
  EXPECT_EQ(Absolute(AT_FDCWD, "//"), "/");
  EXPECT_EQ(Absolute(AT_FDCWD, nullptr), "");
}

TEST(AbsolutePathTest, RelativeToTheWorkingDirectoryOrADescriptor) {
  char cwd[PATH_MAX];
  ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
  InvalidateCwd();
  std::string base = std::string(cwd) == "/" ? "" : cwd;
  EXPECT_EQ(Absolute(AT_FDCWD, "x/../y.bin"), base + "/y.bin");

  char real_tmp[PATH_MAX];
  ASSERT_NE(realpath("/tmp", real_tmp), nullptr);
  int dir = open("/tmp", O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir, 0);
  EXPECT_EQ(Absolute(dir, "./data/../f.h5"), std::string(real_tmp) + "/f.h5");
  close(dir);
}

// A path that does not fit the output is refused (InternPath then interns
// it as given).
TEST(AbsolutePathTest, TooLongForTheOutput) {
  char out[8];
  EXPECT_EQ(AbsolutePath(AT_FDCWD, "/abcdefgh", out, sizeof(out)), 0u);
  EXPECT_EQ(AbsolutePath(AT_FDCWD, "/abcdef", out, sizeof(out)), 7u);
  EXPECT_STREQ(out, "/abcdef");
}

struct Taken {
  std::vector<StringRecord> records;
  std::vector<std::string> texts;
  size_t accept = SIZE_MAX;  // how many to take before refusing
};

bool Take(const StringRecord& s, void* context) {
  Taken& t = *static_cast<Taken*>(context);
  if (t.records.size() == t.accept) return false;
  t.records.push_back(s);
  t.texts.emplace_back(reinterpret_cast<const char*>(s.bytes), s.size);
  return true;
}

TEST(InternStringTest, OneIdPerStringAndKindTakenOnceInOrder) {
  Taken before;
  TakePendingStrings(Take, &before);  // whatever earlier tests interned

  uint32_t a = InternString("/data/a.bin", 11, kKindPath);
  uint32_t b = InternString("/data/b.bin", 11, kKindPath);
  uint32_t a_again = InternString("/data/a.bin", 11, kKindPath);
  uint32_t a_mark = InternString("/data/a.bin", 11, kKindMark);
  EXPECT_NE(a, 0u);
  EXPECT_EQ(b, a + 1);
  EXPECT_EQ(a_again, a);
  EXPECT_EQ(a_mark, a + 2);
  EXPECT_EQ(InternPath(AT_FDCWD, "/data/x/../b.bin"), b);

  // A taker that refuses leaves the rest pending.
  Taken first;
  first.accept = 1;
  EXPECT_FALSE(TakePendingStrings(Take, &first));
  ASSERT_EQ(first.records.size(), 1u);
  EXPECT_EQ(first.records[0].id, a);
  EXPECT_EQ(first.texts[0], "/data/a.bin");

  Taken rest;
  EXPECT_TRUE(TakePendingStrings(Take, &rest));
  ASSERT_EQ(rest.records.size(), 2u);
  EXPECT_EQ(rest.records[0].id, b);
  EXPECT_EQ(rest.records[0].kind, kKindPath);
  EXPECT_EQ(rest.records[1].id, a_mark);
  EXPECT_EQ(rest.records[1].kind, kKindMark);
  EXPECT_EQ(rest.texts[1], "/data/a.bin");

  Taken none;
  EXPECT_TRUE(TakePendingStrings(Take, &none));
  EXPECT_TRUE(none.records.empty());
}

}  // namespace
}  // namespace iotap::interpose
