// The smallest HTTP/1.1 server `iotap top --listen` needs: GET /metrics
// answers the latest metrics in the OpenMetrics text format, any other path
// 404, any other method 405; one connection at a time, closed after each
// answer, on a thread of its own.
//
//   absl::StatusOr<std::unique_ptr<MetricsServer>> server = MetricsServer::Start("127.0.0.1:9464");
//   (*server)->Publish(TopMetrics(figures, MetricsFormat::kOpenMetrics));
//   // curl http://127.0.0.1:9464/metrics
//   server->reset();  // stops the thread

#ifndef IOTAP_ANALYZER_CLI_METRICS_SERVER_H_
#define IOTAP_ANALYZER_CLI_METRICS_SERVER_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace iotap::cli {

inline constexpr char kOpenMetricsType[] =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

class MetricsServer {
 public:
  // Listens on ADDR:PORT (an IPv4 address or a host name; port 0: any free
  // port, see port()).
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(const std::string& address);
  ~MetricsServer();

  // What GET /metrics answers from now on.
  void Publish(std::string metrics);
  int port() const { return port_; }

 private:
  MetricsServer(int fd, int port);
  void Serve();
  void Answer(int client);

  int fd_;
  int port_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::string metrics_;  // under mu_
  std::thread thread_;
};

}  // namespace iotap::cli

#endif  // IOTAP_ANALYZER_CLI_METRICS_SERVER_H_
