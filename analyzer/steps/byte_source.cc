#include "analyzer/steps/byte_source.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace iotap::analyzer {

absl::StatusOr<std::unique_ptr<ByteSource>> ByteSource::Open(const std::string& path) {
  // zlib reads a file that is not gzip as it is ("transparent" mode).
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    int err = errno;
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot open: ", err != 0 ? std::strerror(err) : "out of memory"));
  }
  gzbuffer(gz, 256 * 1024);
  // gzdirect() knows only after the first read; peek at one byte.
  int c = gzgetc(gz);
  if (c != -1) gzungetc(c, gz);
  bool compressed = gzdirect(gz) == 0;
  return std::unique_ptr<ByteSource>(new ByteSource(path, gz, compressed));
}

ByteSource::~ByteSource() { gzclose_r(static_cast<gzFile>(gz_)); }

absl::StatusOr<size_t> ByteSource::Read(char* buffer, size_t size) {
  gzFile gz = static_cast<gzFile>(gz_);
  size_t done = 0;
  while (done < size) {
    unsigned want = static_cast<unsigned>(std::min<size_t>(size - done, INT_MAX / 2));
    int n = gzread(gz, buffer + done, want);
    int code = Z_OK;
    const char* message = gzerror(gz, &code);
    if (n < 0 || (code != Z_OK && code != Z_BUF_ERROR)) {
      std::string why = code == Z_ERRNO ? std::strerror(errno) : message;
      return absl::DataLossError(absl::StrCat(path_, ": ", compressed_ ? "gzip data " : "",
                                              "unreadable after ", offset_ + done,
                                              " bytes: ", why));
    }
    done += static_cast<size_t>(n);
    if (static_cast<unsigned>(n) < want) {
      // The end of the file. Z_BUF_ERROR: it came inside a gzip stream.
      if (code == Z_BUF_ERROR) {
        offset_ += done;
        if (done > 0) return done;  // deliver what came before the cut first
        return absl::DataLossError(
            absl::StrCat(path_, ": the gzip stream is cut short after ", offset_,
                         " bytes of uncompressed data (the file is truncated)"));
      }
      break;
    }
  }
  offset_ += done;
  return done;
}

}  // namespace iotap::analyzer
