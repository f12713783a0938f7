#include "analyzer/analysis/mapped_accumulator.h"

#include <algorithm>

namespace iotap::analyzer {

void MappedAccumulator::OnPacket(const Packet& packet) {
  if (packet.has_fault_sampling()) {
    const FaultSampling& s = packet.fault_sampling();
    // The last one a process wrote says how its run ended up (a refusal
    // after sampling began turns it to counters).
    source_ = s.source();
    lost_ = std::max<uint64_t>(lost_, s.lost_faults());
    if (s.source() == FaultSampling::SOURCE_THREAD_COUNTERS && !s.note().empty()) {
      notes_.try_emplace(s.note(), -1, static_cast<int>(notes_.size()));
    }
  } else if (packet.has_fault_counters()) {
    for (const FaultCounters::ThreadCounters& t : packet.fault_counters().thread()) {
      auto [it, added] = threads_.try_emplace(t.tid(), FirstLast{t, t});
      if (!added) it->second.last = t;
    }
  }
}

void MappedAccumulator::OnEvent(const ProcessTrace& process, const Event& e) {
  if (e.op == OP_MAPPED_READ) {
    MappedFileStats& f = mapped_[std::string(process.Text(e.file))];
    ++f.faults;
    f.span_bytes += e.result > 0 ? static_cast<uint64_t>(e.result) : 0;
    f.touched_bytes += e.requested;
    if (e.flags & FLAG_INCOMPLETE) ++f.estimated_spans;
    if (e.flags & FLAG_MAJOR_FAULT) {
      ++f.major_faults;
      f.major_ns += e.duration_ns();
    }
    return;
  }
  if (e.op == OP_URING_ENTER) {
    if (e.flags & FLAG_INCOMPLETE) {
      totals_.uring_unseen_requests += e.requested;
    } else {
      ++totals_.uring_calls;
    }
    return;
  }
  bool read = e.op == OP_URING_READ, write = e.op == OP_URING_WRITE;
  if (!read && !write && e.op != OP_URING_OPENAT && e.op != OP_URING_CLOSE &&
      e.op != OP_URING_STATX) {
    return;
  }
  UringFileStats& f = uring_[std::string(process.Text(e.file))];
  uint64_t bytes = BytesMoved(e);
  if (e.Failed()) ++f.failed;
  if (e.flags & FLAG_INCOMPLETE) ++f.incomplete;
  if (read) {
    ++f.reads;
    f.read_bytes += bytes;
    f.read_ns += e.duration_ns();
  } else if (write) {
    ++f.writes;
    f.write_bytes += bytes;
  } else {
    ++f.other;
  }
}

void MappedAccumulator::OnFileEnd() {
  if (source_ == FaultSampling::SOURCE_PERF_SAMPLES) ++totals_.processes_sampled;
  if (source_ == FaultSampling::SOURCE_THREAD_COUNTERS) ++totals_.processes_counted;
  totals_.lost_faults += lost_;
  for (const auto& [tid, t] : threads_) {
    totals_.counted_minor_faults += t.last.minor_faults() - t.first.minor_faults();
    totals_.counted_major_faults += t.last.major_faults() - t.first.major_faults();
    totals_.counted_read_bytes += t.last.read_bytes() - t.first.read_bytes();
  }
  threads_.clear();
  source_ = FaultSampling::SOURCE_UNSPECIFIED;
  lost_ = 0;
}

void MappedAccumulator::Absorb(MappedAccumulator&& other, int rank) {
  for (const auto& [path, o] : other.mapped_) {
    MappedFileStats& f = mapped_[path];
    f.faults += o.faults;
    f.major_faults += o.major_faults;
    f.span_bytes += o.span_bytes;
    f.touched_bytes += o.touched_bytes;
    f.estimated_spans += o.estimated_spans;
    f.major_ns += o.major_ns;
  }
  for (const auto& [path, o] : other.uring_) {
    UringFileStats& f = uring_[path];
    f.reads += o.reads;
    f.read_bytes += o.read_bytes;
    f.writes += o.writes;
    f.write_bytes += o.write_bytes;
    f.other += o.other;
    f.failed += o.failed;
    f.incomplete += o.incomplete;
    f.read_ns += o.read_ns;
  }
  for (const auto& [note, at] : other.notes_) {
    std::pair<int, int> given{at.first < 0 ? rank : at.first, at.second};
    auto [it, added] = notes_.try_emplace(note, given);
    if (!added) it->second = std::min(it->second, given);
  }
  const MappedTotals& o = other.totals_;
  totals_.uring_calls += o.uring_calls;
  totals_.uring_unseen_requests += o.uring_unseen_requests;
  totals_.processes_sampled += o.processes_sampled;
  totals_.processes_counted += o.processes_counted;
  totals_.lost_faults += o.lost_faults;
  totals_.counted_minor_faults += o.counted_minor_faults;
  totals_.counted_major_faults += o.counted_major_faults;
  totals_.counted_read_bytes += o.counted_read_bytes;
}

MappedTotals MappedAccumulator::Totals() const {
  MappedTotals r = totals_;
  for (const auto& [path, f] : mapped_) {
    r.mapped.push_back(f);
    r.mapped.back().path = path;
  }
  for (const auto& [path, f] : uring_) {
    r.uring.push_back(f);
    r.uring.back().path = path;
  }
  std::stable_sort(r.mapped.begin(), r.mapped.end(),
                   [](const auto& a, const auto& b) { return a.span_bytes > b.span_bytes; });
  std::stable_sort(r.uring.begin(), r.uring.end(), [](const auto& a, const auto& b) {
    return a.read_bytes + a.write_bytes > b.read_bytes + b.write_bytes;
  });
  std::vector<std::pair<std::pair<int, int>, std::string>> notes;
  for (const auto& [note, at] : notes_) notes.emplace_back(at, note);
  std::sort(notes.begin(), notes.end());
  for (auto& [at, note] : notes) r.notes.push_back(std::move(note));
  return r;
}

}  // namespace iotap::analyzer
