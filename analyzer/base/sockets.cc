#include "analyzer/base/sockets.h"

#include <sys/socket.h>

#include <cerrno>

namespace iotap::analyzer {

bool SplitHostPort(const std::string& address, std::string* host, std::string* port) {
  size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) return false;
  *host = address.substr(0, colon);
  *port = address.substr(colon + 1);
  if (!host->empty() && host->front() == '[') {
    if (host->size() < 3 || host->back() != ']') return false;
    *host = host->substr(1, host->size() - 2);
  }
  return true;
}

bool SendAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace iotap::analyzer
