// Fuzzes the shim's TFRecord attribution (tfrecord_parser.h), which follows
// the framing of whatever bytes a traced program reads: any file, read in any
// pieces at any offsets, must be followed without a crash or undefined
// behaviour, and a file read from its start, in order, must give exactly the
// records a plain walk of the whole file finds, each with its offset, length
// and index. The CRC32C the parser checks headers with is compared with the
// table implementation on the same bytes.
//
// Input: byte 0 says how the file is read (bit 0: each header's CRC is made
// right first, so that the fuzzer explores framing rather than checksums;
// bit 1: reads jump to offsets the input chooses); bytes 1-8 seed the sizes
// and offsets of the reads; the rest is the file. Seeds: the fixtures'
// TFRecord files (tests/fuzz/make-corpus.py).

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "interpose/tfrecord/tfrecord_parser.h"
#include "proto/wire/crc32c.h"
#include "proto/wire/little_endian.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

using iotap::interpose::kTfFooterBytes;
using iotap::interpose::kTfHeaderBytes;
using iotap::interpose::TfRecordInfo;
using iotap::wire::Crc32cU64;
using iotap::wire::LoadLe64;
using iotap::wire::MaskCrc32c;
using iotap::wire::StoreLe32;

uint64_t Next(uint64_t* state) {  // splitmix64
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Read sizes as programs use them: a byte or a header at a time, a record's
// worth, or a large buffer.
size_t ReadSize(uint64_t* state) {
  uint64_t r = Next(state);
  switch (r % 4) {
    case 0:
      return 1 + (r >> 8) % 16;
    case 1:
      return kTfHeaderBytes;
    case 2:
      return 1 + (r >> 8) % 512;
    default:
      return 1 + (r >> 8) % 65536;
  }
}

// Gives every header on the framing's path a valid CRC of its length.
void FixHeaders(std::vector<uint8_t>* file) {
  size_t pos = 0;
  while (pos + kTfHeaderBytes <= file->size()) {
    uint8_t* h = file->data() + pos;
    uint64_t len = LoadLe64(h);
    StoreLe32(h + 8, MaskCrc32c(Crc32cU64(len)));
    if (len > file->size() - pos - kTfHeaderBytes) break;
    pos += kTfHeaderBytes + len;
    if (kTfFooterBytes > file->size() - pos) break;
    pos += kTfFooterBytes;
  }
}

// The records of `file` read whole from its start: each header checked, and
// a record counted once its data is all there.
std::vector<TfRecordInfo> Walk(const std::vector<uint8_t>& file) {
  std::vector<TfRecordInfo> out;
  size_t pos = 0;
  for (uint64_t index = 0; pos + kTfHeaderBytes <= file.size(); ++index) {
    const uint8_t* h = file.data() + pos;
    if (!iotap::interpose::ValidTfRecordLength(h)) break;
    uint64_t len = LoadLe64(h);
    if (len > file.size() - pos - kTfHeaderBytes) break;
    out.push_back(TfRecordInfo{static_cast<int64_t>(pos), len, index, 0, true});
    pos += kTfHeaderBytes + len;
    if (kTfFooterBytes > file.size() - pos) break;
    pos += kTfFooterBytes;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 9) return 0;
  uint8_t mode = data[0];
  uint64_t state;
  std::memcpy(&state, data + 1, 8);
  std::vector<uint8_t> file(data + 9, data + size);
  if (mode & 1) FixHeaders(&file);
  FUZZ_CHECK(iotap::wire::Crc32c(file.data(), file.size()) ==
             iotap::wire::Crc32cPortable(file.data(), file.size()));

  bool jumps = (mode & 2) != 0;
  iotap::interpose::TfRecordParser parser;
  std::vector<TfRecordInfo> seen;
  size_t offset = 0;
  int reads = 0;
  while (reads < 4096 && (offset < file.size() || (jumps && !file.empty()))) {
    if (jumps && Next(&state) % 4 == 0) offset = Next(&state) % file.size();
    if (offset >= file.size()) break;
    size_t n = ReadSize(&state);
    if (n > file.size() - offset) n = file.size() - offset;
    int64_t end = static_cast<int64_t>(offset + n);
    parser.Feed(static_cast<int64_t>(offset), file.data() + offset, n, [&](const TfRecordInfo& r) {
      FUZZ_CHECK(r.offset >= 0);
      FUZZ_CHECK(r.reads >= 1);
      // Its data ends within the bytes read so far.
      FUZZ_CHECK(r.length <= static_cast<uint64_t>(end));
      FUZZ_CHECK(r.offset + static_cast<int64_t>(kTfHeaderBytes + r.length) <= end);
      seen.push_back(r);
    });
    FUZZ_CHECK(parser.next_offset() == end);
    FUZZ_CHECK(parser.header_bytes() <= kTfHeaderBytes);
    offset += n;
    ++reads;
  }
  if (jumps) return 0;

  // The bytes read (all of the file unless the read limit came first).
  std::vector<TfRecordInfo> want = Walk(std::vector<uint8_t>(file.begin(), file.begin() + offset));
  FUZZ_CHECK(seen.size() == want.size());
  for (size_t i = 0; i < seen.size(); ++i) {
    FUZZ_CHECK(seen[i].offset == want[i].offset);
    FUZZ_CHECK(seen[i].length == want[i].length);
    FUZZ_CHECK(seen[i].index_known);
    FUZZ_CHECK(seen[i].index == want[i].index);
  }
  FUZZ_CHECK(parser.valid_headers() >= want.size());
  return 0;
}
