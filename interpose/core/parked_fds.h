// Where the shim parks the descriptors it keeps open: high in the
// descriptor table, so that the numbers the program's own open() calls
// return are those it gets untraced (interpose/README.md, "Descriptors the
// shim opens").
//
//   [ceiling - 64, ceiling - 16)  the signal sampler's perf events, one per
//                                 sampled thread (pystacks/py_signal.cc)
//   [ceiling - 16, ceiling)       files kept between uses (file/kept_fd.h)
//
// The ceiling is min(RLIMIT_NOFILE, 1024): staying under 1024 keeps the
// kernel's descriptor table small and out of select()'s range problems for
// descriptors the program opens itself.

#ifndef IOTAP_INTERPOSE_CORE_PARKED_FDS_H_
#define IOTAP_INTERPOSE_CORE_PARKED_FDS_H_

namespace iotap::interpose {

// Which numbers a kind of kept descriptor goes to.
enum class Parked {
  kFile,         // a file kept between uses: needs a ceiling of 64 or more
  kSampleEvent,  // a sampled thread's perf event: a ceiling of 256 or more
};

// Moves `fd` to the lowest free number of `kind`'s range (F_DUPFD_CLOEXEC)
// and closes the original. Returns the new number, or -1 (leaving `fd` open
// and the caller's) when none is free there or the limit is too low.
int ParkFd(int fd, Parked kind);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_CORE_PARKED_FDS_H_
