/* Loads HDF5 the way an h5py wheel does: a renamed copy of libhdf5 opened
 * with RTLD_LOCAL (wheels bundle h5py.libs/libhdf5-HASH.so), then a module
 * that uses it, also RTLD_LOCAL. No HDF5 symbol is global, so RTLD_NEXT
 * cannot find one; the shim must find the copy among the loaded objects.
 *
 *   private_hdf5 LIBHDF5_COPY EXTENSION DATA_FILE [LIBHDF5_COPY_B EXTENSION_B DATA_FILE_B]
 *
 * The module's DT_NEEDED names libhdf5's soname, which the copy (loaded
 * first) still carries, so the dynamic linker binds the module to the copy
 * and never loads the system library. With a second copy and module (whose
 * soname and DT_NEEDED the test changed to another name), two libraries
 * serve two modules in one process, as an h5py wheel and a PyTables wheel
 * do: each module's calls must reach its own library.
 *
 * Prints every loaded object whose name starts with "libhdf5", whether
 * H5open is global, each run_hdf5's result and, with two libraries, how many
 * files each library holds open after each module left one open. */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <hdf5.h>
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

struct Pair {
  void* lib;
  int (*run)(const char*);
  int (*keep_open)(const char*);
};

static int Load(const char* lib, const char* ext, struct Pair* p) {
  p->lib = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  void* module = p->lib != NULL ? dlopen(ext, RTLD_NOW | RTLD_LOCAL) : NULL;
  if (module == NULL) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  p->run = (int (*)(const char*))dlsym(module, "run_hdf5");
  p->keep_open = (int (*)(const char*))dlsym(module, "keep_open");
  return p->run == NULL || p->keep_open == NULL;
}

/* Files the library holds open, asked of the library itself. */
static long OpenFiles(const struct Pair* p) {
  ssize_t (*count)(hid_t, unsigned) = (ssize_t (*)(hid_t, unsigned))dlsym(p->lib, "H5Fget_obj_count");
  return count == NULL ? -1 : (long)count(H5F_OBJ_ALL, H5F_OBJ_FILE);
}

int main(int argc, char** argv) {
  if (argc != 4 && argc != 7) {
    fprintf(stderr, "usage: private_hdf5 LIB EXT FILE [LIB_B EXT_B FILE_B]\n");
    return 2;
  }
  struct Pair a, b;
  if (Load(argv[1], argv[2], &a) != 0 || (argc == 7 && Load(argv[4], argv[5], &b) != 0)) {
    return 1;
  }
  dl_iterate_phdr(PrintHdf5Objects, NULL);
  printf("global H5open %s\n", dlsym(RTLD_DEFAULT, "H5open") != NULL ? "yes" : "no");
  printf("run_hdf5 %d\n", a.run(argv[3]));
  if (argc == 7) {
    printf("run_hdf5 %d\n", b.run(argv[6]));
    char kept_a[4096], kept_b[4096];
    snprintf(kept_a, sizeof(kept_a), "%s.kept", argv[3]);
    snprintf(kept_b, sizeof(kept_b), "%s.kept", argv[6]);
    if (a.keep_open(kept_a) != 0 || b.keep_open(kept_b) != 0) return 1;
    printf("open files: a %ld b %ld\n", OpenFiles(&a), OpenFiles(&b));
  }
  return 0;
}
