// Streaming reads of a file that may be gzip-compressed.
//
// Step logs come plain or as .gz (PyTorch's profiler writes .json.gz), and can
// be hundreds of megabytes: readers take them a buffer at a time. A gzip file
// is recognised by its contents, not its name, and decompressed on the fly;
// anything else is read as it is.
//
//   absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
//   char buf[65536];
//   for (;;) {
//     absl::StatusOr<size_t> n = (*in)->Read(buf, sizeof(buf));
//     if (!n.ok()) ...  // "FILE: the gzip stream is cut short after N bytes ..."
//     if (*n == 0) break;
//   }

#ifndef IOTAP_ANALYZER_STEPS_BYTE_SOURCE_H_
#define IOTAP_ANALYZER_STEPS_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace iotap::analyzer {

class ByteSource {
 public:
  // Opens `path`; an error names it and says why it cannot be read.
  static absl::StatusOr<std::unique_ptr<ByteSource>> Open(const std::string& path);
  ~ByteSource();
  ByteSource(const ByteSource&) = delete;
  ByteSource& operator=(const ByteSource&) = delete;

  // Reads up to `size` bytes (fewer only at the end); 0 at the end of the
  // data. An error (a read error, a gzip stream that is damaged or cut short)
  // names the file and how far reading got; every byte before it has been
  // delivered by earlier calls.
  absl::StatusOr<size_t> Read(char* buffer, size_t size);

  const std::string& path() const { return path_; }
  bool compressed() const { return compressed_; }
  // Bytes delivered so far (uncompressed).
  uint64_t offset() const { return offset_; }

 private:
  ByteSource(std::string path, void* gz, bool compressed)
      : path_(std::move(path)), gz_(gz), compressed_(compressed) {}

  std::string path_;
  void* gz_;  // gzFile
  bool compressed_;
  uint64_t offset_ = 0;
};

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_STEPS_BYTE_SOURCE_H_
