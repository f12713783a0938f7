// A run-wide table of file paths, shared by the analyses of every process.
//
// Each process's trace interns its own strings, so the same dataset file has
// a different id in every worker that reads it. PathTable gives each
// distinct path one dense id for the whole run, and works out its category
// (FileCategory) once, however many processes touch it: the per-process
// analysis keeps its files in a flat array beside their run ids, and the run
// merges them by id, without hashing or copying a path per process and file.
//
//   PathTable paths;
//   PathTable::Entry e = paths.Intern("/data/train/00001.jpg");
//   // e.id: the same for this path in every process; e.category: "data"
//   ...
//   paths.path(e.id);  // "/data/train/00001.jpg"
//
// Intern is safe to call from several threads at once; path() and size()
// are for after the reading, when no thread interns any more.

#ifndef IOTAP_ANALYZER_READ_PATH_TABLE_H_
#define IOTAP_ANALYZER_READ_PATH_TABLE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"

namespace iotap::analyzer {

// A path's category: "system" (/proc, /sys, /dev, and multiprocessing's
// /tmp/pymp-* sockets and files), "runtime" (the Python installation, shared
// libraries, site-packages, conda, pyenv and virtual environments, /etc,
// /usr, any bin/ directory, *.py, *.pyc, *.so) or "data" (everything else).
const char* FileCategory(std::string_view path);

class PathTable {
 public:
  struct Entry {
    uint32_t id = 0;
    const char* category = nullptr;  // FileCategory() of the path
  };

  // The path's entry, added if the table has not seen it yet. Without
  // `categorize`, the entry's category may be null (not worked out yet):
  // what only counts needs no category, and working one out is most of the
  // cost of interning a new path.
  Entry Intern(std::string_view path, bool categorize = true);
  // The path as the table keeps it (interned, uncategorized, if new): valid
  // while the table lives, for a reader that would otherwise keep a copy of
  // its own (ProcessTrace::set_shared_paths).
  std::string_view InternText(std::string_view path);

  // Paths interned so far; ids are 0 to size() - 1.
  size_t size() const;
  std::string_view path(uint32_t id) const;
  // Every path so far, by id (one lock for all, where path() takes one each).
  std::vector<std::string_view> Paths() const;

 private:
  // Shards by hash, so that threads interning different paths rarely wait
  // for each other; ids are handed out under `ids_mu_`, in interning order.
  static constexpr size_t kShards = 16;
  // A path with Abseil's own hash of its bytes (its std::string_view hash is
  // the standard library's, several times slower), worked out once: a
  // shard's table that grows takes each key's hash as it stands instead of
  // hashing every path it holds again.
  struct Key {
    std::string_view path;
    size_t hash;
  };
  static size_t HashOf(std::string_view s) {
    return absl::HashOf(absl::string_view(s.data(), s.size()));
  }
  struct KeyHash {
    size_t operator()(const Key& k) const { return k.hash; }
  };
  struct KeyEq {
    bool operator()(const Key& a, const Key& b) const { return a.path == b.path; }
  };
  struct Shard {
    std::mutex mu;
    absl::flat_hash_map<Key, Entry, KeyHash, KeyEq> entries;  // keys point into paths_
  };
  std::array<Shard, kShards> shards_;
  // Finds or adds `path` and calls f(key, entry) under its shard's lock.
  template <typename F>
  auto WithEntry(std::string_view path, bool categorize, F f);
  // Copies `path` into blocks_ (under ids_mu_).
  std::string_view Store(std::string_view path);

  mutable std::mutex ids_mu_;
  std::vector<std::string_view> paths_;  // by id, into blocks_
  // The paths' bytes, side by side: a lookup that finds its path reads it
  // from memory a neighbour's lookup may have brought into the cache.
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_size_ = 0;
  size_t block_used_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_READ_PATH_TABLE_H_
