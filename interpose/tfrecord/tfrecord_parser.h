// Follows the framing of a TFRecord file through the bytes a program reads.
//
// A TFRecord file is a sequence of records, each framed as
//
//   uint64 length | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)
//
// (little-endian). The parser sees every read of one descriptor: the file
// offset it started at and the bytes it returned, in the order the reads
// happened, however they cut the framing (many records in one 256 KiB read,
// a 12-byte header read then a data read, a record split over several reads).
// It reports each record once its data has been delivered, with its offset,
// data length, index and how many reads it took.
//
// States: kHeader (collecting the 12 header bytes), kData (skipping the
// record's data), kFooter (skipping the 4-byte data CRC), kLost (a header
// failed its CRC: nothing is reported until the program reads somewhere
// else). A read that does not start where the previous one ended (a seek, a
// pread at another offset: index-driven random access) resynchronises: a
// header is expected at the new offset. The record index is known while the
// parser has followed the file without a break from offset 0; after a jump
// elsewhere it is unknown (the offset still names the record). Skipping only
// a record's 4-byte footer keeps the index. Data CRCs are not checked: that
// would cost as much as the read itself; each header's CRC is.
//
//   TfRecordParser p;
//   p.Feed(0, buf, n, [](const TfRecordInfo& r) { ... });

#ifndef IOTAP_INTERPOSE_TFRECORD_TFRECORD_PARSER_H_
#define IOTAP_INTERPOSE_TFRECORD_TFRECORD_PARSER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "proto/wire/crc32c.h"
#include "proto/wire/little_endian.h"

namespace iotap::interpose {

// Bytes of framing around a record's data.
inline constexpr uint64_t kTfHeaderBytes = 12;
inline constexpr uint64_t kTfFooterBytes = 4;

// Whether the 12 bytes at `header` are a TFRecord header: a length and the
// masked CRC32C of that length.
inline bool ValidTfRecordLength(const uint8_t* header) {
  return wire::MaskCrc32c(wire::Crc32cU64(wire::LoadLe64(header))) == wire::LoadLe32(header + 8);
}

// A record whose data has been read.
struct TfRecordInfo {
  int64_t offset;     // of its header in the file
  uint64_t length;    // of its data
  uint64_t index;     // 0-based position in the file, when index_known
  uint32_t reads;     // reads that delivered bytes of its header and data
  bool index_known;
};

class TfRecordParser {
 public:
  enum State : uint8_t { kHeader, kData, kFooter, kLost };

  State state() const { return state_; }
  // Header bytes collected so far, and the header itself (valid once
  // header_bytes() == 12, until the next record starts).
  uint32_t header_bytes() const { return have_; }
  const uint8_t* header() const { return header_; }
  // Offset after the last byte fed (-1 before any).
  int64_t next_offset() const { return next_offset_; }
  // Headers whose CRC matched so far.
  uint64_t valid_headers() const { return valid_headers_; }

  // Feeds the `n` bytes one read returned, starting at file offset `offset`;
  // calls sink(const TfRecordInfo&) for each record whose data ends in them.
  template <typename Sink>
  void Feed(int64_t offset, const uint8_t* p, size_t n, Sink&& sink) {
    if (n == 0) return;
    if (offset != next_offset_) Resynchronise(offset);
    next_offset_ = offset + static_cast<int64_t>(n);
    if ((state_ == kHeader && have_ > 0) || state_ == kData) ++reads_;
    while (n > 0) {
      if (state_ == kHeader && have_ == 0) {
        // The common case of buffered reads: whole records in view, each
        // handled in one step.
        while (n >= kTfHeaderBytes + kTfFooterBytes) {
          uint64_t len = wire::LoadLe64(p);
          if (len > n - kTfHeaderBytes - kTfFooterBytes) break;
          if (!ValidTfRecordLength(p)) {
            memcpy(header_, p, kTfHeaderBytes);
            have_ = kTfHeaderBytes;
            state_ = kLost;
            return;
          }
          ++valid_headers_;
          sink(TfRecordInfo{record_offset_, len, index_, 1, index_known_});
          uint64_t framed = kTfHeaderBytes + len + kTfFooterBytes;
          record_offset_ += static_cast<int64_t>(framed);
          ++index_;
          p += framed;
          n -= framed;
        }
        if (n == 0) break;
      }
      switch (state_) {
        case kHeader: {
          if (have_ == 0) {
            reads_ = 1;
            if (n >= kTfHeaderBytes) {  // the common case: a whole header in view
              memcpy(header_, p, kTfHeaderBytes);
              have_ = kTfHeaderBytes;
              p += kTfHeaderBytes;
              n -= kTfHeaderBytes;
              StartData(sink);
              break;
            }
          }
          size_t take = kTfHeaderBytes - have_ < n ? kTfHeaderBytes - have_ : n;
          memcpy(header_ + have_, p, take);
          have_ += static_cast<uint32_t>(take);
          p += take;
          n -= take;
          if (have_ == kTfHeaderBytes) StartData(sink);
          break;
        }
        case kData: {
          uint64_t take = data_left_ < n ? data_left_ : n;
          data_left_ -= take;
          p += take;
          n -= take;
          if (data_left_ == 0) EndData(sink);
          break;
        }
        case kFooter: {
          size_t take = kTfFooterBytes - footer_have_ < n ? kTfFooterBytes - footer_have_ : n;
          footer_have_ += static_cast<uint32_t>(take);
          p += take;
          n -= take;
          if (footer_have_ == kTfFooterBytes) NextRecord();
          break;
        }
        case kLost:
          return;
      }
    }
  }

 private:
  // The offset just after the current record's footer.
  int64_t RecordEnd() const {
    return record_offset_ + static_cast<int64_t>(kTfHeaderBytes + length_ + kTfFooterBytes);
  }

  void Resynchronise(int64_t offset) {
    if (state_ == kFooter && offset == RecordEnd()) {
      NextRecord();  // the program skipped the data CRC: same framing
      return;
    }
    bool same_record = offset == record_offset_ && state_ != kLost;
    state_ = kHeader;
    have_ = 0;
    if (!same_record) {
      record_offset_ = offset;
      index_known_ = offset == 0;
      index_ = 0;
    }
  }

  template <typename Sink>
  void StartData(Sink&& sink) {
    if (!ValidTfRecordLength(header_)) {
      state_ = kLost;
      return;
    }
    ++valid_headers_;
    length_ = wire::LoadLe64(header_);
    data_left_ = length_;
    state_ = kData;
    if (data_left_ == 0) EndData(sink);
  }

  template <typename Sink>
  void EndData(Sink&& sink) {
    sink(TfRecordInfo{record_offset_, length_, index_, reads_, index_known_});
    state_ = kFooter;
    footer_have_ = 0;
  }

  void NextRecord() {
    record_offset_ = RecordEnd();
    ++index_;
    state_ = kHeader;
    have_ = 0;
    reads_ = 0;
  }

  int64_t next_offset_ = -1;
  int64_t record_offset_ = 0;
  uint64_t length_ = 0;
  uint64_t data_left_ = 0;
  uint64_t index_ = 0;
  uint64_t valid_headers_ = 0;
  uint32_t reads_ = 0;
  uint32_t have_ = 0;
  uint32_t footer_have_ = 0;
  State state_ = kHeader;
  bool index_known_ = true;  // at offset 0, before any read, the parser is at record 0
  uint8_t header_[kTfHeaderBytes] = {};
};

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_TFRECORD_TFRECORD_PARSER_H_
