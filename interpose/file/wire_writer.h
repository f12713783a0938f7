// Hand-written protobuf wire encoder for the shim.
//
// The shim may not link libprotobuf (frameworks ship their own copies), so it
// writes the wire format of proto/iotap/trace.proto directly, Perfetto
// "protozero" style. A WireWriter appends to a caller-owned fixed buffer and
// never allocates; if the buffer is too small it stops writing and reports
// overflow, and the caller discards the packet.
//
// Nested messages reserve a 5-byte length and patch it when the message ends,
// using a non-minimal ("redundant") varint, which every protobuf parser
// accepts.
//
//   WireWriter w(buf, sizeof(buf));
//   size_t packet = w.BeginNested(1);       // Trace.packet
//   size_t clock = w.BeginNested(2);        // Packet.clock
//   w.Varint(1, monotonic_ns);
//   w.EndNested(clock);
//   w.EndNested(packet);
//   if (!w.overflow()) Write(buf, w.size());

#ifndef IOTAP_INTERPOSE_FILE_WIRE_WRITER_H_
#define IOTAP_INTERPOSE_FILE_WIRE_WRITER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/wire/varint.h"

namespace iotap::interpose {

// Wire types of the protobuf encoding.
inline constexpr uint32_t kWireVarint = 0;
inline constexpr uint32_t kWireFixed64 = 1;
inline constexpr uint32_t kWireLengthDelimited = 2;

// Bytes a nested message's length takes: the largest varint of 32 bits.
inline constexpr size_t kNestedLengthBytes = 5;

class WireWriter {
 public:
  WireWriter(uint8_t* buffer, size_t capacity)
      : begin_(buffer), pos_(buffer), end_(buffer + capacity) {}

  size_t size() const { return static_cast<size_t>(pos_ - begin_); }
  size_t remaining() const { return static_cast<size_t>(end_ - pos_); }
  // Drops everything after `size` (from an earlier size()) and clears
  // overflow, so a packet that did not fit can be retried after a flush.
  void Rewind(size_t size) {
    pos_ = begin_ + size;
    overflow_ = false;
  }
  bool overflow() const { return overflow_; }
  uint8_t* data() const { return begin_; }

  void Varint(uint32_t field, uint64_t v) {
    if (!Reserve(20)) return;
    pos_ = wire::PutVarint(pos_, Tag(field, kWireVarint));
    pos_ = wire::PutVarint(pos_, v);
  }
  // Omits the field when it is zero, as proto3 does.
  void VarintIfNonZero(uint32_t field, uint64_t v) {
    if (v != 0) Varint(field, v);
  }
  void Sint(uint32_t field, int64_t v) { Varint(field, wire::ZigZag(v)); }
  void Bool(uint32_t field, bool v) { Varint(field, v ? 1 : 0); }

  void Bytes(uint32_t field, const void* data, size_t n) {
    if (!Reserve(n + 20)) return;
    pos_ = wire::PutVarint(pos_, Tag(field, kWireLengthDelimited));
    pos_ = wire::PutVarint(pos_, n);
    if (n != 0) memcpy(pos_, data, n);
    pos_ += n;
  }
  void String(uint32_t field, const char* s) {
    Bytes(field, s, s ? strlen(s) : 0);
  }

  // Starts a length-delimited field whose content follows; returns a token
  // for EndNested.
  size_t BeginNested(uint32_t field) {
    if (!Reserve(10 + kNestedLengthBytes)) return 0;
    pos_ = wire::PutVarint(pos_, Tag(field, kWireLengthDelimited));
    size_t token = size();
    pos_ += kNestedLengthBytes;
    return token;
  }
  void EndNested(size_t token) {
    if (overflow_) return;
    uint8_t* len = begin_ + token;
    uint64_t n = static_cast<uint64_t>(pos_ - len) - kNestedLengthBytes;
    for (size_t i = 0; i < kNestedLengthBytes - 1; ++i) {
      len[i] = static_cast<uint8_t>(n & 0x7f) | 0x80;
      n >>= 7;
    }
    len[kNestedLengthBytes - 1] = static_cast<uint8_t>(n & 0x7f);
  }

  // Raw access for packed columns: make room for `n` bytes and return where
  // they go; Commit advances past what was written.
  uint8_t* Claim(size_t n) { return Reserve(n) ? pos_ : nullptr; }
  void Commit(uint8_t* new_pos) { pos_ = new_pos; }

  // Writes a packed column header for `payload_bytes` of varints.
  void PackedHeader(uint32_t field, size_t payload_bytes) {
    if (!Reserve(20)) return;
    pos_ = wire::PutVarint(pos_, Tag(field, kWireLengthDelimited));
    pos_ = wire::PutVarint(pos_, payload_bytes);
  }

  // Writes `value(i)` for i in [0, n) as the packed varint field `field`,
  // encoded first in `scratch` (room for n * wire::kMaxVarintBytes), and
  // omits the field when every value is zero, as proto3 does.
  template <typename ValueFn>
  void PackedVarints(uint32_t field, uint32_t n, uint8_t* scratch, ValueFn value) {
    uint8_t* p = scratch;
    uint64_t any = 0;
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t v = value(i);
      any |= v;
      p = wire::PutVarint(p, v);
    }
    if (any == 0) return;
    size_t bytes = static_cast<size_t>(p - scratch);
    PackedHeader(field, bytes);
    if (uint8_t* dst = Claim(bytes)) {
      memcpy(dst, scratch, bytes);
      Commit(dst + bytes);
    }
  }

 private:
  static uint64_t Tag(uint32_t field, uint32_t wire_type) {
    return (static_cast<uint64_t>(field) << 3) | wire_type;
  }
  bool Reserve(size_t n) {
    if (overflow_ || static_cast<size_t>(end_ - pos_) < n) {
      overflow_ = true;
      return false;
    }
    return true;
  }

  uint8_t* begin_;
  uint8_t* pos_;
  uint8_t* end_;
  bool overflow_ = false;
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_FILE_WIRE_WRITER_H_
