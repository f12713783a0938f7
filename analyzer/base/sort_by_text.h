// Sorting rows whose order breaks ties by a string, such as files most bytes
// first and then by path, without comparing whole strings at every step.
//
// The paths of a run's files share long beginnings
// ("/datasets/imagenet/train/n01440764/", "/dev/shm/torch_2040_"), and many
// rows tie on their number (files of one size, shared-memory files of no
// bytes), so a comparison sort of (number, path) spends most of its time in
// memcmp over the same leading bytes. SortByKeyThenText sorts by the number
// first (a radix sort); then each run of rows with equal numbers by their
// text, comparing first the eight bytes from where the run's texts begin to
// differ, as one integer, and the rest of the texts only where those are
// equal. The order is exactly that of comparing (key, text) with
// std::string_view's operator<.
//
//   struct Row { uint64_t bytes; std::string_view path; };
//   std::vector<Row> rows = ...;
//   SortByKeyThenText(rows, [](const Row& r) { return ~r.bytes; },  // most first
//                     [](const Row& r) { return r.path; });

#ifndef IOTAP_ANALYZER_BASE_SORT_BY_TEXT_H_
#define IOTAP_ANALYZER_BASE_SORT_BY_TEXT_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace iotap::analyzer {

namespace internal {

// The eight bytes of `s` from `at` as a big-endian integer, zeros past its
// end: integers compare as the bytes do (unsigned, as std::string_view
// compares characters), and a text ending within them as a shorter one.
inline uint64_t EightBytesAt(std::string_view s, size_t at) {
  unsigned char b[8] = {};
  if (at < s.size()) std::memcpy(b, s.data() + at, std::min<size_t>(8, s.size() - at));
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

// The length of the beginning all of `texts` share.
template <typename It, typename TextOf>
size_t SharedBeginning(It first, It last, TextOf text_of) {
  const std::string_view head = text_of(*first);
  size_t shared = head.size();
  for (It it = first + 1; it != last && shared > 0; ++it) {
    const std::string_view t = text_of(*it);
    size_t n = std::min(shared, t.size());
    size_t i = 0;
    while (i < n && head[i] == t[i]) ++i;
    shared = i;
  }
  return shared;
}

// Sorts `v` by `.key`, stably: a radix sort, 11 bits at a time from the
// lowest, passing over the digits every key shares (the high bits of byte
// counts), where a comparison sort would take log2(n) passes.
template <typename T>
void SortByKey(std::vector<T>& v) {
  constexpr int kBits = 11;
  constexpr size_t kBuckets = size_t{1} << kBits;
  if (v.size() < 256) {
    std::stable_sort(v.begin(), v.end(), [](const T& a, const T& b) { return a.key < b.key; });
    return;
  }
  uint64_t differ = 0;
  for (const T& x : v) differ |= x.key ^ v.front().key;
  std::vector<T> out(v.size());
  std::vector<size_t> start(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    if (((differ >> shift) & (kBuckets - 1)) == 0) continue;
    std::fill(start.begin(), start.end(), 0);
    for (const T& x : v) ++start[(x.key >> shift) & (kBuckets - 1)];
    size_t at = 0;
    for (size_t& s : start) {
      const size_t n = s;
      s = at;
      at += n;
    }
    for (T& x : v) out[start[(x.key >> shift) & (kBuckets - 1)]++] = std::move(x);
    v.swap(out);
  }
}

}  // namespace internal

// Sorts `rows` by key_of(row) (an unsigned integer, smallest first), then by
// text_of(row) (std::string_view, in its order). Each key is taken once:
// key_of may read far from the row. Not stable: rows with the same key and
// text may end in any order.
template <typename Row, typename KeyOf, typename TextOf>
void SortByKeyThenText(std::vector<Row>& rows, KeyOf key_of, TextOf text_of) {
  struct Keyed {
    uint64_t key;
    uint64_t eight;  // of the text, where its run's texts first differ
    size_t index;    // in `rows`
  };
  std::vector<Keyed> keyed(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) keyed[i] = Keyed{key_of(rows[i]), 0, i};
  internal::SortByKey(keyed);
  auto text = [&](const Keyed& k) { return text_of(rows[k.index]); };
  for (auto first = keyed.begin(); first != keyed.end();) {
    auto last = first + 1;
    while (last != keyed.end() && last->key == first->key) ++last;
    if (last - first > 1) {
      // The run's texts compared from where they first differ.
      const size_t at = internal::SharedBeginning(first, last, text);
      for (auto it = first; it != last; ++it) it->eight = internal::EightBytesAt(text(*it), at);
      std::sort(first, last, [&](const Keyed& a, const Keyed& b) {
        if (a.eight != b.eight) return a.eight < b.eight;
        return text(a).substr(at) < text(b).substr(at);
      });
    }
    first = last;
  }
  std::vector<Row> sorted;
  sorted.reserve(rows.size());
  for (const Keyed& k : keyed) sorted.push_back(std::move(rows[k.index]));
  rows = std::move(sorted);
}

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_BASE_SORT_BY_TEXT_H_
