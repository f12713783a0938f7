// The real functions behind the wrappers.
//
// Each wrapper file declares the functions it forwards to with IOTAP_REAL,
// whose type comes from the library's own header through decltype, so a
// signature is never typed by hand:
//
//   IOTAP_REAL(pread);                       // at namespace scope
//   ...
//   ssize_t r = real_pread()(fd, buf, n, offset);
//
// The address is looked up with dlsym(RTLD_NEXT) on first use and cached.
// Every global of the shim is constinit: a wrapper may run before the
// library's own static initialisers, which must therefore have nothing to do.
// Resolution runs with the thread's busy flag set, so anything dlsym calls
// passes through untraced. A function that cannot be found resolves to
// `fallback` (see IOTAP_REAL_OR), so a missing symbol disables that wrapper
// and never ends the process.
//
// Libraries that may be loaded privately (RTLD_LOCAL, as Python extension
// modules load their dependencies and as h5py wheels load their bundled
// libhdf5) are out of RTLD_NEXT's reach: ResolveNextOrLoaded also searches
// every loaded object, and ResolveIn asks one object. The HDF5 layer builds
// on both to find each caller's own library (hdf5/hdf5_api.h).

#ifndef IOTAP_INTERPOSE_CORE_REAL_H_
#define IOTAP_INTERPOSE_CORE_REAL_H_

#include <atomic>

namespace iotap::interpose {

// dlsym(RTLD_DEFAULT, name) with the busy flag set: the first definition in
// the global scope, the main program's included (an interpreter's C API);
// null if absent.
void* ResolveGlobal(const char* name);
// dlsym(RTLD_NEXT, name) with the busy flag set; null if absent.
void* ResolveNext(const char* name);

// ResolveNext, and if that fails, the definition of `name` in the first
// loaded object (in load order, this library excepted) that defines it
// itself, wherever the object was loaded: the main program's dependencies,
// RTLD_GLOBAL or RTLD_LOCAL dlopen. Null if no object defines it.
void* ResolveNextOrLoaded(const char* name);

// The definition of `name` in the loaded object `object` (a path as the
// dynamic linker names it) itself, not in one of its dependencies; null if
// it has none.
void* ResolveIn(const char* object, const char* name);

// In a fork child: the lock ResolveNextOrLoaded takes is free again.
void ResolveAfterForkChild();

using Resolver = void* (*)(const char* name);

template <typename Fn>
class RealFunction {
 public:
  constexpr RealFunction(const char* name, Fn fallback, Resolver resolve = ResolveNext)
      : name_(name), fallback_(fallback), resolve_(resolve) {}

  Fn operator()() {
    Fn f = fn_.load(std::memory_order_relaxed);
    if (__builtin_expect(f == nullptr, 0)) {
      f = reinterpret_cast<Fn>(resolve_(name_));
      if (f == nullptr) f = fallback_;
      fn_.store(f, std::memory_order_relaxed);
    }
    return f;
  }

 private:
  const char* name_;
  Fn fallback_;
  Resolver resolve_;
  std::atomic<Fn> fn_{nullptr};
};

}  // namespace iotap::interpose

// Declares real_NAME() returning the next definition of NAME, whose type is
// that of the declaration the system header gives.
#define IOTAP_REAL(name)                                                          \
  constinit ::iotap::interpose::RealFunction<decltype(&::name)> real_##name{#name, \
                                                                           nullptr}

// As IOTAP_REAL, with a function to call when NAME cannot be found.
#define IOTAP_REAL_OR(name, fallback)                                             \
  constinit ::iotap::interpose::RealFunction<decltype(&::name)> real_##name{#name, \
                                                                           fallback}

#endif  // IOTAP_INTERPOSE_CORE_REAL_H_
