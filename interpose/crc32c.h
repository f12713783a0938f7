// CRC32C (Castagnoli), as TFRecord framing uses it.
//
// With SSE4.2 (checked once with cpuid) the crc32 instruction does the work,
// eight bytes at a time; elsewhere a table does, a byte at a time. Both give
// the standard CRC-32C: Crc32c("123456789", 9) == 0xe3069283.
//
//   uint32_t want = LoadLe32(header + 8);
//   bool ok = MaskCrc32c(Crc32c(header, 8)) == want;   // a record's length

#ifndef IOTAP_INTERPOSE_CRC32C_H_
#define IOTAP_INTERPOSE_CRC32C_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace iotap::interpose {

// CRC32C of `n` bytes, continuing from `crc` (the result of a previous call,
// or 0 to start).
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

// The same, computed with the table whatever the CPU (for tests).
uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc = 0);

// TFRecord's masked form of a CRC: rotated right by 15 bits, plus a constant.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

inline uint64_t LoadLe64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;  // x86-64 and AArch64 Linux are little-endian
}

inline uint32_t LoadLe32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// CRC32C of the 8 bytes of `v` (little-endian): one instruction with SSE4.2.
uint32_t Crc32cU64(uint64_t v);

// Whether the 12 bytes at `header` are a TFRecord header: a length and the
// masked CRC32C of that length.
inline bool ValidTfRecordLength(const uint8_t* header) {
  return MaskCrc32c(Crc32cU64(LoadLe64(header))) == LoadLe32(header + 8);
}

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CRC32C_H_
