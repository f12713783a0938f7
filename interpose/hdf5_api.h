// The HDF5 C API as the shim sees it: types and signatures from the
// installed hdf5.h, addresses found at run time.
//
// libiotap.so never links libhdf5: it must load into processes that have no
// HDF5, and into processes whose HDF5 is a private copy (h5py wheels load
// h5py.libs/libhdf5-*.so without global symbols; Debian's h5py loads the
// system library as a dependency of RTLD_LOCAL extension modules). Every
// HDF5 function the shim wraps or calls is declared with IOTAP_HDF5_REAL,
// which resolves with ResolveNextOrLoaded (real.h) on first use. A function
// that no loaded object defines resolves to a stand-in that returns HDF5's
// failure value (negative, or 0 for sizes), so callers need no second check.
//
//   IOTAP_HDF5_REAL(H5Sget_select_npoints);
//   hssize_t n = real_H5Sget_select_npoints()(space);   // -1 if absent

#ifndef IOTAP_INTERPOSE_HDF5_API_H_
#define IOTAP_INTERPOSE_HDF5_API_H_

#include <hdf5.h>

#include <type_traits>

#include "interpose/real.h"

// H5Dread_chunk and H5Dwrite_chunk entered the H5D API in HDF5 1.10.3.
#if H5_VERSION_GE(1, 10, 3)
#define IOTAP_HDF5_HAS_CHUNK_IO 1
#else
#define IOTAP_HDF5_HAS_CHUNK_IO 0
#endif

namespace iotap::interpose {

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

}  // namespace iotap::interpose

#define IOTAP_HDF5_REAL(name)                                                         \
  constinit ::iotap::interpose::RealFunction<decltype(&::name)> real_##name{          \
      #name, &::iotap::interpose::Hdf5Failure<decltype(&::name)>::Call,               \
      ::iotap::interpose::ResolveNextOrLoaded}

#endif  // IOTAP_INTERPOSE_HDF5_API_H_
