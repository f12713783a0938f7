#include "analyzer/clocks/clock_exchanger.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "analyzer/base/sockets.h"
#include "analyzer/clocks/clock_exchanges.h"

namespace iotap::analyzer {

namespace {

constexpr int kFirstBurst = 16;
constexpr int kBurst = 8;
constexpr int kLastBurst = 16;
constexpr double kFirstIntervalS = 1;
constexpr double kMaxIntervalS = 64;
constexpr int kAnswerTimeoutMs = 2000;
constexpr int kConnectTimeoutMs = 2000;
constexpr double kRetryS = 0.25;
constexpr size_t kMaxLine = 256;
constexpr size_t kMaxClients = 4096;

int64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// HOST:PORT with both given: every instance must name the same host.
bool SplitAddress(const std::string& address, std::string* host, std::string* port) {
  int p = 0;
  return SplitHostPort(address, host, port) && !host->empty() && absl::SimpleAtoi(*port, &p) &&
         p > 0 && p <= 65535;
}

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list != nullptr) freeaddrinfo(list);
  }
};

// One line (without its newline) from `fd` within `timeout_ms`, what came
// after it left in `buf`.
bool ReadLine(int fd, std::string* buf, int timeout_ms, std::string* line) {
  const int64_t deadline = MonotonicNs() + int64_t{timeout_ms} * 1'000'000;
  for (;;) {
    size_t nl = buf->find('\n');
    if (nl != std::string::npos) {
      *line = buf->substr(0, nl);
      buf->erase(0, nl + 1);
      return true;
    }
    if (buf->size() > kMaxLine) return false;
    int64_t left_ms = (deadline - MonotonicNs()) / 1'000'000;
    if (left_ms <= 0) return false;
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, static_cast<int>(left_ms));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    char tmp[512];
    ssize_t n = recv(fd, tmp, sizeof(tmp), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buf->append(tmp, static_cast<size_t>(n));
  }
}

// A host name as a file name's part.
std::string FileSafe(const std::string& host) {
  std::string out;
  for (char c : host.substr(0, 64)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '-' || c == '_';
    out.push_back(ok ? c : '_');
  }
  return out.empty() ? "host" : out;
}

// A host name on one line of the file.
std::string OneLine(const std::string& s) {
  std::string out = s;
  std::replace(out.begin(), out.end(), '\n', '?');
  std::replace(out.begin(), out.end(), '\r', '?');
  return out;
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Connects to one address within kConnectTimeoutMs; -1 if not.
int ConnectTo(const addrinfo* ai) {
  int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) {
      close(fd);
      return -1;
    }
    struct pollfd p = {fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof(err);
    if (poll(&p, 1, kConnectTimeoutMs) != 1 ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close(fd);
      return -1;
    }
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  SetNoDelay(fd);
  return fd;
}

}  // namespace

absl::StatusOr<std::string> SlurmClockSyncAddress(const char* nodelist, const char* job_id) {
  uint64_t id = 0;
  if (nodelist == nullptr || *nodelist == '\0' || job_id == nullptr ||
      !absl::SimpleAtoi(job_id, &id)) {
    return absl::FailedPreconditionError(
        "--clock-sync slurm: not in a Slurm job (SLURM_JOB_NODELIST and SLURM_JOB_ID unset)");
  }
  // The first name of the list: its prefix, then the first number of its
  // bracket, if any ("gpu[017-020,031]" -> "gpu017").
  std::string list = nodelist;
  size_t end = list.find_first_of(",[");
  std::string first = list.substr(0, end);
  if (end != std::string::npos && list[end] == '[') {
    size_t stop = list.find_first_of("-,]", end + 1);
    if (stop == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--clock-sync slurm: cannot read SLURM_JOB_NODELIST \"", list, "\""));
    }
    first += list.substr(end + 1, stop - end - 1);
  }
  if (first.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--clock-sync slurm: cannot read SLURM_JOB_NODELIST \"", list, "\""));
  }
  return absl::StrCat(first, ":", 24000 + id % 1000);
}

absl::StatusOr<std::unique_ptr<ClockExchanger>> ClockExchanger::Start(
    const ClockSyncOptions& options) {
  std::unique_ptr<ClockExchanger> x(new ClockExchanger(options));
  if (!SplitAddress(options.address, &x->peer_, &x->port_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--clock-sync ", options.address, ": expected HOST:PORT"));
  }
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  AddrInfo found;
  if (int e = getaddrinfo(x->peer_.c_str(), x->port_.c_str(), &hints, &found.list); e != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--clock-sync ", options.address, ": ", gai_strerror(e)));
  }
  // Serve if the address is ours and free.
  for (const addrinfo* ai = found.list; ai != nullptr && x->listen_fd_ < 0; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 128) == 0) {
      x->listen_fd_ = fd;
    } else {
      close(fd);
    }
  }
  if (x->serving()) {
    if (pipe2(x->wake_, O_CLOEXEC | O_NONBLOCK) != 0) {
      return absl::InternalError(absl::StrCat("--clock-sync: pipe: ", std::strerror(errno)));
    }
  } else {
    std::string path = absl::StrCat(options.directory, "/clock-", FileSafe(options.host), "-",
                                    getpid(), kClockExchangeSuffix);
    x->file_fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (x->file_fd_ < 0) {
      return absl::PermissionDeniedError(
          absl::StrCat("--clock-sync: cannot create ", path, ": ", std::strerror(errno)));
    }
    std::string header =
        absl::StrCat(kClockExchangeMagic, "\nhost ", OneLine(options.host), "\n");
    if (write(x->file_fd_, header.data(), header.size()) != static_cast<ssize_t>(header.size())) {
      return absl::ResourceExhaustedError(
          absl::StrCat("--clock-sync: cannot write ", path, ": ", std::strerror(errno)));
    }
  }
  // The thread takes no signal: those sent to `iotap run` are the job's.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  ClockExchanger* self = x.get();
  x->thread_ = std::thread([self] { self->serving() ? self->Serve() : self->Ask(); });
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return x;
}

ClockExchanger::~ClockExchanger() {
  Finish(0);
  if (listen_fd_ >= 0) close(listen_fd_);
  for (int fd : wake_) {
    if (fd >= 0) close(fd);
  }
  if (file_fd_ >= 0) close(file_fd_);
}

void ClockExchanger::Finish(double linger_s) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!finishing_) linger_s_ = linger_s;
    finishing_ = true;
  }
  cv_.notify_all();
  if (wake_[1] >= 0) {
    char c = 'x';
    (void)!write(wake_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
}

int ClockExchanger::exchanges() const {
  std::lock_guard<std::mutex> lock(mu_);
  return exchanges_;
}

int64_t ClockExchanger::Now() const {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec + options_.clock_offset_ns;
}

void ClockExchanger::Serve() {
  struct Client {
    int fd;
    std::string buf;
  };
  std::vector<Client> clients;
  bool finishing = false;
  int64_t deadline = 0;
  const std::string hello = absl::StrCat(kClockExchangeMagic, " ", OneLine(options_.host), "\n");
  for (;;) {
    if (!finishing) {
      std::lock_guard<std::mutex> lock(mu_);
      if (finishing_) {
        finishing = true;
        deadline = MonotonicNs() + static_cast<int64_t>(linger_s_ * 1e9);
      }
    }
    if (finishing && (clients.empty() || MonotonicNs() >= deadline)) break;
    std::vector<struct pollfd> fds = {{wake_[0], POLLIN, 0}, {finishing ? -1 : listen_fd_, POLLIN, 0}};
    for (const Client& c : clients) fds.push_back({c.fd, POLLIN, 0});
    int timeout = finishing ? static_cast<int>(std::max<int64_t>(1, (deadline - MonotonicNs()) / 1'000'000)) : -1;
    int n = poll(fds.data(), fds.size(), timeout);
    // The moment a question arrived: as early as can be read.
    const int64_t received = Now();
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[0].revents != 0) {
      char drain[16];
      while (read(wake_[0], drain, sizeof(drain)) > 0) {
      }
    }
    if (fds[1].revents & POLLIN) {
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd >= 0 && clients.size() < kMaxClients) {
        SetNoDelay(fd);
        clients.push_back({fd, ""});
      } else if (fd >= 0) {
        close(fd);
      }
    }
    for (size_t i = 0; i + 2 < fds.size(); ++i) {
      Client& c = clients[i];
      if (fds[i + 2].revents == 0) continue;
      char tmp[512];
      ssize_t got = recv(c.fd, tmp, sizeof(tmp), MSG_DONTWAIT);
      bool keep = got > 0 || (got < 0 && (errno == EINTR || errno == EAGAIN));
      if (got > 0) c.buf.append(tmp, static_cast<size_t>(got));
      for (size_t nl; keep && (nl = c.buf.find('\n')) != std::string::npos;) {
        std::string line = c.buf.substr(0, nl);
        c.buf.erase(0, nl + 1);
        if (line == "t") {
          keep = SendAll(c.fd, absl::StrCat(received, " ", Now(), "\n"));
        } else if (absl::StartsWith(line, "hello ")) {
          keep = SendAll(c.fd, hello);
        } else {
          keep = false;  // "bye", or not our protocol
        }
      }
      if (c.buf.size() > kMaxLine) keep = false;
      if (!keep) {
        close(c.fd);
        c.fd = -1;
      }
    }
    clients.erase(std::remove_if(clients.begin(), clients.end(),
                                 [](const Client& c) { return c.fd < 0; }),
                  clients.end());
  }
  for (const Client& c : clients) close(c.fd);
}

void ClockExchanger::Ask() {
  addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  AddrInfo found;
  if (getaddrinfo(peer_.c_str(), port_.c_str(), &hints, &found.list) != 0) return;
  int fd = -1;
  std::string buf;
  bool named = false;  // the reference host is in the file
  auto reach = [&]() {
    for (const addrinfo* ai = found.list; ai != nullptr && fd < 0; ai = ai->ai_next) {
      fd = ConnectTo(ai);
      if (fd < 0) continue;
      std::string line;
      buf.clear();
      if (!SendAll(fd, absl::StrCat("hello ", OneLine(options_.host), "\n")) ||
          !ReadLine(fd, &buf, kAnswerTimeoutMs, &line) ||
          !absl::StartsWith(line, absl::StrCat(kClockExchangeMagic, " "))) {
        close(fd);
        fd = -1;
        continue;
      }
      if (!named) {
        std::string name = absl::StrCat(
            "reference ", line.substr(std::strlen(kClockExchangeMagic) + 1), "\n");
        named = write(file_fd_, name.data(), name.size()) == static_cast<ssize_t>(name.size());
        if (!named) {
          close(fd);
          fd = -1;
        }
      }
    }
    return fd >= 0;
  };
  auto burst = [&](int count) {
    for (int i = 0; i < count; ++i) {
      if (fd < 0 && !reach()) return;
      ClockExchange x;
      std::string line;
      x.t1 = Now();
      bool ok = SendAll(fd, "t\n") && ReadLine(fd, &buf, kAnswerTimeoutMs, &line);
      x.t4 = Now();
      std::vector<absl::string_view> f = absl::StrSplit(line, ' ');
      if (!ok || f.size() != 2 || !absl::SimpleAtoi(f[0], &x.t2) ||
          !absl::SimpleAtoi(f[1], &x.t3)) {
        close(fd);
        fd = -1;
        return;
      }
      std::string out = ClockExchangeLine(x);
      if (write(file_fd_, out.data(), out.size()) != static_cast<ssize_t>(out.size())) return;
      std::lock_guard<std::mutex> lock(mu_);
      ++exchanges_;
    }
  };
  // Waits `seconds` or until Finish; true when finishing.
  auto wait = [&](double seconds) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return finishing_; });
  };
  // Reach the server: it may start after us.
  const int64_t give_up = MonotonicNs() + static_cast<int64_t>(options_.connect_timeout_s * 1e9);
  bool finishing = false;
  while (!reach()) {
    if (MonotonicNs() >= give_up || (finishing = wait(kRetryS))) break;
  }
  if (fd >= 0) {
    burst(kFirstBurst);
    for (double interval = kFirstIntervalS; !(finishing = wait(interval));
         interval = std::min(interval * 2, kMaxIntervalS)) {
      burst(kBurst);
    }
  }
  // The job's end: one more burst (one more try to connect, if need be).
  if (finishing) {
    burst(kLastBurst);
    if (fd >= 0) SendAll(fd, "bye\n");
  }
  if (fd >= 0) close(fd);
}

}  // namespace iotap::analyzer
