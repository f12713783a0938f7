// zstd frames for the trace file, with no allocation after start-up.
//
// The compression context lives in a static workspace (mmap'd once), so a
// flush never calls malloc, which keeps the shim usable right after fork and
// when the application's allocator is busy. Level 0 writes "stored" frames
// (raw blocks): still a valid zstd stream, for the cheapest possible tracing.
// Negative levels are zstd's fast ones (`zstd --fast=N`): larger frames,
// written and read faster.
//
//   FrameCompressor c;
//   if (!c.Init(level)) ...;
//   size_t n = c.Compress(packets, size, out, c.Bound(size));

#ifndef IOTAP_INTERPOSE_FILE_COMPRESS_H_
#define IOTAP_INTERPOSE_FILE_COMPRESS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::interpose {

class FrameCompressor {
 public:
  // Prepares the workspace for inputs of up to `max_input` bytes. Returns
  // false if memory could not be mapped; Compress then writes stored frames.
  bool Init(int level, size_t max_input);

  // The largest frame Compress can produce for `n` input bytes.
  size_t Bound(size_t n) const;

  // Compresses `n` bytes into one complete frame at `out` (capacity `cap`).
  // Returns the frame's size, or 0 if it did not fit.
  size_t Compress(const uint8_t* in, size_t n, uint8_t* out, size_t cap);

 private:
  void* cctx_ = nullptr;  // ZSTD_CCtx in a static workspace; null = stored frames
  int level_ = 1;
};

// Writes `n` bytes as one zstd frame of raw blocks. Returns its size, or 0 if
// `cap` is too small. Exposed for tests.
size_t WriteStoredFrame(const uint8_t* in, size_t n, uint8_t* out, size_t cap);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_FILE_COMPRESS_H_
