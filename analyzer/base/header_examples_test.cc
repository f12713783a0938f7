// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/base/json_writer.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/sockets.h"
#include "analyzer/base/sort_by_text.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(HeaderExamplesTest, JsonWriter) {
  const std::string path = "/data/<a>\x01.bin";
  // json_writer.h
  JsonWriter j;
  j.BeginObject();
  j.Key("events"); j.Uint(42);
  j.Key("path");   j.String(path);   // any bytes: see below
  j.EndObject();
  std::string out = j.Take();

  EXPECT_EQ(out, "{\n  \"events\": 42,\n  \"path\": \"/data/\\u003ca\\u003e\\u0001.bin\"\n}");
}

TEST(HeaderExamplesTest, Numbers) {
  // numbers.h
  EXPECT_EQ(Median({0.25, 0.5, 0.125}), 0.25);
  EXPECT_EQ(Seconds(1'500'000), 0.0015);  // nanoseconds to seconds
  EXPECT_EQ(Ratio(3, 0), 0);              // a share or a mean of nothing
  int64_t read_ns = INT64_MAX - 1;
  AddTo(&read_ns, int64_t{5});            // stops at INT64_MAX
  EXPECT_EQ(read_ns, INT64_MAX);
}

TEST(HeaderExamplesTest, Sockets) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  const int fd = pair[0];
  // sockets.h
  std::string host, port;
  if (SplitHostPort("[::1]:9464", &host, &port)) {
  }
  bool sent = SendAll(fd, "t\n");

  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, "9464");
  EXPECT_TRUE(sent);
  char got[2];
  EXPECT_EQ(read(pair[1], got, 2), 2);
  close(pair[0]);
  close(pair[1]);
}

TEST(HeaderExamplesTest, SortByText) {
  // sort_by_text.h
  struct Row { uint64_t bytes; std::string_view path; };
  std::vector<Row> rows = {{5, "/data/b"}, {9, "/data/c"}, {5, "/data/a"}};
  SortByKeyThenText(rows, [](const Row& r) { return ~r.bytes; },  // most first
                    [](const Row& r) { return r.path; });

  EXPECT_EQ(rows[0].path, "/data/c");
  EXPECT_EQ(rows[1].path, "/data/a");
  EXPECT_EQ(rows[2].path, "/data/b");
}

}  // namespace
}  // namespace iotap::analyzer
