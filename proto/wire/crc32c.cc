#include "proto/wire/crc32c.h"

#include <atomic>

#include "proto/wire/little_endian.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <nmmintrin.h>
#endif

namespace iotap::wire {

namespace {

// The reflected Castagnoli polynomial.
constexpr uint32_t kPolynomial = 0x82f63b78u;

// Slicing-by-8 tables: entry[k][b] is the CRC of byte b followed by k zero
// bytes, so eight input bytes take eight lookups and no data-dependent loop.
struct Tables {
  uint32_t entry[8][256];
};

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t b = 0; b < 256; ++b) {
    uint32_t c = b;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t.entry[0][b] = c;
  }
  for (int k = 1; k < 8; ++k) {
    for (uint32_t b = 0; b < 256; ++b) {
      t.entry[k][b] = (t.entry[k - 1][b] >> 8) ^ t.entry[0][t.entry[k - 1][b] & 0xff];
    }
  }
  return t;
}

constinit const Tables kTables = MakeTables();

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

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t* p, size_t n, uint32_t crc) {
  uint64_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, LoadLe64(p));
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
  const auto& t = kTables.entry;
  uint32_t c = ~crc;
  for (; n >= 8; n -= 8, p += 8) {
    uint32_t lo = c ^ LoadLe32(p);
    c = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^
        t[3][p[4]] ^ t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
  }
  for (; n > 0; --n, ++p) c = t[0][(c ^ *p) & 0xff] ^ (c >> 8);
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

}  // namespace iotap::wire
