#include "interpose/real.h"

#include <dlfcn.h>

#include "interpose/recorder.h"

namespace iotap::interpose {

void* ResolveNext(const char* name) {
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  void* f = dlsym(RTLD_NEXT, name);
  tls_thread.busy = was_busy;
  return f;
}

}  // namespace iotap::interpose
