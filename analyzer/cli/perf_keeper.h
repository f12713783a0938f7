// PerfKeeper: keeps the kernel's per-task perf scheduling hooks switched on
// while `iotap run` runs, so that the job's processes open their page-fault
// samplers (interpose/mapped/) in microseconds instead of milliseconds.
//
// Linux switches those hooks on when the first perf event attached to a task
// is created anywhere in the system, and waits for an RCU grace period while
// doing so (kernel/events/core.c, account_event: synchronize_rcu); it
// switches them off again about a second after the last such event is gone.
// Measured on the development VM (Linux 6.18): the first perf_event_open of a
// page-fault event took 5.7 to 13 ms, the next ones 0.01 to 0.04 ms. A
// DataLoader worker opens its samplers on the thread that maps its first
// data file, so every epoch's fresh workers paid that wait before their first
// batch. One disabled dummy event attached to `iotap run` itself keeps the
// hooks on for the whole session: it counts nothing and is never enabled.
//
//   PerfKeeper keeper = PerfKeeper::ForLayers(layers_option);  // before fork
//   ... run the job ...                                       // closes at scope end
//
// The descriptor is close-on-exec, so the job never sees it. Where perf
// events are refused (perf_event_paranoid, seccomp) nothing happens: the
// job's samplers are refused as well, and fall back to counters.

#ifndef IOTAP_ANALYZER_CLI_PERF_KEEPER_H_
#define IOTAP_ANALYZER_CLI_PERF_KEEPER_H_

#include <string>

namespace iotap::cli {

class PerfKeeper {
 public:
  // Opens the event when `layers` (the value of --layers; empty: every
  // layer) includes the mapped layer, whose samplers need the hooks.
  static PerfKeeper ForLayers(const std::string& layers);

  PerfKeeper() = default;
  PerfKeeper(PerfKeeper&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  PerfKeeper& operator=(PerfKeeper&&) = delete;
  PerfKeeper(const PerfKeeper&) = delete;
  ~PerfKeeper();

  // Whether the event is open.
  bool active() const { return fd_ >= 0; }

 private:
  explicit PerfKeeper(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace iotap::cli

#endif  // IOTAP_ANALYZER_CLI_PERF_KEEPER_H_
