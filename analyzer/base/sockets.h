// The little socket work two servers of `iotap` share (the metrics endpoint
// of `iotap top --listen`, the time exchanges of `iotap run --clock-sync`):
// an address given as HOST:PORT split in two, and a whole buffer sent.
//
//   std::string host, port;
//   if (SplitHostPort("[::1]:9464", &host, &port)) ...   // "::1", "9464"
//   bool sent = SendAll(fd, "t\n");

#ifndef IOTAP_ANALYZER_BASE_SOCKETS_H_
#define IOTAP_ANALYZER_BASE_SOCKETS_H_

#include <string>

namespace iotap::analyzer {

// Splits at the last colon; brackets around an IPv6 host are taken off. The
// host may be empty (":9464"); the port may not, and is not checked further
// (getaddrinfo says what is wrong with it).
bool SplitHostPort(const std::string& address, std::string* host, std::string* port);

// Sends all of `data` (retrying after EINTR, never raising SIGPIPE); false
// when the peer is gone or the socket failed.
bool SendAll(int fd, const std::string& data);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_SOCKETS_H_
