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

#ifndef IOTAP_ANALYZER_PATH_TABLE_H_
#define IOTAP_ANALYZER_PATH_TABLE_H_

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"

namespace iotap::analyzer {

class PathTable {
 public:
  struct Entry {
    uint32_t id = 0;
    const char* category = nullptr;  // FileCategory() of the path
  };

  // The path's entry, added if the table has not seen it yet.
  Entry Intern(std::string_view path);

  // Paths interned so far; ids are 0 to size() - 1.
  size_t size() const;
  const std::string& path(uint32_t id) const;

 private:
  // Shards by hash, so that threads interning different paths rarely wait
  // for each other; ids are handed out under `ids_mu_`, in interning order.
  static constexpr size_t kShards = 16;
  struct Shard {
    std::mutex mu;
    absl::flat_hash_map<std::string_view, Entry> entries;  // keys point into paths_
  };
  std::array<Shard, kShards> shards_;
  mutable std::mutex ids_mu_;
  std::deque<std::string> paths_;  // by id; a deque keeps the keys where they are
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_PATH_TABLE_H_
