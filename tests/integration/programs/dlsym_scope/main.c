/* dlsym_scope PROBE_LIBRARY: lookups whose answer depends on who calls
 * dlsym, or on the shim's dlsym leaving non-CUDA lookups alone. One line per
 * lookup; only the first (the object after this program) changes under the
 * shim, to libiotap.so. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static const char* ObjectOf(void* fn) {
  Dl_info info;
  if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL) return "none";
  const char* slash = strrchr(info.dli_fname, '/');
  return slash != NULL ? slash + 1 : info.dli_fname;
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  printf("next open in %s\n", ObjectOf(dlsym(RTLD_NEXT, "open")));
  void* probe = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (probe == NULL) {
    printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  int (*lookup)(void) = (int (*)(void))dlsym(probe, "iotap_probe_local_lookup");
  printf("local scope lookup %d\n", lookup());
  printf("global scope lookup %s\n",
         dlsym(RTLD_DEFAULT, "iotap_probe_dep_symbol") == NULL ? "absent" : "found");
  int (*dep)(void) = (int (*)(void))dlsym(probe, "iotap_probe_dep_symbol");
  printf("handle lookup %d\n", dep != NULL ? dep() : -1);
  dlerror();
  void* missing = dlsym(probe, "iotap_no_such_symbol");
  printf("missing %s error %s\n", missing == NULL ? "null" : "set", dlerror() ? "set" : "clear");
  int (*cuda_name)(void) = (int (*)(void))dlsym(probe, "cuMemcpyHtoD_v2");
  printf("cuda name in another library %d\n", cuda_name != NULL ? cuda_name() : -1);
  return 0;
}
