// Helpers shared by the libFuzzer fuzzers (*_fuzzer.cc, built with
// IOTAP_FUZZ=ON; see tests/fuzz/run-fuzzers.sh).
//
// Readers that take a path get the fuzzer's bytes through a memory file:
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     static iotap::fuzz::MemoryFile file;
//     (void)ReadProfilerTrace(file.Hold(data, size));
//     return 0;
//   }
//
// and the checkers say whether text that reaches a terminal, a Markdown
// ticket or an HTML page is inert; a fuzzer calls FUZZ_CHECK on them, which
// aborts (a crash libFuzzer reports, with the input) when one is false.

#ifndef IOTAP_TESTS_FUZZ_FUZZ_SUPPORT_H_
#define IOTAP_TESTS_FUZZ_FUZZ_SUPPORT_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace iotap::fuzz {

// A file in memory (memfd) whose contents are replaced on each Hold; its
// path, /proc/self/fd/N, opens like any file.
class MemoryFile {
 public:
  MemoryFile() : fd_(memfd_create("iotap-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) {
      std::perror("memfd_create");
      std::abort();
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemoryFile() { close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  // Makes the file hold exactly `data` and returns its path.
  const std::string& Hold(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) std::abort();
    size_t done = 0;
    while (done < size) {
      ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

// Whether `s` is valid UTF-8 (no overlong forms, surrogates or code points
// past U+10FFFF), checked independently of analyzer/base/text.h.
inline bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80                 ? 1
                 : c >= 0xC2 && c <= 0xDF ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (size_t k = 1; k < len; ++k) {
      unsigned char b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return false;
      cp = cp << 6 | (b & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
      return false;
    }
    i += len;
  }
  return true;
}

// Whether valid UTF-8 `s` holds a control character (Unicode Cc: U+0000 to
// U+001F, U+007F to U+009F) other than those in `allowed`. C1 controls count:
// some terminals act on U+009B as on ESC [.
inline bool HasControl(std::string_view s, std::string_view allowed = "") {
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 || c == 0x7F) && allowed.find(static_cast<char>(c)) == std::string_view::npos) {
      return true;
    }
    if (c == 0xC2 && i + 1 < s.size()) {
      unsigned char next = static_cast<unsigned char>(s[i + 1]);
      if (next >= 0x80 && next <= 0x9F) return true;
    }
  }
  return false;
}

}  // namespace iotap::fuzz

// Aborts, naming the failed condition, when `cond` is false.
#define FUZZ_CHECK(cond)                                                            \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                 \
    }                                                                               \
  } while (0)

#endif  // IOTAP_TESTS_FUZZ_FUZZ_SUPPORT_H_
