#include "analyzer/cli/metrics_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzer/base/sockets.h"

namespace iotap::cli {

namespace {

constexpr size_t kMaxRequest = 8192;

std::string Response(const char* status, const char* type, const std::string& body) {
  return absl::StrCat("HTTP/1.1 ", status, "\r\nContent-Type: ", type,
                      "\r\nContent-Length: ", body.size(), "\r\nConnection: close\r\n\r\n", body);
}

}  // namespace

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& address) {
  std::string host, port;
  if (!analyzer::SplitHostPort(address, &host, &port)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen takes ADDR:PORT (e.g. 127.0.0.1:9464), not '", address, "'"));
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return absl::InvalidArgumentError(absl::StrCat("--listen ", address, ": ", gai_strerror(rc)));
  }
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  bool ok = fd >= 0 && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == 0 &&
            bind(fd, found->ai_addr, found->ai_addrlen) == 0 && listen(fd, 16) == 0;
  int saved = errno;
  freeaddrinfo(found);
  if (!ok) {
    if (fd >= 0) close(fd);
    return absl::UnavailableError(
        absl::StrCat("--listen ", address, ": cannot listen: ", std::strerror(saved)));
  }
  sockaddr_in bound{};
  socklen_t len = sizeof(bound);
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &len);
  return std::unique_ptr<MetricsServer>(new MetricsServer(fd, ntohs(bound.sin_port)));
}

MetricsServer::MetricsServer(int fd, int port) : fd_(fd), port_(port) {
  thread_ = std::thread([this] { Serve(); });
}

MetricsServer::~MetricsServer() {
  stop_ = true;
  thread_.join();
  close(fd_);
}

void MetricsServer::Publish(std::string metrics) {
  std::lock_guard<std::mutex> lock(mu_);
  metrics_ = std::move(metrics);
}

void MetricsServer::Serve() {
  while (!stop_) {
    // Woken every 200 ms to notice stop_.
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    int client = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    timeval timeout{2, 0};  // a client that sends nothing does not hold the server
    setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
    setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof(timeout));
    Answer(client);
    close(client);
  }
}

void MetricsServer::Answer(int client) {
  std::string request;
  char buf[1024];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequest) {
    ssize_t n = recv(client, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    request.append(buf, static_cast<size_t>(n));
  }
  std::vector<std::string> words = absl::StrSplit(request.substr(0, request.find("\r\n")), ' ');
  if (words.size() != 3 || !absl::StartsWith(words[2], "HTTP/1.")) {
    analyzer::SendAll(client, Response("400 Bad Request", "text/plain", "bad request\n"));
    return;
  }
  if (words[0] != "GET") {
    analyzer::SendAll(client, Response("405 Method Not Allowed", "text/plain", "only GET\n"));
    return;
  }
  if (words[1] != "/metrics") {
    analyzer::SendAll(client, Response("404 Not Found", "text/plain", "iotap serves /metrics only\n"));
    return;
  }
  std::string body;
  {
    std::lock_guard<std::mutex> lock(mu_);
    body = metrics_.empty() ? "# EOF\n" : metrics_;
  }
  analyzer::SendAll(client, Response("200 OK", kOpenMetricsType, body));
}

}  // namespace iotap::cli
