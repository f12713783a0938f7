// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <string>

#include "analyzer/base/json_writer.h"
#include "analyzer/base/numbers.h"
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
}

}  // namespace
}  // namespace iotap::analyzer
