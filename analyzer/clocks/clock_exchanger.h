// `iotap run --clock-sync HOST:PORT`: the time exchanges between the
// instances of `iotap run` on a job's nodes (clock_exchanges.h says what they
// measure and how the analysis uses them).
//
// Every instance is given the same address. The one that can listen there
// (the instance on HOST; of several there, the first) serves: it answers
// each "t" line with its wall clock's reading at receipt and at answer. Every
// other instance connects, retrying while the server is not up yet, and
// asks in bursts of 8 exchanges: at the start (16), 1, 2, 4 ... 64 s later,
// then every 64 s, and at the job's end (16), writing each exchange to its
// file in the trace directory as it completes. All of it runs on one thread
// of `iotap run`, beside the job, never in the job's processes; a failure
// (no server, a lost connection, a full disk) costs anchors, never the job.
//
//   ClockSyncOptions o{.address = address, .directory = dir, .host = host};
//   absl::StatusOr<std::unique_ptr<ClockExchanger>> x = ClockExchanger::Start(o);
//   ... the job runs ...
//   (*x)->Finish(/*linger_s=*/10);

#ifndef IOTAP_ANALYZER_CLOCKS_CLOCK_EXCHANGER_H_
#define IOTAP_ANALYZER_CLOCKS_CLOCK_EXCHANGER_H_

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace iotap::analyzer {

struct ClockSyncOptions {
  std::string address;    // HOST:PORT, or [IPv6]:PORT
  std::string directory;  // the trace directory
  std::string host;       // this host's name, as its traces give it
  // Added to every reading (the test-only IOTAP_TEST_CLOCK_OFFSET_NS, which
  // the shim adds to the traces' wall clock alike).
  int64_t clock_offset_ns = 0;
  // How long an asking instance keeps trying to reach the server.
  double connect_timeout_s = 120;
};

// `--clock-sync slurm`: the first node of the Slurm job (SLURM_JOB_NODELIST,
// "gpu[017-020,031],cpu4" names gpu017), port 24000 + SLURM_JOB_ID % 1000,
// so that jobs sharing a node do not meet. An error says what is missing.
//   SlurmClockSyncAddress("gpu[017-020]", "123456")  // "gpu017:24456"
absl::StatusOr<std::string> SlurmClockSyncAddress(const char* nodelist, const char* job_id);

class ClockExchanger {
 public:
  // Listens on `address` or, when another process already does or the
  // address is not this host's, starts asking it. An error means neither
  // could start (a bad address, a refused port, no file in the directory).
  static absl::StatusOr<std::unique_ptr<ClockExchanger>> Start(const ClockSyncOptions& options);

  ~ClockExchanger();
  ClockExchanger(const ClockExchanger&) = delete;
  ClockExchanger& operator=(const ClockExchanger&) = delete;

  // The job has ended. Asking: the last burst, then goodbye. Serving: keeps
  // answering until every asking instance said goodbye, at most `linger_s`.
  void Finish(double linger_s);

  bool serving() const { return listen_fd_ >= 0; }
  // Exchanges written so far (asking side).
  int exchanges() const;

 private:
  explicit ClockExchanger(const ClockSyncOptions& options) : options_(options) {}
  int64_t Now() const;
  void Serve();
  void Ask();

  ClockSyncOptions options_;
  std::string port_, peer_;  // the address, split
  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: Finish wakes the serving thread
  int file_fd_ = -1;        // the asking side's exchange file
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool finishing_ = false;
  double linger_s_ = 0;
  int exchanges_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_CLOCKS_CLOCK_EXCHANGER_H_
