// How soon the writer empties the page-fault sample buffers again.
//
// Every drain wakes the writer, takes its lock, reads every sampled thread's
// buffers and looks in /proc/self/pagemap at the regions the faults fell in.
// A fixed poll (every millisecond for the first 100 ms after the events
// open, every 10 ms after) woke a DataLoader worker's writer about 230 times
// in an epoch of a second, each drain finding a few dozen samples in buffers
// that hold thousands: about a third of the writer's time was the waking.
// The interval now follows what the drains find, as a sender's window does:
// it doubles while drains find the buffers nearly empty, up to kMaxPollNs
// (kStartMaxPollNs in the first kFastStartNs, when a fork child's
// copy-on-write storm or a first run of cold reads may come at any moment),
// and is cut to what the rate just seen allows: no buffer more than a
// quarter full by the next drain, and no more page-table regions or mapping
// questions for a thread than half of what one drain may spend on them
// (past those caps a fault gets the nominal span, or is not placed). Samples
// lost, and a thread newly sampled (its buffer is the small one), bring it
// back to kFastPollNs. At kMaxPollNs a drain finds at most 312 major faults
// of a cold window read every 80 us (its buffer holds 512), and a grown
// begin buffer a quarter full only beyond 80,000 faults a second.
//
//   DrainLoad load{.elapsed_ns = 8'000'000, .fullest = 0.5};  // half full in 8 ms
//   NextPollNs(8'000'000, load, /*starting=*/false);            // 4 ms

#ifndef IOTAP_INTERPOSE_MAPPED_POLL_INTERVAL_H_
#define IOTAP_INTERPOSE_MAPPED_POLL_INTERVAL_H_

#include <stdint.h>

namespace iotap::interpose::faults {

inline constexpr uint64_t kFastPollNs = 1'000'000;
inline constexpr uint64_t kStartMaxPollNs = 4'000'000;
inline constexpr uint64_t kMaxPollNs = 25'000'000;
inline constexpr uint64_t kFastStartNs = 100'000'000;

// What one drain of every sampled thread found.
struct DrainLoad {
  uint64_t elapsed_ns = 0;  // since the drain before
  double fullest = 0;       // the largest share of a buffer found filled (0 to 1)
  bool lost = false;        // the kernel dropped samples
  bool new_thread = false;  // a thread's first drain (its buffer is the small one)
  // Of one thread's drain, the most: page-table regions that wanted a look,
  // against what a drain may read (`looks_cap`); mapping questions asked,
  // against `queries_cap`.
  uint32_t looks = 0;
  uint32_t looks_cap = 1;
  uint32_t queries = 0;
  uint32_t queries_cap = 1;
};

// The interval until the next drain, after one that found `load`, the last
// interval having been `previous_ns`; `starting`: within kFastStartNs of
// the events' opening.
constexpr uint64_t NextPollNs(uint64_t previous_ns, const DrainLoad& load, bool starting) {
  if (load.lost || load.new_thread) return kFastPollNs;
  uint64_t next = previous_ns > UINT64_MAX / 2 ? UINT64_MAX : previous_ns * 2;
  const uint64_t cap = starting ? kStartMaxPollNs : kMaxPollNs;
  if (next > cap) next = cap;
  // Each pressure is how far past its target the rate seen would carry the
  // next drain were it `elapsed_ns` away; the next is as much nearer.
  auto limit = [&](double pressure) {
    if (pressure <= 0) return;
    double allowed = static_cast<double>(load.elapsed_ns) / pressure;
    if (allowed < static_cast<double>(next)) next = static_cast<uint64_t>(allowed);
  };
  limit(load.fullest * 4);
  limit(2.0 * load.looks / load.looks_cap);
  limit(2.0 * load.queries / load.queries_cap);
  return next < kFastPollNs ? kFastPollNs : next;
}

}  // namespace iotap::interpose::faults

#endif  // IOTAP_INTERPOSE_MAPPED_POLL_INTERVAL_H_
