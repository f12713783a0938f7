#include "interpose/core/direct_io.h"

#include <dlfcn.h>
#include <string.h>

#include "interpose/core/real.h"

namespace iotap::interpose {

constinit std::atomic<uint32_t> g_direct_io_blockers{kDirectUnchecked};

void CheckDirectIo() {
#if !defined(__x86_64__)
  BlockDirectIo(kDirectNoArch);
#endif
  for (const char* name : {"read", "pread", "pread64", "write", "pwrite", "pwrite64"}) {
    void* fn = ResolveNext(name);
    Dl_info info;
    if (fn == nullptr || dladdr(fn, &info) == 0 || info.dli_fname == nullptr ||
        strstr(info.dli_fname, "/libc.so") == nullptr) {
      BlockDirectIo(kDirectNotLibc);
    }
  }
  g_direct_io_blockers.fetch_and(~static_cast<uint32_t>(kDirectUnchecked),
                                 std::memory_order_relaxed);
}

}  // namespace iotap::interpose
