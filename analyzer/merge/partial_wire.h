// A compact byte stream between the processes of one analysis (partial
// runs, shared_run.h): varints,
// zigzag varints for signed values, doubles (integers, as the analysis's
// sums mostly are, in a varint), strings with their length. Written in
// pieces of about `piece_bytes` handed to a callback, and read piece by
// piece, so neither side holds a whole stream.
//
//   std::string bytes;
//   WireWriter out([&](std::string_view piece) { bytes += piece; });
//   out.U(42);
//   out.Str("/data/a.jpg");
//   out.Finish();
//   bool given = false;  // one piece, then the end (an empty one)
//   WireReader in([&] { return std::exchange(given, true) ? std::string() : bytes; });
//   uint64_t n = in.U();        // 42
//   std::string path = in.Str();
//   if (!in.ok()) ...           // the stream ended early or held a bad value
//
// Words(x) writes a struct of 64-bit (or 32-bit) integer fields word by
// word, so a field added to such a struct travels without more code.

#ifndef IOTAP_ANALYZER_MERGE_PARTIAL_WIRE_H_
#define IOTAP_ANALYZER_MERGE_PARTIAL_WIRE_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

#include "proto/wire/varint.h"

namespace iotap::analyzer {

class WireWriter {
 public:
  explicit WireWriter(std::function<void(std::string_view)> flush,
                      size_t piece_bytes = size_t{4} << 20)
      : flush_(std::move(flush)), piece_bytes_(piece_bytes) {
    buffer_.reserve(piece_bytes_ + 16);
  }

  void U(uint64_t v) {
    uint8_t bytes[wire::kMaxVarintBytes];
    const uint8_t* end = wire::PutVarint(bytes, v);
    buffer_.append(reinterpret_cast<const char*>(bytes), static_cast<size_t>(end - bytes));
    if (buffer_.size() >= piece_bytes_) Flush();
  }
  void S(int64_t v) { U(wire::ZigZag(v)); }
  void D(double v);
  void Str(std::string_view s);
  // A struct whose every byte belongs to an integer field of 8 (or 4) bytes.
  template <typename T>
  void Words(const T& x) {
    static_assert(std::has_unique_object_representations_v<T> && sizeof(T) % 4 == 0);
    if constexpr (sizeof(T) % 8 == 0) {
      for (size_t i = 0; i < sizeof(T); i += 8) {
        uint64_t w;
        std::memcpy(&w, reinterpret_cast<const char*>(&x) + i, 8);
        U(w);
      }
    } else {
      for (size_t i = 0; i < sizeof(T); i += 4) {
        uint32_t w;
        std::memcpy(&w, reinterpret_cast<const char*>(&x) + i, 4);
        U(w);
      }
    }
  }
  // Hands on what is left.
  void Finish() { Flush(); }
  uint64_t bytes_written() const { return written_ + buffer_.size(); }

 private:
  void Flush();

  std::function<void(std::string_view)> flush_;
  size_t piece_bytes_;
  std::string buffer_;
  uint64_t written_ = 0;
};

// How many bytes of a partial went to what (IOTAP_MPI_TIMES prints them).
struct PartialSizes {
  uint64_t bitmaps = 0;    // busy time
  uint64_t series = 0;     // time series
  uint64_t results = 0;    // the trainer groups' parts of the report
  uint64_t processes = 0;  // each process's summary, marker steps, issues
  uint64_t files = 0;      // figures by path
  uint64_t total = 0;
};

class WireReader {
 public:
  // `next` returns the next piece of the stream; an empty one: no more.
  explicit WireReader(std::function<std::string()> next) : next_(std::move(next)) {}

  uint64_t U() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == piece_.size() && !Refill()) return 0;
      auto b = static_cast<uint8_t>(piece_[pos_++]);
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
    failed_ = true;
    return 0;
  }
  int64_t S() { return wire::UnZigZag(U()); }
  double D();
  std::string Str();
  template <typename T>
  void Words(T* x) {
    static_assert(std::has_unique_object_representations_v<T> && sizeof(T) % 4 == 0);
    if constexpr (sizeof(T) % 8 == 0) {
      for (size_t i = 0; i < sizeof(T); i += 8) {
        uint64_t w = U();
        std::memcpy(reinterpret_cast<char*>(x) + i, &w, 8);
      }
    } else {
      for (size_t i = 0; i < sizeof(T); i += 4) {
        auto w = static_cast<uint32_t>(U());
        std::memcpy(reinterpret_cast<char*>(x) + i, &w, 4);
      }
    }
  }
  // A count of things to read, each at least one byte: bad if the stream
  // could not hold them (a damaged stream must not make a huge allocation).
  uint64_t Count(uint64_t limit = uint64_t{1} << 32) {
    uint64_t n = U();
    if (n > limit) failed_ = true;
    return failed_ ? 0 : n;
  }
  void Fail() { failed_ = true; }
  bool ok() const { return !failed_; }
  // True once every piece has been read.
  bool AtEnd();

 private:
  bool Refill();

  std::function<std::string()> next_;
  std::string piece_;
  size_t pos_ = 0;
  bool ended_ = false;
  bool failed_ = false;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_MERGE_PARTIAL_WIRE_H_
