#include "analyzer/accumulate/mapped_accumulator.h"

#include <algorithm>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

namespace {

// How far a thread's counter rose from its first reading to its last; 0 for
// readings that go backwards, which only a damaged trace holds.
uint64_t Growth(uint64_t first, uint64_t last) { return last >= first ? last - first : 0; }

}  // namespace

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
    AddTo(&f.span_bytes, e.result > 0 ? static_cast<uint64_t>(e.result) : 0);
    AddTo(&f.touched_bytes, e.requested);
    if (e.flags & FLAG_INCOMPLETE) ++f.estimated_spans;
    if (e.flags & FLAG_MAJOR_FAULT) {
      ++f.major_faults;
      AddTo(&f.major_ns, e.duration_ns());
    }
    return;
  }
  if (e.op == OP_URING_ENTER) {
    if (e.flags & FLAG_INCOMPLETE) {
      AddTo(&totals_.uring_unseen_requests, e.requested);
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
    AddTo(&f.read_bytes, bytes);
    AddTo(&f.read_ns, e.duration_ns());
  } else if (write) {
    ++f.writes;
    AddTo(&f.write_bytes, bytes);
  } else {
    ++f.other;
  }
}

void MappedAccumulator::OnFileEnd() {
  if (source_ == FaultSampling::SOURCE_PERF_SAMPLES) ++totals_.processes_sampled;
  if (source_ == FaultSampling::SOURCE_THREAD_COUNTERS) ++totals_.processes_counted;
  AddTo(&totals_.lost_faults, lost_);
  for (const auto& [tid, t] : threads_) {
    AddTo(&totals_.counted_minor_faults, Growth(t.first.minor_faults(), t.last.minor_faults()));
    AddTo(&totals_.counted_major_faults, Growth(t.first.major_faults(), t.last.major_faults()));
    AddTo(&totals_.counted_read_bytes, Growth(t.first.read_bytes(), t.last.read_bytes()));
  }
  threads_.clear();
  source_ = FaultSampling::SOURCE_UNSPECIFIED;
  lost_ = 0;
}

void MappedAccumulator::Absorb(MappedAccumulator&& other, int rank) {
  for (const auto& [path, o] : other.mapped_) {
    MappedFileStats& f = mapped_[path];
    AddTo(&f.faults, o.faults);
    AddTo(&f.major_faults, o.major_faults);
    AddTo(&f.span_bytes, o.span_bytes);
    AddTo(&f.touched_bytes, o.touched_bytes);
    AddTo(&f.estimated_spans, o.estimated_spans);
    AddTo(&f.major_ns, o.major_ns);
  }
  for (const auto& [path, o] : other.uring_) {
    UringFileStats& f = uring_[path];
    AddTo(&f.reads, o.reads);
    AddTo(&f.read_bytes, o.read_bytes);
    AddTo(&f.writes, o.writes);
    AddTo(&f.write_bytes, o.write_bytes);
    AddTo(&f.other, o.other);
    AddTo(&f.failed, o.failed);
    AddTo(&f.incomplete, o.incomplete);
    AddTo(&f.read_ns, o.read_ns);
  }
  for (const auto& [note, at] : other.notes_) {
    std::pair<int, int> given{at.first < 0 ? rank : at.first, at.second};
    auto [it, added] = notes_.try_emplace(note, given);
    if (!added) it->second = std::min(it->second, given);
  }
  const MappedTotals& o = other.totals_;
  AddTo(&totals_.uring_calls, o.uring_calls);
  AddTo(&totals_.uring_unseen_requests, o.uring_unseen_requests);
  AddTo(&totals_.processes_sampled, o.processes_sampled);
  AddTo(&totals_.processes_counted, o.processes_counted);
  AddTo(&totals_.lost_faults, o.lost_faults);
  AddTo(&totals_.counted_minor_faults, o.counted_minor_faults);
  AddTo(&totals_.counted_major_faults, o.counted_major_faults);
  AddTo(&totals_.counted_read_bytes, o.counted_read_bytes);
}

uint64_t MappedAccumulator::FaultsOf(std::string_view path) const {
  auto it = mapped_.find(path);
  return it == mapped_.end() ? 0 : it->second.faults;
}

UringFileStats MappedAccumulator::UringOf(std::string_view path) const {
  auto it = uring_.find(path);
  return it == uring_.end() ? UringFileStats() : it->second;
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
