#include "analyzer/base/sort_by_text.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

struct Row {
  uint64_t key;
  std::string text;
  bool operator==(const Row& o) const { return key == o.key && text == o.text; }
};

// The order SortByKeyThenText promises: key, then text as string_view orders.
std::vector<Row> Expected(std::vector<Row> rows) {
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    if (a.key != b.key) return a.key < b.key;
    return std::string_view(a.text) < std::string_view(b.text);
  });
  return rows;
}

std::vector<Row> Sorted(std::vector<Row> rows) {
  SortByKeyThenText(
      rows, [](const Row& r) { return r.key; },
      [](const Row& r) { return std::string_view(r.text); });
  return rows;
}

TEST(SortByKeyThenTextTest, MostBytesFirstThenByPath) {
  struct File {
    uint64_t bytes;
    std::string_view path;
  };
  std::vector<File> files = {{10, "/data/b"}, {30, "/data/z"}, {10, "/data/a"}, {0, "/dev/null"}};
  SortByKeyThenText(
      files, [](const File& f) { return ~f.bytes; }, [](const File& f) { return f.path; });
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0].path, "/data/z");
  EXPECT_EQ(files[1].path, "/data/a");
  EXPECT_EQ(files[2].path, "/data/b");
  EXPECT_EQ(files[3].path, "/dev/null");
}

TEST(SortByKeyThenTextTest, TextsThatSharePrefixesEndsAndOddBytes) {
  // Ties on the key among texts that differ only past a long shared
  // beginning, end inside one another's eight compared bytes, or hold NUL
  // and 0xff bytes, where zeros past a text's end must not make it equal to
  // a longer one.
  const std::string base = "/datasets/imagenet/train/n01440764/";
  std::vector<Row> rows = {
      {1, base + "a"},
      {1, base + "a" + std::string(1, '\0')},
      {1, base},
      {1, base + "a\xff"},
      {1, base + "ab"},
      {1, base + "a" + std::string(3, '\0') + "b"},
      {1, base + "abcdefghij"},
      {1, base + "abcdefghi"},
      {1, base + "abcdefgh"},
      {1, base + "abcdefgh" + std::string(1, '\0')},
      {0, "z"},
      {2, ""},
      {2, std::string(1, '\0')},
      {1, ""},
  };
  EXPECT_EQ(Sorted(rows), Expected(rows));
}

TEST(SortByKeyThenTextTest, AgreesWithAComparisonSortOnRandomRows) {
  std::mt19937_64 random(7);
  for (int round = 0; round < 50; ++round) {
    std::vector<Row> rows;
    // Short runs sorted by comparison, long ones by radix; few keys (many
    // ties) or keys that differ in any bit.
    const int n = static_cast<int>(random() % (round % 2 == 0 ? 300 : 3000));
    const bool few_keys = round % 3 != 0;
    for (int i = 0; i < n; ++i) {
      // Texts from a small alphabet with NULs, and shared beginnings of
      // several lengths.
      std::string text = std::string(random() % 3 * 9, '/');
      const int length = static_cast<int>(random() % 20);
      for (int k = 0; k < length; ++k) text += "ab\0\xff"[random() % 4];
      const uint64_t key = few_keys ? random() % 5 : random() >> (random() % 64);
      rows.push_back(Row{key, text});
    }
    ASSERT_EQ(Sorted(rows), Expected(rows)) << "round " << round;
  }
}

TEST(SortByKeyThenTextTest, EmptyAndSingle) {
  EXPECT_TRUE(Sorted({}).empty());
  std::vector<Row> one = {{3, "x"}};
  EXPECT_EQ(Sorted(one), one);
}

}  // namespace
}  // namespace iotap::analyzer
