#include "analyzer/read/path_table.h"

#include <algorithm>

#include "absl/hash/hash.h"

namespace iotap::analyzer {

namespace {

bool EndsWithAny(std::string_view s, std::initializer_list<std::string_view> suffixes) {
  for (std::string_view x : suffixes) {
    if (s.ends_with(x)) return true;
  }
  return false;
}

bool Contains(std::string_view s, std::string_view part) {
  return s.find(part) != std::string_view::npos;
}

}  // namespace

const char* FileCategory(std::string_view path) {
  if (path.starts_with("/proc/") || path.starts_with("/sys/") || path.starts_with("/dev/") ||
      Contains(path, "/pymp-")) {
    return "system";
  }
  if (Contains(path, "/site-packages/") || Contains(path, "/dist-packages/") ||
      Contains(path, "/lib/python") || Contains(path, "/bin/") || Contains(path, "/.pyenv/") ||
      Contains(path, "/conda") || Contains(path, "/.venv/") || Contains(path, "/venv/") ||
      path.starts_with("/usr/") || path == "/usr" ||
      path.starts_with("/lib/") || path.starts_with("/lib64/") || path.starts_with("/bin/") ||
      path.starts_with("/sbin/") || path.starts_with("/etc/") ||
      Contains(path, "/__pycache__/") || EndsWithAny(path, {".py", ".pyc", ".so", ".pth"}) ||
      Contains(path, ".so.")) {
    return "runtime";
  }
  return "data";
}

PathTable::Entry PathTable::Intern(std::string_view path, bool categorize) {
  size_t hash = absl::HashOf(path);
  Shard& shard = shards_[(hash >> 7) % kShards];
  std::lock_guard<std::mutex> lock(shard.mu);
  if (auto it = shard.entries.find(path); it != shard.entries.end()) {
    if (categorize && it->second.category == nullptr) it->second.category = FileCategory(path);
    return it->second;
  }
  Entry e;
  if (categorize) e.category = FileCategory(path);
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
