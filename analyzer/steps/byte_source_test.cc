#include "analyzer/steps/byte_source.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/testing/test_files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::HasSubstr;

// Files for one test, removed at its end.
class ByteSourceTest : public ::testing::Test {
 protected:
  ~ByteSourceTest() override {
    for (const std::string& path : written_) std::filesystem::remove(path);
  }
  std::string Write(const std::string& name, const std::string& bytes) {
    std::string path =
        ::testing::TempDir() + "iotap-byte-source-" + std::to_string(getpid()) + "-" + name;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    written_.push_back(path);
    return path;
  }

 private:
  std::vector<std::string> written_;
};

// `data` gzipped as tightly as zlib can.
std::string Compress(const std::string& data) { return testing::Gzip(data, 9); }

// Everything the source gives, and the error that ended it (if any).
std::pair<std::string, absl::Status> Drain(ByteSource* in, size_t chunk) {
  std::string all(chunk, '\0'), got;
  for (;;) {
    absl::StatusOr<size_t> n = in->Read(all.data(), chunk);
    if (!n.ok()) return {got, n.status()};
    if (*n == 0) return {got, absl::OkStatus()};
    got.append(all.data(), *n);
  }
}

std::string Sample() {
  std::string s;
  for (int i = 0; i < 20000; ++i) s += "line " + std::to_string(i) + " of the sample\n";
  return s;
}

TEST_F(ByteSourceTest, PlainAndGzipGiveTheSameBytes) {
  std::string data = Sample();
  for (bool gz : {false, true}) {
    auto in = ByteSource::Open(Write(gz ? "sample.gz" : "sample", gz ? Compress(data) : data));
    ASSERT_TRUE(in.ok()) << in.status();
    EXPECT_EQ((*in)->compressed(), gz);
    auto [got, status] = Drain(in->get(), 4096);
    EXPECT_TRUE(status.ok()) << status;
    EXPECT_EQ(got, data);
    EXPECT_EQ((*in)->offset(), data.size());
  }
}

TEST_F(ByteSourceTest, CutGzipDeliversItsStartThenSaysSo) {
  std::string data = Sample();
  std::string gz = Compress(data);
  std::string path = Write("cut.gz", gz.substr(0, gz.size() / 2));
  auto in = ByteSource::Open(path);
  ASSERT_TRUE(in.ok());
  auto [got, status] = Drain(in->get(), 4096);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr(path + ": the gzip stream is cut short after " +
                        std::to_string(got.size()) + " bytes of uncompressed data"));
  EXPECT_EQ(got, data.substr(0, got.size()));
  EXPECT_EQ(got.size(), (*in)->offset());
}

TEST_F(ByteSourceTest, DamagedGzipIsAnError) {
  std::string gz = Compress(Sample());
  gz[gz.size() / 2] ^= 0x55;
  std::string path = Write("damaged.gz", gz);
  auto in = ByteSource::Open(path);
  ASSERT_TRUE(in.ok());
  auto [got, status] = Drain(in->get(), 4096);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr(path + ": gzip data unreadable after "));
}

TEST_F(ByteSourceTest, MissingFile) {
  auto in = ByteSource::Open("/nonexistent/iotap/file");
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().message(),
            "/nonexistent/iotap/file: cannot open: No such file or directory");
}

}  // namespace
}  // namespace iotap::analyzer
