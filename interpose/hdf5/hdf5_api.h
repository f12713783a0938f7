// The HDF5 C API as the shim sees it: types and signatures from the
// installed hdf5.h, addresses found at run time, per library.
//
// libiotap.so never links libhdf5: it must load into processes that have no
// HDF5, and into processes whose HDF5 is a private copy (h5py wheels load
// h5py.libs/libhdf5-*.so without global symbols; Debian's h5py loads the
// system library as a dependency of RTLD_LOCAL extension modules). A process
// may even hold several (an h5py wheel and a PyTables wheel each bundle
// one), and their identifiers mean nothing to each other. So every call is
// forwarded to the library the caller's own symbol lookup would have bound
// it to: Hdf5LibraryFor(return address) finds it once per call site, and the
// shim's own questions about an identifier go to that same library.
//
//   Hdf5Library* lib = Hdf5LibraryFor(__builtin_return_address(0), Hdf5Fn::H5Dread);
//   herr_t r = lib->Get<Hdf5Fn::H5Dread>()(dset, ...);
//
// A function the library lacks resolves to a stand-in that returns HDF5's
// failure value (negative, or 0 for sizes), so callers need no second check.

#ifndef IOTAP_INTERPOSE_HDF5_HDF5_API_H_
#define IOTAP_INTERPOSE_HDF5_HDF5_API_H_

#include <hdf5.h>

#include <atomic>
#include <type_traits>

// H5Dread_chunk and H5Dwrite_chunk entered the H5D API in HDF5 1.10.3.
#if H5_VERSION_GE(1, 10, 3)
#define IOTAP_HDF5_HAS_CHUNK_IO 1
#define IOTAP_HDF5_CHUNK_FUNCTIONS(X) X(H5Dread_chunk) X(H5Dwrite_chunk) X(H5Dget_chunk_storage_size)
#else
#define IOTAP_HDF5_HAS_CHUNK_IO 0
#define IOTAP_HDF5_CHUNK_FUNCTIONS(X)
#endif

// Every HDF5 function the shim wraps or calls.
#define IOTAP_HDF5_FUNCTIONS(X)                                                              \
  X(H5Fcreate) X(H5Fopen) X(H5Fflush) X(H5Fclose) X(H5Dcreate2) X(H5Dopen2) X(H5Oopen)       \
  X(H5Oclose) X(H5Dclose) X(H5Dread) X(H5Dwrite) IOTAP_HDF5_CHUNK_FUNCTIONS(X)                \
  X(H5Iget_type) X(H5Iget_name) X(H5Fget_name) X(H5Dget_type) X(H5Tget_size) X(H5Tget_class) \
  X(H5Tclose) X(H5Dget_space) X(H5Sget_simple_extent_dims) X(H5Sget_simple_extent_npoints)   \
  X(H5Sget_select_npoints) X(H5Sclose) X(H5Dget_create_plist) X(H5Pget_layout)              \
  X(H5Pget_chunk) X(H5Pget_nfilters) X(H5Pget_filter2) X(H5Pclose) X(H5Eget_auto2)          \
  X(H5Eset_auto2)

namespace iotap::interpose {

enum class Hdf5Fn : int {
#define IOTAP_HDF5_ENUM(name) name,
  IOTAP_HDF5_FUNCTIONS(IOTAP_HDF5_ENUM)
#undef IOTAP_HDF5_ENUM
  kCount
};

// The function type and name of each Hdf5Fn, from hdf5.h.
template <Hdf5Fn F>
struct Hdf5FnInfo;
#define IOTAP_HDF5_INFO(name)                            \
  template <>                                            \
  struct Hdf5FnInfo<Hdf5Fn::name> {                      \
    using Type = decltype(&::name);                      \
    static constexpr const char* kName = #name;          \
  };
IOTAP_HDF5_FUNCTIONS(IOTAP_HDF5_INFO)
#undef IOTAP_HDF5_INFO

// HDF5's "failed" for a function type: -1 (FAIL, H5I_INVALID_HID, H5I_BADID,
// H5T_NO_CLASS, ...) for signed and enum results, 0 for sizes.
template <typename Fn>
struct Hdf5Failure;

template <typename R, typename... Args>
struct Hdf5Failure<R (*)(Args...)> {
  static R Call(Args...) {
    if constexpr (std::is_unsigned_v<R>) {
      return R{0};
    } else {
      return static_cast<R>(-1);
    }
  }
};

// One loaded HDF5 library and its functions, resolved on first use.
class Hdf5Library {
 public:
  constexpr Hdf5Library() = default;

  template <Hdf5Fn F>
  typename Hdf5FnInfo<F>::Type Get() {
    using Fn = typename Hdf5FnInfo<F>::Type;
    void* f = fns_[static_cast<int>(F)].load(std::memory_order_acquire);
    if (__builtin_expect(f == nullptr, 0)) {
      f = Resolve(static_cast<int>(F), Hdf5FnInfo<F>::kName,
                  reinterpret_cast<void*>(&Hdf5Failure<Fn>::Call));
    }
    return reinterpret_cast<Fn>(f);
  }

  // The library's number among those the process loaded, from 1.
  uint32_t index() const { return index_; }

 private:
  friend class Hdf5Libraries;
  void* Resolve(int fn, const char* name, void* failure);

  char path_[4096] = {};  // as the dynamic linker names the object
  uint32_t index_ = 0;
  std::atomic<void*> fns_[static_cast<int>(Hdf5Fn::kCount)] = {};
};

// The library a call to `fn` made from `return_address` goes to: the one
// the caller's own lookup would bind `fn` to without the shim. Never null
// (a library that cannot be found is one whose functions all fail).
Hdf5Library* Hdf5LibraryFor(const void* return_address, Hdf5Fn fn);

// In a fork child: the lock around the list of libraries is free again.
void Hdf5LibrariesAfterForkChild();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_HDF5_HDF5_API_H_
