#include "analyzer/merge/partial_wire.h"

#include <algorithm>
#include <cmath>

namespace iotap::analyzer {

namespace {
// An integer-valued double below this travels as a varint.
constexpr double kExactLimit = 4503599627370496.0;  // 2^52
}  // namespace

void WireWriter::D(double v) {
  // Tag 0: an integer (zigzag, shifted); tag 1: the eight bytes as they are.
  if (v == std::trunc(v) && std::fabs(v) < kExactLimit && !(v == 0 && std::signbit(v))) {
    auto i = static_cast<int64_t>(v);
    U(wire::ZigZag(i) << 1);
    return;
  }
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  U(1);
  for (int i = 0; i < 8; ++i) buffer_.push_back(static_cast<char>(bits >> (8 * i)));
}

void WireWriter::Str(std::string_view s) {
  U(s.size());
  buffer_.append(s);
  if (buffer_.size() >= piece_bytes_) Flush();
}

void WireWriter::Flush() {
  if (buffer_.empty()) return;
  written_ += buffer_.size();
  flush_(buffer_);
  buffer_.clear();
}

double WireReader::D() {
  uint64_t tag = U();
  if ((tag & 1) == 0) {
    return static_cast<double>(wire::UnZigZag(tag >> 1));
  }
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) {
    if (pos_ == piece_.size() && !Refill()) return 0;
    bits |= static_cast<uint64_t>(static_cast<uint8_t>(piece_[pos_++])) << (8 * i);
  }
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}

std::string WireReader::Str() {
  uint64_t n = Count();
  std::string s;
  while (s.size() < n && ok()) {
    if (pos_ == piece_.size() && !Refill()) break;
    size_t take = std::min<size_t>(n - s.size(), piece_.size() - pos_);
    s.append(piece_, pos_, take);
    pos_ += take;
  }
  return s;
}

bool WireReader::AtEnd() {
  if (pos_ < piece_.size()) return false;
  while (!ended_) {
    piece_ = next_();
    pos_ = 0;
    if (piece_.empty()) {
      ended_ = true;
    } else {
      return false;
    }
  }
  return true;
}

bool WireReader::Refill() {
  if (!AtEnd()) return true;
  failed_ = true;  // the stream ended in the middle of a value
  return false;
}

}  // namespace iotap::analyzer
