#include "interpose/crc32c.h"

#include <atomic>

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace iotap::interpose {

namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82f63b78u;

struct Table {
  uint32_t entry[256];
};

constexpr Table MakeTable() {
  Table t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t.entry[i] = c;
  }
  return t;
}

constinit const Table kTable = MakeTable();

#if defined(__x86_64__)
// 0 = not checked yet, 1 = the CPU has SSE4.2, 2 = it has not.
constinit std::atomic<int> g_has_sse42{0};

bool HasSse42() {
  int known = g_has_sse42.load(std::memory_order_relaxed);
  if (__builtin_expect(known != 0, 1)) return known == 1;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  bool yes = __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_SSE4_2) != 0;
  g_has_sse42.store(yes ? 1 : 2, std::memory_order_relaxed);
  return yes;
}

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* p, size_t n,
                                                       uint32_t crc) {
  uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t c32 = static_cast<uint32_t>(c);
  for (; n > 0; --n, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42U64(uint64_t v) {
  return ~static_cast<uint32_t>(_mm_crc32_u64(0xffffffffu, v));
}
#endif

}  // namespace

uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (size_t i = 0; i < n; ++i) c = kTable.entry[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return ~c;
}

uint32_t Crc32cU64(uint64_t v) {
#if defined(__x86_64__)
  if (HasSse42()) return Crc32cSse42U64(v);
#endif
  return Crc32cPortable(&v, 8);
}

uint32_t Crc32c(const void* data, size_t n, uint32_t crc) {
#if defined(__x86_64__)
  if (HasSse42()) return Crc32cSse42(static_cast<const uint8_t*>(data), n, crc);
#endif
  return Crc32cPortable(data, n, crc);
}

}  // namespace iotap::interpose
