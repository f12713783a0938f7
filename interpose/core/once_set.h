// OnceSet: remembers which interned ids a layer has already described, so an
// object (an HDF5 dataset, a TFRecord file) is described once per trace file
// however often it is opened.
//
// Direct-mapped and lossy on purpose: an id that collides with another one
// evicts it, and the evicted object is described again on its next open. A
// repeated description is harmless (readers keep the last), and the set stays
// a fixed, lock-free array.
//
//   constinit OnceSet<4096> g_described;
//   if (g_described.First(id)) WriteDescription(id);

#ifndef IOTAP_INTERPOSE_CORE_ONCE_SET_H_
#define IOTAP_INTERPOSE_CORE_ONCE_SET_H_

#include <stddef.h>
#include <stdint.h>

#include <atomic>

namespace iotap::interpose {

template <size_t N>
class OnceSet {
  static_assert((N & (N - 1)) == 0, "N must be a power of two");

 public:
  constexpr OnceSet() = default;

  // True the first time `id` (not 0) is seen since it was last evicted.
  // Cheap enough for every call (a load, and a store only when new).
  bool First(uint32_t id) {
    std::atomic<uint32_t>& slot = slots_[id & (N - 1)];
    if (slot.load(std::memory_order_relaxed) == id) return false;
    return slot.exchange(id, std::memory_order_relaxed) != id;
  }

  // Whether `id` has been seen (and not evicted since), without noting it.
  bool Contains(uint32_t id) const {
    return slots_[id & (N - 1)].load(std::memory_order_relaxed) == id;
  }

  // Forgets everything: a fork child starts a new trace file, which needs
  // every description again. Writes only the slots in use: a page of the
  // table never touched stays unallocated, one the parent touched stays
  // shared with it.
  void Clear() {
    for (auto& s : slots_) {
      if (s.load(std::memory_order_relaxed) != 0) s.store(0, std::memory_order_relaxed);
    }
  }

 private:
  std::atomic<uint32_t> slots_[N] = {};
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_ONCE_SET_H_
