// The shim's layers by name, as IOTAP_LAYERS and `iotap run --layers` take
// them and a trace header's `layers` field (trace.proto) holds them: layer i
// of this list is bit i of the shim's layer mask (interpose/core/config.h).
// Header-only, with no C++ runtime, so that the shim can use it.
//
//   for (const char* name : wire::kLayerNames) ... ;   // "posix", "stdio", ...
//   int i = wire::LayerIndex("mapped");                 // 5; -1 for no layer
//   int j = wire::LayerIndex(item.data(), item.size());  // a name not NUL-terminated
//   wire::kLayerList.text                              // "posix,stdio,...,waits"

#ifndef IOTAP_PROTO_WIRE_LAYER_NAMES_H_
#define IOTAP_PROTO_WIRE_LAYER_NAMES_H_

#include <stddef.h>

namespace iotap::wire {

inline constexpr const char* kLayerNames[] = {
    "posix",     // POSIX I/O calls
    "stdio",     // fread, fwrite, ...
    "hdf5",      // H5Dread, H5Dwrite
    "tfrecord",  // TFRecord records read from the POSIX stream
    "cuda",      // CUDA copies and host allocations, cuFile
    "mapped",    // reads through file mappings (page faults)
    "uring",     // io_uring submissions and completions
    "waits",     // blocking waits (poll, select, epoll, semaphores, conditions)
};
inline constexpr int kLayerCount = sizeof(kLayerNames) / sizeof(kLayerNames[0]);

// The index of the layer named by the `n` bytes at `name` (not
// NUL-terminated), or -1 if none has that name.
constexpr int LayerIndex(const char* name, size_t n) {
  for (int i = 0; i < kLayerCount; ++i) {
    const char* known = kLayerNames[i];
    size_t k = 0;
    while (k < n && known[k] != '\0' && known[k] == name[k]) ++k;
    if (k == n && known[k] == '\0') return i;
  }
  return -1;
}

// The same for a NUL-terminated name.
constexpr int LayerIndex(const char* name) {
  size_t n = 0;
  while (name[n] != '\0') ++n;
  return LayerIndex(name, n);
}

// The names joined by commas, as messages list them, built at compile time.
namespace internal {
constexpr size_t JoinedLength() {
  size_t n = 0;
  for (const char* name : kLayerNames) {
    while (*name++ != '\0') ++n;
    ++n;  // a comma, or the terminating zero
  }
  return n;
}
struct LayerList {
  char text[JoinedLength()] = {};
};
constexpr LayerList JoinLayers() {
  LayerList list;
  size_t at = 0;
  for (const char* name : kLayerNames) {
    if (at > 0) list.text[at++] = ',';
    while (*name != '\0') list.text[at++] = *name++;
  }
  return list;
}
}  // namespace internal
inline constexpr internal::LayerList kLayerList = internal::JoinLayers();

}  // namespace iotap::wire

#endif  // IOTAP_PROTO_WIRE_LAYER_NAMES_H_
