// Finding the HDF5 library behind each call (see hdf5_api.h).
//
// A call site's library is found once, on its first call, the way the
// dynamic linker bound the caller's reference before the shim was preloaded
// in front of it:
//   1. the caller is an HDF5 library itself (a call from inside HDF5): that
//      library;
//   2. the caller's own dependencies define the function (a module loaded
//      with RTLD_LOCAL, Debian's h5py or a wheel's): the first of them;
//   3. otherwise the global scope after the shim (dlsym(RTLD_NEXT)): a
//      program linked with libhdf5, such as h5dump;
//   4. otherwise the first loaded object that defines the function.
// The answer is cached per return address in a small direct-mapped table, so
// the usual call costs a hash and two loads.

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/hdf5/hdf5_api.h"

namespace iotap::interpose {

namespace {

constexpr const char* kFnNames[] = {
#define IOTAP_HDF5_NAME(name) #name,
    IOTAP_HDF5_FUNCTIONS(IOTAP_HDF5_NAME)
#undef IOTAP_HDF5_NAME
};

constexpr int kMaxLibraries = 8;
constexpr int kSiteBits = 8;

struct Site {
  std::atomic<const void*> return_address{nullptr};
  std::atomic<Hdf5Library*> library{nullptr};
};

}  // namespace

// The libraries found so far; slot 0 is the stand-in whose functions fail.
class Hdf5Libraries {
 public:
  static Hdf5Library* Find(const char* path);
  static void AfterForkChild() { pthread_mutex_init(&lock_, nullptr); }
  static Hdf5Library* Missing() { return &libraries_[0]; }
  static void Resolve(Hdf5Library* lib, int fn, const char* name, void* failure);

 private:
  static constinit Hdf5Library libraries_[kMaxLibraries + 1];
  static constinit int count_;
  static constinit pthread_mutex_t lock_;
};

constinit Hdf5Library Hdf5Libraries::libraries_[kMaxLibraries + 1];
constinit int Hdf5Libraries::count_ = 0;
constinit pthread_mutex_t Hdf5Libraries::lock_ = PTHREAD_MUTEX_INITIALIZER;

namespace {

constinit Site g_sites[1 << kSiteBits];

// The loaded object that `f` lies in (its path), or null.
const char* ObjectOf(const void* f) {
  Dl_info where;
  if (f == nullptr || dladdr(f, &where) == 0) return nullptr;
  return where.dli_fname;
}

bool IsOwn(const void* f) {
  const char* object = ObjectOf(f);
  const char* own = ObjectOf(reinterpret_cast<const void*>(&Hdf5LibraryFor));
  return object != nullptr && own != nullptr && strcmp(object, own) == 0;
}

// Steps 1-4 of the header comment: the object that defines `name` for a
// caller at `return_address`, or null.
const char* LibraryPathFor(const void* return_address, const char* name) {
  const char* caller = ObjectOf(return_address);
  if (caller != nullptr && caller[0] != '\0') {
    if (ResolveIn(caller, name) != nullptr) return caller;  // 1
    if (void* handle = dlopen(caller, RTLD_LAZY | RTLD_NOLOAD)) {
      void* f = dlsym(handle, name);
      dlclose(handle);
      if (f != nullptr && !IsOwn(f)) return ObjectOf(f);  // 2
    }
  }
  void* f = dlsym(RTLD_NEXT, name);  // 3
  if (f == nullptr) f = ResolveNextOrLoaded(name);  // 4
  return f != nullptr && !IsOwn(f) ? ObjectOf(f) : nullptr;
}

}  // namespace

Hdf5Library* Hdf5Libraries::Find(const char* path) {
  if (path == nullptr) return Missing();
  pthread_mutex_lock(&lock_);
  Hdf5Library* found = nullptr;
  for (int i = 1; i <= count_ && found == nullptr; ++i) {
    if (strcmp(libraries_[i].path_, path) == 0) found = &libraries_[i];
  }
  if (found == nullptr && count_ < kMaxLibraries && strlen(path) < sizeof(found->path_)) {
    found = &libraries_[++count_];
    strcpy(found->path_, path);
    found->index_ = static_cast<uint32_t>(count_);
  }
  pthread_mutex_unlock(&lock_);
  return found != nullptr ? found : Missing();
}

void Hdf5Libraries::Resolve(Hdf5Library* lib, int fn, const char* name, void* failure) {
  void* f = lib->index_ == 0 ? nullptr : ResolveIn(lib->path_, name);
  lib->fns_[fn].store(f != nullptr ? f : failure, std::memory_order_release);
}

void* Hdf5Library::Resolve(int fn, const char* name, void* failure) {
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  Hdf5Libraries::Resolve(this, fn, name, failure);
  tls_thread.busy = was_busy;
  return fns_[fn].load(std::memory_order_acquire);
}

Hdf5Library* Hdf5LibraryFor(const void* return_address, Hdf5Fn fn) {
  uintptr_t key = reinterpret_cast<uintptr_t>(return_address);
  Site& site = g_sites[(key * 0x9e3779b97f4a7c15ull) >> (64 - kSiteBits)];
  // A seqlock: a site is rewritten as (null, library, address), so an
  // address read before and after the library vouches for it.
  if (site.return_address.load(std::memory_order_acquire) == return_address) {
    Hdf5Library* lib = site.library.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (site.return_address.load(std::memory_order_relaxed) == return_address) return lib;
  }
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  Hdf5Library* lib =
      Hdf5Libraries::Find(LibraryPathFor(return_address, kFnNames[static_cast<int>(fn)]));
  tls_thread.busy = was_busy;
  site.return_address.store(nullptr, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  site.library.store(lib, std::memory_order_relaxed);
  site.return_address.store(return_address, std::memory_order_release);
  return lib;
}

void Hdf5LibrariesAfterForkChild() { Hdf5Libraries::AfterForkChild(); }

}  // namespace iotap::interpose
