// CRC32C (Castagnoli), the checksum of TFRecord framing, which the shim
// checks to find record boundaries and the analyzer to read TensorBoard logs.
//
// With SSE4.2 (checked once with cpuid) the crc32 instruction does the work,
// eight bytes at a time; elsewhere tables do, eight bytes at a time
// (slicing-by-8). Both give the standard CRC-32C (reflected polynomial
// 0x82F63B78, initial and final XOR 0xFFFFFFFF):
// Crc32c("123456789", 9) == 0xE3069283.
//
//   uint32_t want = LoadLe32(header + 8);
//   bool ok = MaskCrc32c(Crc32c(header, 8)) == want;   // a record's length

#ifndef IOTAP_PROTO_WIRE_CRC32C_H_
#define IOTAP_PROTO_WIRE_CRC32C_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::wire {

// CRC32C of `n` bytes, continuing from `crc` (the result of a previous call,
// or 0 to start).
uint32_t Crc32c(const void* data, size_t n, uint32_t crc = 0);

// The same, computed with the tables whatever the CPU (for tests).
uint32_t Crc32cPortable(const void* data, size_t n, uint32_t crc = 0);

// CRC32C of the 8 bytes of `v` (little-endian): one instruction with SSE4.2.
uint32_t Crc32cU64(uint64_t v);

// TFRecord's masked form of a CRC: rotated right by 15 bits, plus a constant.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace iotap::wire

#endif  // IOTAP_PROTO_WIRE_CRC32C_H_
