#include "analyzer/path_table.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "analyzer/process_analysis.h"

namespace iotap::analyzer {

PathTable::Entry PathTable::Intern(std::string_view path) {
  size_t hash = absl::HashOf(path);
  Shard& shard = shards_[(hash >> 7) % kShards];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (auto it = shard.entries.find(path); it != shard.entries.end()) return it->second;
  Entry e;
  e.category = FileCategory(path);
  std::string_view key;
  {
    std::lock_guard<std::mutex> ids_lock(ids_mu_);
    e.id = static_cast<uint32_t>(paths_.size());
    key = Store(path);
    paths_.push_back(key);
  }
  shard.entries.emplace(key, e);
  return e;
}

size_t PathTable::size() const {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return paths_.size();
}

std::string_view PathTable::Store(std::string_view path) {
  constexpr size_t kBlockBytes = 64 << 10;
  if (blocks_.empty() || path.size() > block_size_ - block_used_) {
    block_size_ = std::max(kBlockBytes, path.size());
    blocks_.push_back(std::make_unique<char[]>(block_size_));
    block_used_ = 0;
  }
  char* at = blocks_.back().get() + block_used_;
  std::copy(path.begin(), path.end(), at);
  block_used_ += path.size();
  return std::string_view(at, path.size());
}

std::string_view PathTable::path(uint32_t id) const {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return paths_[id];
}

}  // namespace iotap::analyzer
