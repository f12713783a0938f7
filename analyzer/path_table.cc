#include "analyzer/path_table.h"

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
    key = paths_.emplace_back(path);
  }
  shard.entries.emplace(key, e);
  return e;
}

size_t PathTable::size() const {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return paths_.size();
}

const std::string& PathTable::path(uint32_t id) const {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return paths_[id];
}

}  // namespace iotap::analyzer
