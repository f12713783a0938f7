// The page-fault sampler's shared state, between the events' lifetime
// (fault_sampler.cc) and the writer's draining of them (fault_drain.cc).

#ifndef IOTAP_INTERPOSE_MAPPED_FAULT_SAMPLER_INTERNAL_H_
#define IOTAP_INTERPOSE_MAPPED_FAULT_SAMPLER_INTERNAL_H_

#include <linux/perf_event.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <atomic>

namespace iotap::interpose::faults {

inline constexpr int kMaxThreads = 1024;
// Data pages of the two buffers (powers of two): 32 KiB of fault-begin
// samples (1024 faults) and 16 KiB of major-fault samples (512: a cold
// window read every 80 us makes 312 within the longest poll, 25 ms, and
// faults past a full buffer lose their major time). A thread
// that fills a quarter of its begin buffer between two drains, or makes the
// kernel drop samples, gets one of 256 KiB (8192 faults) instead, where the
// locked-memory limit allows: a DataLoader worker collating a batch faults
// in megabytes of fresh memory within a millisecond, and the small buffer
// lost thousands of samples an epoch, data faults among them.
inline constexpr size_t kBeginPages = 8;
inline constexpr size_t kGrownBeginPages = 64;
inline constexpr size_t kMajorPages = 4;
// Samples a buffer of `pages` data pages holds (both buffers' are 32 bytes).
inline constexpr size_t SampleCapacity(size_t pages) { return pages * 4096 / 32; }
inline constexpr size_t kMajorCapacity = SampleCapacity(kMajorPages);
// Begin samples held back because their fault may not have completed yet.
inline constexpr size_t kMaxHeld = 16;
// Page-table regions one drain of a thread looks up in /proc/self/pagemap at
// most; the faults of any others get the nominal span.
inline constexpr int kMaxPagemapReads = 64;
// Questions to the kernel about mappings the table lacks, per drain of a
// thread (proc_maps.h). Nearly all are about anonymous memory, each answer
// good for a 2 MiB region for a second; a drain that would ask more (the
// first after a fork, copy-on-write faults all over the address space)
// leaves its other misses unplaced.
inline constexpr int kMaxMapsQueries = 32;

// A sample as both buffers carry it (PERF_SAMPLE_TID | TIME | ADDR).
struct Sample {
  uint64_t time_ns;  // CLOCK_MONOTONIC
  uint64_t addr;
};

struct Buffer {
  perf_event_mmap_page* page = nullptr;  // header page, then the data pages
  size_t bytes = 0;                      // of the whole mapping
};

enum SlotState : uint32_t { kSlotFree = 0, kSlotLive = 1 };

struct Slot {
  std::atomic<uint32_t> state{kSlotFree};
  int tid = 0;
  Buffer begin;
  size_t begin_pages = 0;
  bool grow_failed = false;  // the grown buffer was refused: not asked again
  // The begin buffer before it grew, still sampling until the next DrainSlot
  // takes its samples (those its successor has too left out) and unmaps it;
  // `retired_at`: when the successor was opened.
  Buffer retired;
  uint64_t retired_at = 0;
  Buffer major;
  // The writer's: begin samples whose fault may still run.
  Sample held[kMaxHeld] = {};
  uint32_t held_count = 0;
  // Set as the slot opens, cleared by the writer's first drain of it (which
  // starts the poll's back-off again: poll_interval.h).
  bool undrained = false;
};

enum Mode : uint32_t {
  kIdle = 0,      // no events open (no data mappings, or not yet)
  kSampling = 1,  // events open for every thread
  kCounters = 2,  // the kernel refused: per-thread counters instead
  kClosing = 3,   // the writer is closing every event (no data mappings left)
};

struct Sampler {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // a leaf: slots' allocation
  std::atomic<uint32_t> mode{kIdle};
  // The last time the process was seen with a data mapping.
  std::atomic<uint64_t> last_mapped_ns{0};
  // A FaultSampling packet is due (mode or note changed).
  std::atomic<bool> status_due{false};
  char note[160] = {};
  std::atomic<uint64_t> lost{0};
  std::atomic<uint32_t> threads_sampled{0};
  // One past the highest slot ever taken (slots are taken lowest first,
  // under the lock): the writer's loops over the slots stop there, where a
  // walk over all 1,024 (350 KB) at every drain and every look was a tenth
  // of a memmap DataLoader writer's time.
  std::atomic<uint32_t> slots_used{0};
  Slot slots[kMaxThreads];

  // The slots that may be live, for range-for.
  struct Used {
    Slot* first;
    Slot* last;
    Slot* begin() const { return first; }
    Slot* end() const { return last; }
  };
  Used used() { return Used{slots, slots + slots_used.load(std::memory_order_acquire)}; }
};

extern Sampler g_sampler;

// Unmaps a slot's buffers and frees it; the writer's, under the lock.
void CloseSlotLocked(Slot* slot);

// Drains `slot` into events (fault_drain.cc). `final`: hold nothing back.
// Returns how many begin samples the kernel had written since the last
// drain, and whether it dropped any, and what the drain spent of its caps.
struct Drained {
  size_t fresh = 0;
  bool lost = false;
  size_t majors = 0;         // major-fault samples since the last drain
  bool majors_lost = false;  // ... and whether the kernel dropped any
  uint32_t looks = 0;        // page-table regions that wanted a look
  uint32_t queries = 0;      // questions asked about unknown mappings
};
Drained DrainSlot(Slot* slot, uint64_t now_ns, bool final);

// Emits the FaultSampling packet now (writer lock held).
void WriteStatus();

// In a fork child: forgets the parent's /proc/self/pagemap descriptor.
void ResetDrainInChild();

}  // namespace iotap::interpose::faults

#endif  // IOTAP_INTERPOSE_MAPPED_FAULT_SAMPLER_INTERNAL_H_
