#include "analyzer/analysis/wait_inference.h"

#include <algorithm>

#include "absl/strings/match.h"

namespace iotap::analyzer {

void WaitCollector::OnProcess(const ProcessTrace& process) {
  main_tid_ = static_cast<uint32_t>(process.header().pid());
  evidence_.threshold_ns = process.header().wait_threshold_ns();
  if (trainer_ && !evidence_.own_io) {
    evidence_.own_io = std::make_unique<TimeSpans>(origin_ns_, resolution_ns_);
  }
}

uint32_t WaitCollector::Channel(const std::string& name) {
  auto it = channel_index_.find(name);
  if (it != channel_index_.end()) return it->second;
  if (evidence_.channels.size() >= kMaxChannels) return kNoChannel;
  auto index = static_cast<uint32_t>(evidence_.channels.size());
  evidence_.channels.push_back(name);
  channel_index_.emplace(name, index);
  return index;
}

void WaitCollector::Receive(uint32_t tid, int64_t start, int64_t end, uint32_t channel,
                            bool may_begin) {
  if (channel >= channel_used_.size()) channel_used_.resize(evidence_.channels.size(), false);
  const bool fresh = !channel_used_[channel];
  channel_used_[channel] = true;
  auto it = open_.find(tid);
  if (it != open_.end()) {
    Reception& r = it->second;
    if (start >= r.start_ns && start - r.end_ns <= kChainGapNs) {
      r.end_ns = std::max(r.end_ns, end);
      last_end_[tid] = r.end_ns;
      return;
    }
    evidence_.receptions.push_back(r);
    open_.erase(it);
  }
  if (!may_begin) return;
  Reception r{start, end, channel, tid == main_tid_};
  auto last = last_end_.find(tid);
  if (fresh && absl::StartsWith(evidence_.channels[channel], "socket:") &&
      last != last_end_.end() && start >= last->second &&
      start - last->second <= kHandshakeGapNs) {
    r.continues = true;
    r.gap_start_ns = last->second;
  }
  last_end_[tid] = end;
  open_.emplace(tid, r);
}

void WaitCollector::OnChannel(const Event& e, int64_t start, int64_t end, uint32_t channel,
                              bool write) {
  if (!trainer_ || channel == kNoChannel) return;
  // Only a receipt that succeeded begins a reception; anything else on a
  // channel (the handshake's writes, closing its socket) may continue one.
  bool receipt = TransferOf(e.op) == Transfer::kRead && !write && !e.Failed();
  Receive(e.tid, start, end, channel, receipt);
}

void WaitCollector::OnWait(const Event& e, int64_t start, int64_t end, uint32_t channel) {
  if (!trainer_) return;
  bool descriptor = e.op == OP_POLL || e.op == OP_SELECT;
  if (descriptor && channel != kNoChannel) {
    Receive(e.tid, start, end, channel, /*may_begin=*/true);
    return;
  }
  if (e.tid != main_tid_) return;
  evidence_.sync_waits.push_back(TimeWindow{start, end});
}

void WaitCollector::OnDataFile(const Event& e, int64_t start, int64_t end) {
  if (trainer_ && e.tid == main_tid_) evidence_.own_io->Add(start, end);
}

bool IsSharedMemory(std::string_view path) { return path.substr(0, 9) == "/dev/shm/"; }

void WaitCollector::OnSharedMemory(const Event& e, int64_t start, int64_t end) {
  if (!trainer_ || e.tid != main_tid_) return;
  if (e.op != OP_MMAP && e.op != OP_MUNMAP && e.op != OP_CLOSE && e.op != OP_FSTAT &&
      e.op != OP_DUP) {
    return;
  }
  const bool unmaps = e.op == OP_MUNMAP && !e.Failed();
  std::vector<MemoryWork>& work = evidence_.shared_memory;
  if (!work.empty() && start >= work.back().start_ns &&
      start - work.back().end_ns <= kChainGapNs) {
    work.back().end_ns = std::max(work.back().end_ns, end);
    work.back().unmaps |= unmaps;
    return;
  }
  work.push_back(MemoryWork{start, end, unmaps});
}

WaitEvidence WaitCollector::Finish() {
  for (auto& [tid, r] : open_) evidence_.receptions.push_back(r);
  open_.clear();
  auto by_start = [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; };
  std::sort(evidence_.receptions.begin(), evidence_.receptions.end(), by_start);
  std::sort(evidence_.sync_waits.begin(), evidence_.sync_waits.end(), by_start);
  std::sort(evidence_.shared_memory.begin(), evidence_.shared_memory.end(), by_start);
  channel_index_.clear();
  last_end_.clear();
  channel_used_.clear();
  return std::move(evidence_);
}

const char* WaitKindText(WaitKind kind) {
  switch (kind) {
    case WaitKind::kLoaderQueue:
      return "the trainer blocked on its loaders' queues";
    case WaitKind::kLoaderThread:
      return "the trainer blocked while a thread of it received from the loaders";
    case WaitKind::kThreadPipeline:
      return "the trainer blocked while its threads read the data";
    case WaitKind::kOwnLoading:
      return "the trainer loading its batch itself";
  }
  return "";
}

namespace {

// Sorted, disjoint union of `windows` (sorted by start).
std::vector<TimeWindow> Union(const std::vector<TimeWindow>& windows) {
  std::vector<TimeWindow> out;
  for (const TimeWindow& w : windows) {
    if (w.end_ns <= w.start_ns) continue;
    if (!out.empty() && w.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, w.end_ns);
    } else {
      out.push_back(w);
    }
  }
  return out;
}

bool Overlaps(const std::vector<TimeWindow>& disjoint, const TimeWindow& w) {
  auto it = std::upper_bound(disjoint.begin(), disjoint.end(), w.start_ns,
                             [](int64_t t, const TimeWindow& d) { return t < d.end_ns; });
  return it != disjoint.end() && it->start_ns < w.end_ns;
}

// The main thread's work on shared memory as part of the loader-queue
// waits in `out` (by start, all kLoaderQueue): a stretch that begins within
// kChainGapNs of a wait's end (or inside it) extends that wait to its own
// end; one that unmaps and meets no wait, in a trainer with loaders, is a
// wait of its own (the loop dropping the previous batch).
void ExtendThroughSharedMemory(const std::vector<MemoryWork>& work, bool has_loaders,
                               std::vector<InferredWindow>* out) {
  if (work.empty()) return;
  std::vector<InferredWindow> alone;
  size_t w = 0;  // the last wait that starts at or before the stretch
  const size_t waits = out->size();
  for (const MemoryWork& m : work) {
    while (w + 1 < waits && (*out)[w + 1].start_ns <= m.start_ns) ++w;
    InferredWindow* wait = waits > 0 && (*out)[w].start_ns <= m.start_ns ? &(*out)[w] : nullptr;
    if (wait != nullptr && m.start_ns - wait->end_ns <= kChainGapNs) {
      wait->end_ns = std::max(wait->end_ns, m.end_ns);
    } else if (m.unmaps && has_loaders) {
      alone.push_back({m.start_ns, m.end_ns, WaitKind::kLoaderQueue});
    }
  }
  out->insert(out->end(), alone.begin(), alone.end());
}

}  // namespace

bool CanInferWaits(const WaitInput& in) {
  if (in.trainer == nullptr) return false;
  if (in.trainer->threshold_ns > 0) return true;
  return !in.has_loaders && in.own_io != nullptr && in.own_io->Total() > 0;
}

std::vector<InferredWindow> InferWaitWindows(const WaitInput& in,
                                             const std::vector<StepSpan>& steps) {
  std::vector<InferredWindow> out;
  if (!CanInferWaits(in)) return out;
  const WaitEvidence& ev = *in.trainer;
  auto from_loader = [&](const Reception& r) {
    return in.loader_channels != nullptr && r.channel < ev.channels.size() &&
           in.loader_channels->contains(ev.channels[r.channel]);
  };
  std::vector<TimeWindow> helper_receptions;  // other threads', from loaders
  bool batch = false;  // the main thread's last reception was (part of) a batch
  for (const Reception& r : ev.receptions) {
    if (!r.main_thread) {
      if (from_loader(r)) helper_receptions.push_back({r.start_ns, r.end_ns});
      continue;
    }
    if (from_loader(r)) {
      out.push_back({r.start_ns, r.end_ns, WaitKind::kLoaderQueue});
      batch = true;
    } else if (batch && r.continues) {
      out.push_back({r.gap_start_ns, r.end_ns, WaitKind::kLoaderQueue});
    } else {
      batch = false;
    }
  }
  ExtendThroughSharedMemory(ev.shared_memory, in.has_loaders, &out);
  helper_receptions = Union(helper_receptions);
  for (const TimeWindow& w : ev.sync_waits) {
    if (Overlaps(helper_receptions, w)) {
      out.push_back({w.start_ns, w.end_ns, WaitKind::kLoaderThread});
    } else if (!in.has_loaders && in.group_io != nullptr &&
               in.group_io->Count(w.start_ns, w.end_ns) > 0) {
      out.push_back({w.start_ns, w.end_ns, WaitKind::kThreadPipeline});
    }
  }
  if (!in.has_loaders && in.own_io != nullptr) {
    for (const StepSpan& s : steps) {
      int64_t last = in.own_io->LastBusyEnd(s.start_ns, s.end_ns);
      if (last > s.start_ns) out.push_back({s.start_ns, last, WaitKind::kOwnLoading});
    }
  }
  std::sort(out.begin(), out.end(), [](const InferredWindow& a, const InferredWindow& b) {
    return a.start_ns < b.start_ns;
  });
  return out;
}

std::vector<TimeWindow> MergeWindows(const std::vector<InferredWindow>& windows) {
  std::vector<TimeWindow> plain;
  plain.reserve(windows.size());
  for (const InferredWindow& w : windows) plain.push_back({w.start_ns, w.end_ns});
  return Union(plain);
}

std::vector<TimeWindow> WaitsInside(const std::vector<TimeWindow>& merged, int64_t start_ns,
                                    int64_t end_ns) {
  std::vector<TimeWindow> out;
  auto it = std::upper_bound(merged.begin(), merged.end(), start_ns,
                             [](int64_t t, const TimeWindow& d) { return t < d.end_ns; });
  for (; it != merged.end() && it->start_ns < end_ns; ++it) {
    TimeWindow w{std::max(it->start_ns, start_ns), std::min(it->end_ns, end_ns)};
    if (w.end_ns > w.start_ns) out.push_back(w);
  }
  return out;
}

}  // namespace iotap::analyzer
