// A vector indexed like std::vector that grows a chunk at a time: growing
// never moves what it holds, and never holds twice its size while a larger
// array is filled from the old one. For tables indexed by a dense id that
// grow through a run to millions of entries (a run's files by path id).
//
//   ChunkedVector<FileAccumulator> files;
//   files.resize(id + 1);   // new entries default-constructed
//   files[id].counts.Merge(c);
//
// References stay valid while it grows (until clear).

#ifndef IOTAP_ANALYZER_BASE_CHUNKED_VECTOR_H_
#define IOTAP_ANALYZER_BASE_CHUNKED_VECTOR_H_

#include <cstddef>
#include <memory>
#include <vector>

namespace iotap::analyzer {

template <typename T, size_t kChunk = 1024>
class ChunkedVector {
  static_assert((kChunk & (kChunk - 1)) == 0, "a power of two");

 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const T& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }

  // Grows to `n` entries (new ones default-constructed); never shrinks.
  void resize(size_t n) {
    while (chunks_.size() * kChunk < n) chunks_.push_back(std::make_unique<T[]>(kChunk));
    if (n > size_) size_ = n;
  }
  void clear() {
    chunks_.clear();
    size_ = 0;
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_CHUNKED_VECTOR_H_
