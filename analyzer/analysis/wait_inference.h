// Data waits inferred from the trace itself, for step sources that do not
// say when a step waited for its batch (TensorBoard, JSON lines with only
// `start` and `end`, profiler traces without DataLoader spans).
//
// Two stages, as the rest of the analysis:
// - WaitCollector, per trace file, while its events stream by (fed by
//   ProcessAnalyzer): the pipes and sockets the process used, and for a
//   process that may be a trainer what its threads waited on: "receptions"
//   (a thread receiving from a pipe or socket: its polls, selects, reads and
//   receives there, chained while they follow each other within
//   kChainGapNs), the main thread's blocking waits on semaphores, conditions
//   and epoll, and the main thread's own data-file I/O.
// - InferWaitWindows, per trainer once every file is read: which of those
//   were waits for data.
//
//   WaitCollector c(/*trainer=*/true, /*origin_ns=*/0, /*resolution_ns=*/1000);
//   c.OnProcess(process);
//   uint32_t channel = c.Channel("pipe:[12]");
//   c.OnWait(e, start, end, channel);                      // Layer::kWait
//   WaitEvidence ev = c.Finish();
//   ...
//   std::vector<InferredWindow> w = InferWaitWindows(input, steps);
//   std::vector<TimeWindow> waits = WaitsInside(MergeWindows(w), step.start_ns, step.end_ns);
//
// What counts as waiting for data (the README's "Inferred data waits"):
// - kLoaderQueue: a reception on the trainer's main thread from a channel a
//   loader of the trainer also used (a DataLoader's result queue is a pipe
//   every worker writes): from the start of the poll or read to the end of
//   the last reception chained to it (the batch's bytes, the descriptors of
//   its shared memory), and on through receptions that continue it (a fresh
//   socket per shared-memory storage, kHandshakeGapNs), and through the main
//   thread's calls on shared memory that follow within kChainGapNs (mapping
//   the batch's storages, unmapping the previous batch's as the loop drops
//   it). For a trainer with loaders, the main thread unmapping shared memory
//   elsewhere is such a wait too: the loop dropping the previous batch, when
//   the new one was already received (a DataLoader's batches arrive out of
//   order and wait for their turn).
// - kLoaderThread: the main thread blocked on a semaphore, condition or
//   epoll while another thread of the trainer received from a loader's
//   channel (pin_memory's thread, which hands batches on through a queue).
// - kThreadPipeline: for a trainer without loader processes, the main thread
//   blocked on a semaphore, condition or epoll while the trainer's data
//   files were read (its pipeline threads: tf.data, a thread pool).
// - kOwnLoading: for a trainer without loader processes, from a step's start
//   to the end of the main thread's last data-file I/O in the step: it
//   loads its batch itself (num_workers=0) before computing on it.

#ifndef IOTAP_ANALYZER_ANALYSIS_WAIT_INFERENCE_H_
#define IOTAP_ANALYZER_ANALYSIS_WAIT_INFERENCE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "analyzer/read/event.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/step_log.h"

namespace iotap::analyzer {

// Receptions closer than this to each other belong to one (a batch's bytes,
// then the handshake that passes its shared memory).
inline constexpr int64_t kChainGapNs = 1'000'000;
// A batch passed by descriptor: after reading it from the loaders' queue,
// the trainer connects to the worker over a new socket for each of its
// shared-memory storages. A fresh socket's first reception this soon after
// the thread's previous one continues it.
inline constexpr int64_t kHandshakeGapNs = 100'000'000;
// Distinct pipes and sockets kept per process: a trainer that passes shared
// memory by descriptor opens a socket per batch.
inline constexpr size_t kMaxChannels = 4096;

// A stretch of time a thread spent receiving from a pipe or socket.
struct Reception {
  int64_t start_ns = 0;  // wall clock
  int64_t end_ns = 0;
  uint32_t channel = 0;  // index in WaitEvidence::channels: what it began with
  bool main_thread = false;
  // It began on a socket never used before, within kHandshakeGapNs of the
  // end of the thread's previous reception (from `gap_start_ns`): the same
  // batch's storages, if that one was the batch.
  bool continues = false;
  int64_t gap_start_ns = 0;
};

// A stretch of the main thread's calls on shared memory (files under
// /dev/shm: a loader's batch storages): mapping, unmapping, closing.
struct MemoryWork {
  int64_t start_ns = 0;  // wall clock
  int64_t end_ns = 0;
  bool unmaps = false;   // it unmapped some
};

// Whether `path` names shared memory (POSIX shm_open's files, under
// /dev/shm): where DataLoader workers put their batches for the trainer.
bool IsSharedMemory(std::string_view path);

// What one trace file says about waiting.
struct WaitEvidence {
  // Waits shorter than this were not recorded; 0: the trace has no waits
  // layer (an older shim, or IOTAP_LAYERS without "waits").
  uint64_t threshold_ns = 0;
  std::vector<std::string> channels;  // "pipe:[123]", "socket:[456]"
  // Only for processes that may be trainers:
  std::vector<Reception> receptions;   // by start within each thread
  std::vector<TimeWindow> sync_waits;  // the main thread's, in order
  // The main thread's, chained while they follow within kChainGapNs, by start.
  std::vector<MemoryWork> shared_memory;
  std::unique_ptr<TimeSpans> own_io;   // the main thread's data-file I/O
};

class WaitCollector {
 public:
  WaitCollector(bool trainer, int64_t origin_ns, int64_t resolution_ns)
      : trainer_(trainer), origin_ns_(origin_ns), resolution_ns_(resolution_ns) {}

  void OnProcess(const ProcessTrace& process);
  // The index in WaitEvidence::channels of the pipe or socket `name`
  // (kNoChannel once kMaxChannels are kept).
  uint32_t Channel(const std::string& name);
  // An I/O call on a pipe or socket; `write`: it sent rather than received.
  void OnChannel(const Event& e, int64_t start, int64_t end, uint32_t channel, bool write);
  // A blocking wait (Layer::kWait); `channel` is its descriptor's, or
  // kNoChannel.
  void OnWait(const Event& e, int64_t start, int64_t end, uint32_t channel);
  // An I/O call on a data file other than a write.
  void OnDataFile(const Event& e, int64_t start, int64_t end);
  // A call on shared memory (IsSharedMemory); only mapping, unmapping,
  // closing, fstat and dup count, not a mapping's page faults, which the
  // training step itself takes as it reads the batch.
  void OnSharedMemory(const Event& e, int64_t start, int64_t end);
  WaitEvidence Finish();

  static constexpr uint32_t kNoChannel = UINT32_MAX;

 private:
  void Receive(uint32_t tid, int64_t start, int64_t end, uint32_t channel, bool may_begin);

  bool trainer_;
  int64_t origin_ns_;
  int64_t resolution_ns_;
  uint32_t main_tid_ = 0;
  WaitEvidence evidence_;
  absl::flat_hash_map<std::string, uint32_t> channel_index_;
  absl::flat_hash_map<uint32_t, Reception> open_;  // by thread
  absl::flat_hash_map<uint32_t, int64_t> last_end_;  // by thread: its last reception's end
  std::vector<bool> channel_used_;                    // by channel
};

enum class WaitKind { kLoaderQueue, kLoaderThread, kThreadPipeline, kOwnLoading };
inline constexpr int kWaitKinds = 4;
// "the trainer blocked on its loaders' queues", ...
const char* WaitKindText(WaitKind kind);

struct InferredWindow {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
  WaitKind kind = WaitKind::kLoaderQueue;
};

// What the run knows about one trainer once every file is read.
struct WaitInput {
  const WaitEvidence* trainer = nullptr;
  // Channels any of the trainer's loaders used.
  const absl::flat_hash_set<std::string>* loader_channels = nullptr;
  bool has_loaders = false;
  const TimeBitmap* group_io = nullptr;  // data-file I/O of the trainer and loaders
  const TimeBitmap* own_io = nullptr;    // the trainer's main thread's (null: none)
};

// Whether the trace can tell this trainer's waits at all: it recorded waits,
// or it loads its data itself and read some.
bool CanInferWaits(const WaitInput& in);

// The trainer's waits for data, by start; windows of different kinds may
// overlap. `steps` (sorted by start) bound kOwnLoading windows.
std::vector<InferredWindow> InferWaitWindows(const WaitInput& in,
                                             const std::vector<StepSpan>& steps);

// The union of `windows` (sorted by start): sorted, disjoint.
std::vector<TimeWindow> MergeWindows(const std::vector<InferredWindow>& windows);

// The parts of `merged` (sorted, disjoint) inside [start_ns, end_ns): a
// step's data_waits.
std::vector<TimeWindow> WaitsInside(const std::vector<TimeWindow>& merged, int64_t start_ns,
                                    int64_t end_ns);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ANALYSIS_WAIT_INFERENCE_H_
