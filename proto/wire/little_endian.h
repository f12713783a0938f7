// Little-endian integers at unaligned addresses: the fixed-width fields of
// the formats iotap reads and writes (TFRecord lengths, zstd frame magics).
//
//   uint64_t length = LoadLe64(header);
//   uint32_t stored_crc = LoadLe32(header + 8);

#ifndef IOTAP_PROTO_WIRE_LITTLE_ENDIAN_H_
#define IOTAP_PROTO_WIRE_LITTLE_ENDIAN_H_

#include <stdint.h>
#include <string.h>

#include <bit>

namespace iotap::wire {

// The loads and stores copy bytes as they are: iotap runs on little-endian
// processors only (x86-64, AArch64 Linux).
static_assert(std::endian::native == std::endian::little);

// The 4 bytes at `p` as a little-endian number.
inline uint32_t LoadLe32(const void* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// The 8 bytes at `p` as a little-endian number.
inline uint64_t LoadLe64(const void* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

// Writes `v` at `p` as 4 little-endian bytes.
inline void StoreLe32(void* p, uint32_t v) { memcpy(p, &v, 4); }

// Writes `v` at `p` as 8 little-endian bytes.
inline void StoreLe64(void* p, uint64_t v) { memcpy(p, &v, 8); }

}  // namespace iotap::wire

#endif  // IOTAP_PROTO_WIRE_LITTLE_ENDIAN_H_
