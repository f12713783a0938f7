// Page-locked ("pinned") host memory, for telling whether the host side of a
// CUDA copy is pinned or pageable without asking the driver.
//
// Ranges come and go through cudaHostAlloc, cudaHostRegister, cuMemHostAlloc
// and their relatives, which are rare and slow themselves; every copy looks
// one pointer up. So the table is a sorted array of disjoint [begin, end)
// ranges under a sequence lock: writers serialise on a mutex, make the
// sequence odd, edit the array and make it even again; readers binary-search
// with plain loads, take no lock, store nothing, and retry if the sequence
// moved under them.
//
//   PinnedAdd(ptr, bytes);                    // after cudaHostAlloc succeeded
//   HostMemory m = PinnedLookup(src);         // on every copy
//   uint64_t bytes = PinnedRemove(ptr);       // before cudaFreeHost
//
// Memory is fixed (kMaxPinnedRanges ranges, in .bss). A range that does not
// fit is not kept, and from then on a pointer in no known range is kUnknown
// rather than kPageable: the table no longer knows every pinned range.

#ifndef IOTAP_INTERPOSE_CUDA_PINNED_RANGES_H_
#define IOTAP_INTERPOSE_CUDA_PINNED_RANGES_H_

#include <stdint.h>

namespace iotap::interpose {

inline constexpr uint32_t kMaxPinnedRanges = 1u << 13;

enum class HostMemory : uint8_t {
  kPageable,
  kPinned,
  kUnknown,  // the table overflowed, or a writer kept it busy too long
};

// Records [begin, begin + bytes) as pinned. Ranges it overlaps are dropped
// first: they must have been freed through a path the shim did not see.
void PinnedAdd(uintptr_t begin, uint64_t bytes);

// Forgets the range that starts at `begin`; returns its size, or 0 if no
// range starts there.
uint64_t PinnedRemove(uintptr_t begin);

// Whether `p` lies in a pinned range. Lock-free and allocation-free; safe
// on any thread at any time.
HostMemory PinnedLookup(uintptr_t p);

// For tests: forgets every range and the overflow.
void PinnedResetForTesting();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CUDA_PINNED_RANGES_H_
