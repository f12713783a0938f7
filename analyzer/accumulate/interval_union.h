// The exact union of time intervals that arrive roughly in order of their
// ends, as a process's calls do (each thread records a call when it ends).
//
//   IntervalUnion u(/*horizon_ns=*/2'000'000'000);
//   u.Add(100, 250);
//   u.Add(200, 300);   // overlaps: the union is [100, 300)
//   u.Finish();
//   u.total_ns();      // 200
//
// Segments of the union are kept while a later interval could still overlap
// them, and handed to `sink` (in time order, disjoint) once they end more
// than `horizon_ns` before the latest end seen. An interval that starts
// before the segments already handed on (a call blocked for longer than the
// horizon) is clipped to the first time not yet handed on, and counted in
// late_clipped_ns(), so totals are exact unless a single call outlasts the
// horizon. Memory is bounded by the segments within one horizon.

#ifndef IOTAP_ANALYZER_ACCUMULATE_INTERVAL_UNION_H_
#define IOTAP_ANALYZER_ACCUMULATE_INTERVAL_UNION_H_

#include <cstdint>
#include <functional>
#include <vector>

namespace iotap::analyzer {

class IntervalUnion {
 public:
  using Sink = std::function<void(int64_t start, int64_t end)>;

  explicit IntervalUnion(int64_t horizon_ns, Sink sink = nullptr)
      : horizon_ns_(horizon_ns), sink_(std::move(sink)) {}

  // Adds [start, end); empty or inverted intervals are ignored.
  void Add(int64_t start, int64_t end);
  // Hands every remaining segment to the sink.
  void Finish();

  int64_t total_ns() const { return total_ns_; }
  int64_t late_clipped_ns() const { return late_clipped_ns_; }
  size_t pending_segments() const { return segments_.size() - first_; }

 private:
  struct Segment {
    int64_t start;
    int64_t end;
  };
  void Emit(const Segment& s);
  void EmitOlderThanHorizon();

  int64_t horizon_ns_;
  Sink sink_;
  // The pending segments are segments_[first_...], disjoint and sorted; the
  // ones before first_ were handed on and are dropped in bulk (a vector
  // used as a queue: cheaper per call than a deque).
  std::vector<Segment> segments_;
  size_t first_ = 0;
  int64_t emitted_until_ = INT64_MIN;
  int64_t latest_end_ = INT64_MIN;
  int64_t total_ns_ = 0;
  int64_t late_clipped_ns_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_ACCUMULATE_INTERVAL_UNION_H_
