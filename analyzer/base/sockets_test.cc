#include "analyzer/base/sockets.h"

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(SocketsTest, SplitHostPort) {
  std::string host, port;
  ASSERT_TRUE(SplitHostPort("node01:29511", &host, &port));
  EXPECT_EQ(host, "node01");
  EXPECT_EQ(port, "29511");
  ASSERT_TRUE(SplitHostPort("[::1]:9464", &host, &port));
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, "9464");
  ASSERT_TRUE(SplitHostPort(":9464", &host, &port));
  EXPECT_EQ(host, "");
  EXPECT_EQ(port, "9464");
  EXPECT_FALSE(SplitHostPort("node01", &host, &port));
  EXPECT_FALSE(SplitHostPort("node01:", &host, &port));
  EXPECT_FALSE(SplitHostPort("[::1:9464", &host, &port));
}

TEST(SocketsTest, SendAllSendsEveryByteOrSaysNo) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  const std::string data(100000, 'x');  // more than one send may take
  std::string got;
  bool sent = false;
  {
    // The reader empties the socket while the writer sends.
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(pair[1]);
      _exit(SendAll(pair[0], data) ? 0 : 1);
    }
    close(pair[0]);
    char buf[4096];
    for (ssize_t n; (n = read(pair[1], buf, sizeof(buf))) > 0;) got.append(buf, n);
    int status = 0;
    waitpid(child, &status, 0);
    sent = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  EXPECT_TRUE(sent);
  EXPECT_EQ(got.size(), data.size());
  close(pair[1]);
  // A peer that is gone: false, and no SIGPIPE.
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  close(pair[1]);
  EXPECT_FALSE(SendAll(pair[0], "t\n"));
  close(pair[0]);
}

}  // namespace
}  // namespace iotap::analyzer
