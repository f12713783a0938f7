/* Loads HDF5 the way an h5py wheel does: a renamed copy of libhdf5 opened
 * with RTLD_LOCAL (wheels bundle h5py.libs/libhdf5-HASH.so), then a module
 * that uses it, also RTLD_LOCAL. No HDF5 symbol is global, so RTLD_NEXT
 * cannot find one; the shim must find the copy among the loaded objects.
 *
 *   private_hdf5 LIBHDF5_COPY EXTENSION DATA_FILE
 *
 * The module's DT_NEEDED names libhdf5's soname, which the copy (loaded
 * first) still carries, so the dynamic linker binds the module to the copy
 * and never loads the system library. Prints every loaded object whose name
 * starts with "libhdf5", whether H5open is global, and run_hdf5's result. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

static int PrintHdf5Objects(struct dl_phdr_info* info, size_t size, void* data) {
  (void)size;
  (void)data;
  const char* base = strrchr(info->dlpi_name, '/');
  base = base == NULL ? info->dlpi_name : base + 1;
  if (strncmp(base, "libhdf5", 7) == 0) printf("loaded %s\n", info->dlpi_name);
  return 0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: private_hdf5 LIBHDF5_COPY EXTENSION DATA_FILE\n");
    return 2;
  }
  if (dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  void* ext = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
  if (ext == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int (*run)(const char*) = (int (*)(const char*))dlsym(ext, "run_hdf5");
  if (run == NULL) return 1;
  dl_iterate_phdr(PrintHdf5Objects, NULL);
  printf("global H5open %s\n", dlsym(RTLD_DEFAULT, "H5open") != NULL ? "yes" : "no");
  printf("run_hdf5 %d\n", run(argv[3]));
  return 0;
}
