// TFRecord files for the TFRecord tests, and their true record tables.
//
// RecordTable parses a file's framing here, independently of the shim (its
// own bitwise CRC32C), so the tests compare iotap with what the file holds.
// NpmTfRecordFile has a third-party writer, @roboflow/tfrecords from the
// npm registry, write a file (tests/integration/tfrecord_writer/): the package
// is installed once per build directory, and each file is written once and
// kept there, since that writer spends about a millisecond per record.

#ifndef IOTAP_TESTS_INTEGRATION_TFRECORD_FIXTURES_H_
#define IOTAP_TESTS_INTEGRATION_TFRECORD_FIXTURES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace iotap::testing {

struct TrueRecord {
  int64_t offset = 0;   // of the header
  uint64_t length = 0;  // of the data
  int64_t End() const { return offset + 12 + static_cast<int64_t>(length); }  // data end
  int64_t Next() const { return End() + 4; }                                  // footer end
};

// The records of a TFRecord file's contents, checking both CRCs of each.
// Fails the calling test if the framing or a CRC is wrong.
std::vector<TrueRecord> RecordTable(const std::string& contents);

// A DALI-style index of the records: "offset size" per line, size framed.
std::string IndexFile(const std::vector<TrueRecord>& records);

// The path of a file of `records` records written by @roboflow/tfrecords
// with `seed`, compressed as `compression` ("none", "gzip" or "zlib"), or ""
// with `why` set when npm or node cannot provide the writer.
std::string NpmTfRecordFile(int records, int seed, const std::string& compression,
                            std::string* why);

}  // namespace iotap::testing

#endif  // IOTAP_TESTS_INTEGRATION_TFRECORD_FIXTURES_H_
