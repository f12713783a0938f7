#include "analyzer/read/path_table.h"

#include <algorithm>


namespace iotap::analyzer {

namespace {

bool EndsWithAny(std::string_view s, std::initializer_list<std::string_view> suffixes) {
  for (std::string_view x : suffixes) {
    if (s.ends_with(x)) return true;
  }
  return false;
}

// What a path holds right after one of its slashes: a multiprocessing
// socket's or file's directory (/pymp-), or a directory of the Python
// runtime. One look per slash, on the character after it, instead of a
// search of the whole path per name: categorizing is most of the cost of
// interning a new path, and a DataLoader worker opens a new one every few
// dozen events.
enum class AfterSlash { kNothing, kSystem, kRuntime };

AfterSlash Classify(std::string_view rest) {
  switch (rest.empty() ? '\0' : rest.front()) {
    case 'p': return rest.starts_with("pymp-") ? AfterSlash::kSystem : AfterSlash::kNothing;
    case 's': return rest.starts_with("site-packages/") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case 'd': return rest.starts_with("dist-packages/") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case 'l': return rest.starts_with("lib/python") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case 'b': return rest.starts_with("bin/") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case 'c': return rest.starts_with("conda") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case 'v': return rest.starts_with("venv/") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case '_': return rest.starts_with("__pycache__/") ? AfterSlash::kRuntime : AfterSlash::kNothing;
    case '.':
      return rest.starts_with(".pyenv/") || rest.starts_with(".venv/") ? AfterSlash::kRuntime
                                                                       : AfterSlash::kNothing;
    default: return AfterSlash::kNothing;
  }
}

}  // namespace

const char* FileCategory(std::string_view path) {
  if (path.starts_with("/proc/") || path.starts_with("/sys/") || path.starts_with("/dev/")) {
    return "system";
  }
  // Every name searched for inside the path but ".so." starts with a slash:
  // /pymp- (system, whatever else the path holds); /site-packages/,
  // /dist-packages/, /lib/python, /bin/, /.pyenv/, /conda, /.venv/, /venv/,
  // /__pycache__/ (runtime).
  bool runtime = false;
  for (size_t i = path.find('/'); i != std::string_view::npos; i = path.find('/', i + 1)) {
    AfterSlash found = Classify(path.substr(i + 1));
    if (found == AfterSlash::kSystem) return "system";
    runtime = runtime || found == AfterSlash::kRuntime;
  }
  if (runtime || path.starts_with("/usr/") || path == "/usr" || path.starts_with("/lib/") ||
      path.starts_with("/lib64/") || path.starts_with("/sbin/") || path.starts_with("/etc/") ||
      EndsWithAny(path, {".py", ".pyc", ".so", ".pth"}) ||
      path.find(".so.") != std::string_view::npos) {
    return "runtime";
  }
  return "data";
}

template <typename F>
auto PathTable::WithEntry(std::string_view path, bool categorize, F f) {
  const size_t hash = HashOf(path);
  Shard& shard = shards_[(hash >> 7) % kShards];
  std::lock_guard<std::mutex> lock(shard.mu);
  // Found, or added in the same probe of the table: one hash of the path.
  bool added = false;
  auto it = shard.entries.lazy_emplace(Key{path, hash}, [&](const auto& construct) {
    added = true;
    Entry e;
    if (categorize) e.category = FileCategory(path);
    std::string_view key;
    {
      std::lock_guard<std::mutex> ids_lock(ids_mu_);
      e.id = static_cast<uint32_t>(paths_.size());
      key = Store(path);
      paths_.push_back(key);
    }
    construct(Key{key, hash}, e);
  });
  if (!added && categorize && it->second.category == nullptr) {
    it->second.category = FileCategory(path);
  }
  return f(it->first, it->second);
}

PathTable::Entry PathTable::Intern(std::string_view path, bool categorize) {
  return WithEntry(path, categorize, [](const Key&, const Entry& e) { return e; });
}

std::string_view PathTable::InternText(std::string_view path) {
  return WithEntry(path, /*categorize=*/false, [](const Key& k, const Entry&) { return k.path; });
}

size_t PathTable::size() const {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return paths_.size();
}

std::string_view PathTable::Store(std::string_view path) {
  constexpr size_t kBlockBytes = 64 << 10;
  if (blocks_.empty() || path.size() > block_size_ - block_used_) {
    block_size_ = std::max(kBlockBytes, path.size());
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
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

std::vector<std::string_view> PathTable::Paths() const {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return paths_;
}

}  // namespace iotap::analyzer
