// CRC32C (Castagnoli), the checksum of TFRecord framing.
//
//   uint32_t crc = Crc32c(data, size);
//   bool ok = MaskCrc32c(crc) == stored;   // TFRecord stores masked CRCs

#ifndef IOTAP_ANALYZER_INTERNAL_CRC32C_H_
#define IOTAP_ANALYZER_INTERNAL_CRC32C_H_

#include <cstddef>
#include <cstdint>

namespace iotap::analyzer::internal {

// CRC32C of `size` bytes (reflected polynomial 0x82F63B78, initial and final
// XOR 0xFFFFFFFF): 0xE3069283 for "123456789".
uint32_t Crc32c(const void* data, size_t size);

// TFRecord's mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
inline uint32_t MaskCrc32c(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_INTERNAL_CRC32C_H_
