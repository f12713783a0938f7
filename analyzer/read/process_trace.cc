#include "analyzer/read/process_trace.h"

#include <algorithm>

namespace iotap::analyzer {

namespace {
// Ids are dense and increase through a file; a larger gap than this between
// defined ids means a damaged table rather than a real one.
constexpr uint32_t kMaxIdGap = 1u << 24;
}  // namespace

const InternedName& ProcessTrace::Name(uint32_t id) const {
  static const InternedName kNone;
  return id < names_.size() ? names_[id] : kNone;
}

void ProcessTrace::AddStrings(const StringTable& table) {
  for (const InternedString& s : table.entry()) AddString(s.id(), s.kind(), s.value());
}

void ProcessTrace::AddString(uint32_t id, InternedString::Kind kind, std::string_view value) {
  if (id == 0 || id > names_.size() + kMaxIdGap) return;
  if (id >= names_.size()) names_.resize(id + 1);
  InternedName& name = names_[id];
  const bool path = kind == InternedString::KIND_PATH || kind == InternedString::KIND_DEVICE;
  name.value = path && shared_paths_ != nullptr && !value.empty() ? shared_paths_->InternText(value)
                                                                  : Store(value);
  name.kind = kind;
  name.defined = true;
}

std::string_view ProcessTrace::Store(std::string_view text) {
  constexpr size_t kBlockBytes = 16 << 10;
  if (text.empty()) return {};
  if (name_blocks_.empty() || text.size() > name_block_size_ - name_block_used_) {
    name_block_size_ = std::max(kBlockBytes, text.size());
    name_blocks_.push_back(std::make_unique_for_overwrite<char[]>(name_block_size_));
    name_block_used_ = 0;
  }
  char* at = name_blocks_.back().get() + name_block_used_;
  std::copy(text.begin(), text.end(), at);
  name_block_used_ += text.size();
  return std::string_view(at, text.size());
}

void ProcessTrace::AddClock(const ClockSnapshot& clock) {
  clocks_.push_back(clock);
  if (clock.events_dropped() > dropped_reported_by_shim_) {
    dropped_reported_by_shim_ = clock.events_dropped();
  }
}

void ProcessTrace::SetEnd(const EndOfTrace& end) {
  end_ = end;
  dropped_reported_by_shim_ = std::max(dropped_reported_by_shim_, end.events_dropped());
}

uint64_t ProcessTrace::dropped() const { return std::max(dropped_, dropped_reported_by_shim_); }

int64_t ProcessTrace::OwnRealtimeNs(int64_t monotonic_ns) const {
  if (clocks_.empty()) {
    return monotonic_ns - static_cast<int64_t>(header_.start_monotonic_ns()) +
           static_cast<int64_t>(header_.start_realtime_ns());
  }
  // Snapshots are in time order; take the nearest one.
  auto it = std::lower_bound(clocks_.begin(), clocks_.end(), monotonic_ns,
                             [](const ClockSnapshot& c, int64_t t) {
                               return static_cast<int64_t>(c.monotonic_ns()) < t;
                             });
  if (it == clocks_.end()) --it;
  if (it != clocks_.begin()) {
    auto prev = std::prev(it);
    if (monotonic_ns - static_cast<int64_t>(prev->monotonic_ns()) <
        static_cast<int64_t>(it->monotonic_ns()) - monotonic_ns) {
      it = prev;
    }
  }
  return monotonic_ns - static_cast<int64_t>(it->monotonic_ns()) +
         static_cast<int64_t>(it->realtime_ns());
}

}  // namespace iotap::analyzer
