#include "analyzer/live/session_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

class SessionFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("iotap-session-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(SessionFileTest, StartedThenEnded) {
  absl::StatusOr<SessionFile> s = StartSession(dir_, "abc123");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->path(), dir_ + "/abc123.iotap-session");
  struct stat st;
  ASSERT_EQ(stat(s->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  SessionState running = ReadSessionFile(s->path());
  EXPECT_TRUE(running.started);
  EXPECT_FALSE(running.ended);
  EXPECT_EQ(running.pid, getpid());
  ASSERT_TRUE(s->End(137).ok());
  SessionState ended = ReadSessionFile(s->path());
  EXPECT_TRUE(ended.ended);
  EXPECT_EQ(ended.status, 137);
}

TEST_F(SessionFileTest, NeitherOverwrittenNorFollowedThroughALink) {
  ASSERT_TRUE(StartSession(dir_, "same").ok());
  EXPECT_FALSE(StartSession(dir_, "same").ok());
  std::filesystem::create_symlink(dir_ + "/target", dir_ + "/link.iotap-session");
  EXPECT_FALSE(StartSession(dir_, "link").ok());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/target"));
}

TEST_F(SessionFileTest, AHalfWrittenLineSaysNothing) {
  std::ofstream(dir_ + "/x.iotap-session") << "started 12 host 1700000000\nended 0 17";
  SessionState s = ReadSessionFile(dir_ + "/x.iotap-session");
  EXPECT_TRUE(s.started);
  EXPECT_FALSE(s.ended);
  EXPECT_FALSE(ReadSessionFile(dir_ + "/missing.iotap-session").started);
}

}  // namespace
}  // namespace iotap::analyzer
