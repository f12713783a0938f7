/* Loaded with RTLD_LOCAL by dlsym_scope: looks up a symbol of its own
 * dependency with RTLD_DEFAULT, which glibc resolves in the caller's scope. */

#include <dlfcn.h>
#include <stddef.h>

int iotap_probe_dep_symbol(void);

/* Calls the dependency directly too, so the linker keeps it needed. */
int iotap_probe_direct(void) { return iotap_probe_dep_symbol(); }

int iotap_probe_local_lookup(void) {
  int (*f)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "iotap_probe_dep_symbol");
  return f != NULL ? f() : -1;
}
