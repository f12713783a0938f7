// Varints and zigzag: the integer encodings of the protobuf wire format, as
// the shim writes them (interpose/file/wire_writer.h) and the analyzer reads
// them. Header-only, with no C++ runtime, so that the shim can use it.
//
//   uint8_t buf[kMaxVarintBytes];
//   uint8_t* end = PutVarint(buf, ZigZag(-5));
//   const uint8_t* p = buf;
//   uint64_t v;
//   if (ReadVarint(&p, end, &v)) assert(UnZigZag(v) == -5);
//
// Packed columns of varints have a faster reader, NextPaddedVarint, for
// buffers with 8 readable bytes past every varint:
//
//   int64_t n = CountVarints(column, size);       // -1 if the last one is cut
//   ... copy the column into `padded`, followed by 8 bytes or more ...
//   bool ok = true;
//   for (int64_t i = 0; i < n; ++i) use(NextPaddedVarint<ShiftPacker>(padded, ok));

#ifndef IOTAP_PROTO_WIRE_VARINT_H_
#define IOTAP_PROTO_WIRE_VARINT_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <bit>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace iotap::wire {

// The most bytes a varint of 64 bits takes, and the most libprotobuf reads.
inline constexpr size_t kMaxVarintBytes = 10;

// Signed values as sint64 stores them: small magnitudes, small varints.
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

// ZigZag's inverse.
inline int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1)); }

// Writes `v` as a varint at `p`, returns the byte after it. `p` must have room
// for kMaxVarintBytes.
inline uint8_t* PutVarint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

// Reads the varint at `*p` (before `end`) into `*value` and moves `*p` past
// it; false if it does not end before `end` or within kMaxVarintBytes, as
// libprotobuf reads one (bits past the 64th are dropped). `*p` is then
// somewhere inside the varint.
inline bool ReadVarint(const uint8_t** p, const uint8_t* end, uint64_t* value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t b = *(*p)++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) {
      *value = v;
      return true;
    }
  }
  return false;
}

// Packs the 7-bit groups of the varint that starts `x`'s bytes, 1 to 8 of
// them: `stops` has bit 7 set in each byte of `x` without the continuation
// bit (the varint ends at the lowest), and is never 0. The bytes past the
// varint's may hold anything.
struct ShiftPacker {
  static uint64_t Pack(uint64_t x, uint64_t stops) {
    // The varint's bytes (those up to the lowest bit of `stops`), then pairs
    // of bytes, 16-bit and 32-bit halves, without a branch on the length.
    uint64_t v = x & (stops ^ (stops - 1));
    v = ((v & 0x7f007f007f007f00ull) >> 1) | (v & 0x007f007f007f007full);
    v = ((v & 0x3fff00003fff0000ull) >> 2) | (v & 0x00003fff00003fffull);
    return ((v & 0x0fffffff00000000ull) >> 4) | (v & 0x000000000fffffffull);
  }
};

#if defined(__x86_64__)
// The same in one instruction, BMI2's PEXT, where the processor has it and
// runs it fast. Written as assembly so that the rest of the build keeps the
// baseline instruction set; used only after a check (PextIsFast).
struct PextPacker {
  static uint64_t Pack(uint64_t x, uint64_t stops) {
    uint64_t mask = (stops ^ (stops - 1)) & 0x7f7f7f7f7f7f7f7full;
    uint64_t v;
    asm("pextq %2, %1, %0" : "=r"(v) : "r"(x), "r"(mask));
    return v;
  }
};

// Whether this processor runs PextPacker faster than ShiftPacker (and has
// BMI1 beside BMI2, as every one with BMI2 does: a decoder built for both
// may use either).
inline bool PextIsFast() {
  __builtin_cpu_init();
  // AMD's Zen 1 and 2 run PEXT in microcode, slower than the shifts.
  return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("bmi") &&
         !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
}
#endif

// Reads the varint at `p` and moves past it. The bytes after it must be
// readable up to p + 8 (a padded copy of the column). One that takes more
// than kMaxVarintBytes, which libprotobuf rejects, clears `ok` and leaves `p`
// where it is.
template <typename Packer>
inline uint64_t NextPaddedVarint(const uint8_t*& p, bool& ok) {
  static_assert(std::endian::native == std::endian::little);
  uint64_t x;
  memcpy(&x, p, 8);
  uint64_t stops = ~x & 0x8080808080808080ull;
  if (stops != 0) [[likely]] {
    // Up to 8 bytes: those up to the first without a continuation bit.
    p += (static_cast<unsigned>(std::countr_zero(stops)) >> 3) + 1;
    return Packer::Pack(x, stops);
  }
  uint64_t v = 0;
  for (int k = 0; k < static_cast<int>(kMaxVarintBytes); ++k) {
    uint64_t b = p[k];
    v |= (b & 0x7f) << (7 * k);
    if (b < 0x80) {
      p += k + 1;
      return v;
    }
  }
  ok = false;
  return 0;
}

// Varints in a packed column of `size` bytes: bytes without the continuation
// bit, or -1 if the last varint is cut.
inline int64_t CountVarints(const uint8_t* p, size_t size) {
  if (size > 0 && p[size - 1] >= 0x80) return -1;
  int64_t n = 0;
  size_t i = 0;
#if defined(__SSE2__)
  // Sixteen bytes at a time (SSE2 is in every x86-64): a byte with the top
  // bit set is negative, and its comparison's -1 counts it as a
  // continuation; the byte lanes are summed every 255 blocks, before they
  // can overflow.
  const __m128i zero = _mm_setzero_si128();
  while (i + 16 <= size) {
    __m128i continuations = zero;
    size_t blocks = std::min<size_t>((size - i) / 16, 255);
    for (size_t b = 0; b < blocks; ++b, i += 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      continuations = _mm_sub_epi8(continuations, _mm_cmplt_epi8(x, zero));
    }
    __m128i sums = _mm_sad_epu8(continuations, zero);  // two 64-bit lane sums
    int64_t counted = _mm_cvtsi128_si64(sums) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
    n += static_cast<int64_t>(blocks * 16) - counted;
  }
#endif
  // Eight bytes at a time: a 1 per byte whose top bit is clear, summed into
  // the word's top byte by one multiplication (the sum is at most 8).
  for (; i + 8 <= size; i += 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    n += static_cast<int64_t>((((~x & 0x8080808080808080ull) >> 7) * 0x0101010101010101ull) >> 56);
  }
  for (; i < size; ++i) n += p[i] < 0x80;
  return n;
}

}  // namespace iotap::wire

#endif  // IOTAP_PROTO_WIRE_VARINT_H_
