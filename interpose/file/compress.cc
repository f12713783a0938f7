#include "interpose/file/compress.h"

#include <string.h>
#include <sys/mman.h>

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "proto/wire/little_endian.h"

namespace iotap::interpose {

namespace {

constexpr uint32_t kZstdMagic = 0xFD2FB528u;
constexpr size_t kMaxRawBlock = 128 * 1024;
// Frames never exceed the flush buffer, so a 1 MiB window is enough and keeps
// the workspace small.
constexpr int kWindowLog = 20;

}  // namespace

size_t WriteStoredFrame(const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
  size_t blocks = n == 0 ? 1 : (n + kMaxRawBlock - 1) / kMaxRawBlock;
  // Magic, frame header descriptor, 4-byte content size, block headers.
  size_t need = 4 + 1 + 4 + blocks * 3 + n;
  if (cap < need || n > UINT32_MAX) return 0;
  uint8_t* p = out;
  wire::StoreLe32(p, kZstdMagic);
  p += 4;
  // Frame header descriptor: single segment, 4-byte content size.
  *p++ = (2u << 6) | (1u << 5);
  wire::StoreLe32(p, static_cast<uint32_t>(n));
  p += 4;
  size_t done = 0;
  do {
    size_t len = n - done < kMaxRawBlock ? n - done : kMaxRawBlock;
    bool last = done + len == n;
    uint32_t header = (last ? 1u : 0u) | (0u << 1) | (static_cast<uint32_t>(len) << 3);
    // Block header: 3 bytes, little-endian.
    p[0] = static_cast<uint8_t>(header);
    p[1] = static_cast<uint8_t>(header >> 8);
    p[2] = static_cast<uint8_t>(header >> 16);
    p += 3;
    if (len != 0) memcpy(p, in + done, len);
    p += len;
    done += len;
  } while (done < n);
  return static_cast<size_t>(p - out);
}

bool FrameCompressor::Init(int level, size_t max_input) {
  level_ = level;
  cctx_ = nullptr;
  if (level == 0) return true;  // stored frames; below 0, zstd's fast levels
  ZSTD_compressionParameters params = ZSTD_getCParams(level, max_input, 0);
  if (params.windowLog > kWindowLog) params.windowLog = kWindowLog;
  size_t size = ZSTD_estimateCCtxSize_usingCParams(params);
  void* mem = mmap(nullptr, size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return false;
  ZSTD_CCtx* cctx = ZSTD_initStaticCCtx(mem, size);
  if (cctx == nullptr) {
    munmap(mem, size);
    return false;
  }
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, static_cast<int>(params.windowLog));
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  // A checksum per frame lets the reader tell a damaged frame from a good one.
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  cctx_ = cctx;
  return true;
}

size_t FrameCompressor::Bound(size_t n) const {
  size_t stored = 13 + (n / kMaxRawBlock + 1) * 3 + n;
  size_t compressed = ZSTD_compressBound(n);
  return stored > compressed ? stored : compressed;
}

size_t FrameCompressor::Compress(const uint8_t* in, size_t n, uint8_t* out, size_t cap) {
  if (cctx_ != nullptr) {
    size_t r = ZSTD_compress2(static_cast<ZSTD_CCtx*>(cctx_), out, cap, in, n);
    if (!ZSTD_isError(r)) return r;
  }
  return WriteStoredFrame(in, n, out, cap);
}

}  // namespace iotap::interpose

// zstd calls these optional tracing hooks (weak references, declared in its
// private zstd_trace.h) if something defines them. Defining them here, hidden,
// keeps the dynamic linker from looking them up in the application.
extern "C" {
struct ZSTD_Trace;
__attribute__((visibility("hidden"))) unsigned long long ZSTD_trace_compress_begin(
    const ZSTD_CCtx*) {
  return 0;
}
__attribute__((visibility("hidden"))) void ZSTD_trace_compress_end(
    unsigned long long, const ZSTD_Trace*) {}
}
