// liburing's functions. Debian's liburing (2.3) makes its system calls
// itself, not through libc (its only imports are calloc, free and
// __stack_chk_fail), so the shim follows a liburing program through the
// library's exported functions instead: the ones that set a ring up, enter
// the kernel to submit or wait, and register files. The ring's queues are
// read through the program's struct io_uring.
//
// liburing calls some of its exported functions itself (queue_init calls
// queue_init_params, which calls queue_mmap; the submit-and-wait forms call
// others): only the outermost call on a thread is recorded.
//
// Not seen: programs linked with liburing.a (liburing-dev ships it), and
// the inline functions (io_uring_get_sqe's header form, io_uring_peek_cqe and
// io_uring_wait_cqe when a completion is ready), which make no call; their
// completions are read at the program's next call into liburing.

#include <liburing.h>

#include "interpose/core/io_event.h"
#include "interpose/core/real.h"
#include "interpose/core/trace_call.h"
#include "interpose/uring/uring_calls.h"

#ifndef IORING_SETUP_NO_SQARRAY
#define IORING_SETUP_NO_SQARRAY (1U << 16)
#endif

namespace iotap::interpose {
namespace {

// liburing may be loaded privately (a Python extension's dependency,
// RTLD_LOCAL), out of RTLD_NEXT's reach: the lookup also searches every
// loaded object.
#define IOTAP_LIBURING_REAL(name)                                                   \
  constinit ::iotap::interpose::RealFunction<decltype(&::name)> real_##name{#name,   \
                                                                           nullptr, \
                                                                           ResolveNextOrLoaded}

IOTAP_LIBURING_REAL(io_uring_queue_init);
IOTAP_LIBURING_REAL(io_uring_queue_init_params);
IOTAP_LIBURING_REAL(io_uring_queue_mmap);
IOTAP_LIBURING_REAL(io_uring_queue_exit);
IOTAP_LIBURING_REAL(io_uring_submit);
IOTAP_LIBURING_REAL(io_uring_submit_and_wait);
IOTAP_LIBURING_REAL(io_uring_submit_and_wait_timeout);
IOTAP_LIBURING_REAL(io_uring_submit_and_get_events);
IOTAP_LIBURING_REAL(io_uring_get_events);
IOTAP_LIBURING_REAL(__io_uring_get_cqe);
IOTAP_LIBURING_REAL(io_uring_wait_cqes);
IOTAP_LIBURING_REAL(io_uring_wait_cqe_timeout);
IOTAP_LIBURING_REAL(io_uring_peek_batch_cqe);
IOTAP_LIBURING_REAL(io_uring_setup);
IOTAP_LIBURING_REAL(io_uring_enter);
IOTAP_LIBURING_REAL(io_uring_enter2);
IOTAP_LIBURING_REAL(io_uring_register);
IOTAP_LIBURING_REAL(io_uring_register_files);
IOTAP_LIBURING_REAL(io_uring_register_files_tags);
IOTAP_LIBURING_REAL(io_uring_register_files_sparse);
IOTAP_LIBURING_REAL(io_uring_register_files_update);
IOTAP_LIBURING_REAL(io_uring_register_files_update_tag);
IOTAP_LIBURING_REAL(io_uring_unregister_files);

// Depth of liburing calls on this thread: only the outermost is recorded.
constinit __thread int tls_depth __attribute__((tls_model("initial-exec"))) = 0;

class Outermost {
 public:
  Outermost() : outer_(tls_depth++ == 0) {}
  ~Outermost() { --tls_depth; }
  Outermost(const Outermost&) = delete;
  Outermost& operator=(const Outermost&) = delete;
  bool outer() const { return outer_; }

 private:
  bool outer_;
};

RingView ViewOf(const struct io_uring* ring) {
  RingView v;
  v.fd = ring->ring_fd;
  v.setup_flags = ring->flags;
  v.sq_head = ring->sq.khead;
  v.sq_mask = ring->sq.ring_mask != 0 || ring->sq.kring_mask == nullptr ? ring->sq.ring_mask
                                                                         : *ring->sq.kring_mask;
  v.sq_array = (ring->flags & IORING_SETUP_NO_SQARRAY) ? nullptr : ring->sq.array;
  v.sqes = reinterpret_cast<const uint8_t*>(ring->sq.sqes);
  v.cq_tail = ring->cq.ktail;
  v.cq_mask = ring->cq.ring_mask != 0 || ring->cq.kring_mask == nullptr ? ring->cq.ring_mask
                                                                         : *ring->cq.kring_mask;
  v.cqes = reinterpret_cast<const uint8_t*>(ring->cq.cqes);
  return v;
}

// A call on `ring` that may submit and wait: `real` makes it.
template <typename Fn>
long Enter(struct io_uring* ring, unsigned wait_nr, Fn real) {
  Outermost depth;
  if (!depth.outer() || ring == nullptr) return real();
  TraceCall call(kLayerUring);
  RingView view;
  SubmitMark mark;
  if (call.active()) {
    view = ViewOf(ring);
    mark = UringMark(view.fd, &view);
  }
  long r = real();
  RecordEnter(call, view.fd, &view, mark, wait_nr, r, Failure::kNegative);
  return r;
}

// A setup of `ring`: `real` makes it.
template <typename Fn>
int Setup(unsigned entries, struct io_uring* ring, const struct io_uring_params* params,
          Fn real) {
  Outermost depth;
  if (!depth.outer()) return real();
  TraceCall call(kLayerUring);
  int r = real();
  RecordSetup(call, entries, params, r == 0 ? ring->ring_fd : -1, r == 0 ? ring->ring_fd : r,
              Failure::kNegative, /*raw=*/false);
  return r;
}

// A file registration on `ring` as io_uring_register(opcode, arg, nr)
// would make it: `real` makes it.
template <typename Fn>
int Register(struct io_uring* ring, unsigned opcode, const void* arg, unsigned nr, Fn real) {
  Outermost depth;
  if (!depth.outer()) return real();
  TraceCall call(kLayerUring);
  int r = real();
  RecordRegister(call, ring->ring_fd, opcode, arg, nr, r, Failure::kNegative);
  return r;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT int io_uring_queue_init(unsigned entries, struct io_uring* ring, unsigned flags) {
  struct io_uring_params p = {};
  p.flags = flags;
  return Setup(entries, ring, &p,
               [&] { return real_io_uring_queue_init()(entries, ring, flags); });
}

IOTAP_EXPORT int io_uring_queue_init_params(unsigned entries, struct io_uring* ring,
                                            struct io_uring_params* p) {
  return Setup(entries, ring, p,
               [&] { return real_io_uring_queue_init_params()(entries, ring, p); });
}

IOTAP_EXPORT int io_uring_queue_mmap(int fd, struct io_uring_params* p, struct io_uring* ring) {
  return Setup(p != nullptr ? p->sq_entries : 0, ring, p,
               [&] { return real_io_uring_queue_mmap()(fd, p, ring); });
}

// The ring's last completions and its requests still in flight, then the
// real teardown (which makes no call the shim sees).
IOTAP_EXPORT void io_uring_queue_exit(struct io_uring* ring) {
  Outermost depth;
  if (depth.outer() && ring != nullptr &&
      (g_active_layers.load(std::memory_order_relaxed) & kLayerUring) != 0 && !tls_thread.busy) {
    RingView view = ViewOf(ring);
    UringRingClosing(view.fd, &view);
  }
  real_io_uring_queue_exit()(ring);
}

IOTAP_EXPORT int io_uring_submit(struct io_uring* ring) {
  return static_cast<int>(Enter(ring, 0, [&] { return real_io_uring_submit()(ring); }));
}

IOTAP_EXPORT int io_uring_submit_and_wait(struct io_uring* ring, unsigned wait_nr) {
  return static_cast<int>(
      Enter(ring, wait_nr, [&] { return real_io_uring_submit_and_wait()(ring, wait_nr); }));
}

IOTAP_EXPORT int io_uring_submit_and_wait_timeout(struct io_uring* ring,
                                                  struct io_uring_cqe** cqe_ptr,
                                                  unsigned wait_nr,
                                                  struct __kernel_timespec* ts,
                                                  sigset_t* sigmask) {
  return static_cast<int>(Enter(ring, wait_nr, [&] {
    return real_io_uring_submit_and_wait_timeout()(ring, cqe_ptr, wait_nr, ts, sigmask);
  }));
}

IOTAP_EXPORT int io_uring_submit_and_get_events(struct io_uring* ring) {
  return static_cast<int>(
      Enter(ring, 0, [&] { return real_io_uring_submit_and_get_events()(ring); }));
}

IOTAP_EXPORT int io_uring_get_events(struct io_uring* ring) {
  return static_cast<int>(Enter(ring, 0, [&] { return real_io_uring_get_events()(ring); }));
}

IOTAP_EXPORT int __io_uring_get_cqe(struct io_uring* ring, struct io_uring_cqe** cqe_ptr,
                                    unsigned submit, unsigned wait_nr, sigset_t* sigmask) {
  return static_cast<int>(Enter(ring, wait_nr, [&] {
    return real___io_uring_get_cqe()(ring, cqe_ptr, submit, wait_nr, sigmask);
  }));
}

IOTAP_EXPORT int io_uring_wait_cqes(struct io_uring* ring, struct io_uring_cqe** cqe_ptr,
                                    unsigned wait_nr, struct __kernel_timespec* ts,
                                    sigset_t* sigmask) {
  return static_cast<int>(Enter(ring, wait_nr, [&] {
    return real_io_uring_wait_cqes()(ring, cqe_ptr, wait_nr, ts, sigmask);
  }));
}

IOTAP_EXPORT int io_uring_wait_cqe_timeout(struct io_uring* ring, struct io_uring_cqe** cqe_ptr,
                                           struct __kernel_timespec* ts) {
  return static_cast<int>(
      Enter(ring, 1, [&] { return real_io_uring_wait_cqe_timeout()(ring, cqe_ptr, ts); }));
}

IOTAP_EXPORT unsigned io_uring_peek_batch_cqe(struct io_uring* ring, struct io_uring_cqe** cqes,
                                              unsigned count) {
  // Returns a count, never an error.
  return static_cast<unsigned>(
      Enter(ring, 0, [&] { return static_cast<long>(real_io_uring_peek_batch_cqe()(ring, cqes, count)); }));
}

IOTAP_EXPORT int io_uring_setup(unsigned entries, struct io_uring_params* p) {
  Outermost depth;
  if (!depth.outer()) return real_io_uring_setup()(entries, p);
  TraceCall call(kLayerUring);
  int r = real_io_uring_setup()(entries, p);
  RecordSetup(call, entries, p, r >= 0 ? r : -1, r, Failure::kNegative, /*raw=*/true);
  return r;
}

IOTAP_EXPORT int io_uring_enter(unsigned fd, unsigned to_submit, unsigned min_complete,
                                unsigned flags, sigset_t* sig) {
  Outermost depth;
  if (!depth.outer()) return real_io_uring_enter()(fd, to_submit, min_complete, flags, sig);
  TraceCall call(kLayerUring);
  int ring = (flags & IORING_ENTER_REGISTERED_RING) ? -1 : static_cast<int>(fd);
  SubmitMark mark = call.active() && ring >= 0 ? UringMark(ring, nullptr) : SubmitMark{};
  int r = real_io_uring_enter()(fd, to_submit, min_complete, flags, sig);
  RecordEnter(call, ring, nullptr, mark, min_complete, r, Failure::kNegative);
  return r;
}

IOTAP_EXPORT int io_uring_enter2(unsigned fd, unsigned to_submit, unsigned min_complete,
                                 unsigned flags, sigset_t* sig, size_t sz) {
  Outermost depth;
  if (!depth.outer()) return real_io_uring_enter2()(fd, to_submit, min_complete, flags, sig, sz);
  TraceCall call(kLayerUring);
  int ring = (flags & IORING_ENTER_REGISTERED_RING) ? -1 : static_cast<int>(fd);
  SubmitMark mark = call.active() && ring >= 0 ? UringMark(ring, nullptr) : SubmitMark{};
  int r = real_io_uring_enter2()(fd, to_submit, min_complete, flags, sig, sz);
  RecordEnter(call, ring, nullptr, mark, min_complete, r, Failure::kNegative);
  return r;
}

IOTAP_EXPORT int io_uring_register(unsigned fd, unsigned opcode, const void* arg,
                                   unsigned nr_args) {
  Outermost depth;
  if (!depth.outer()) return real_io_uring_register()(fd, opcode, arg, nr_args);
  TraceCall call(kLayerUring);
  int r = real_io_uring_register()(fd, opcode, arg, nr_args);
  RecordRegister(call, static_cast<int>(fd), opcode, arg, nr_args, r, Failure::kNegative);
  return r;
}

IOTAP_EXPORT int io_uring_register_files(struct io_uring* ring, const int* files,
                                         unsigned nr_files) {
  return Register(ring, IORING_REGISTER_FILES, files, nr_files,
                  [&] { return real_io_uring_register_files()(ring, files, nr_files); });
}

IOTAP_EXPORT int io_uring_register_files_tags(struct io_uring* ring, const int* files,
                                              const __u64* tags, unsigned nr) {
  struct io_uring_rsrc_register reg = {};
  reg.nr = nr;
  reg.data = reinterpret_cast<__u64>(files);
  reg.tags = reinterpret_cast<__u64>(tags);
  return Register(ring, IORING_REGISTER_FILES2, &reg, sizeof(reg),
                  [&] { return real_io_uring_register_files_tags()(ring, files, tags, nr); });
}

IOTAP_EXPORT int io_uring_register_files_sparse(struct io_uring* ring, unsigned nr) {
  struct io_uring_rsrc_register reg = {};
  reg.nr = nr;
  reg.flags = IORING_RSRC_REGISTER_SPARSE;
  return Register(ring, IORING_REGISTER_FILES2, &reg, sizeof(reg),
                  [&] { return real_io_uring_register_files_sparse()(ring, nr); });
}

IOTAP_EXPORT int io_uring_register_files_update(struct io_uring* ring, unsigned off,
                                                const int* files, unsigned nr_files) {
  struct io_uring_files_update up = {};
  up.offset = off;
  up.fds = reinterpret_cast<__aligned_u64>(files);
  return Register(ring, IORING_REGISTER_FILES_UPDATE, &up, nr_files, [&] {
    return real_io_uring_register_files_update()(ring, off, files, nr_files);
  });
}

IOTAP_EXPORT int io_uring_register_files_update_tag(struct io_uring* ring, unsigned off,
                                                    const int* files, const __u64* tags,
                                                    unsigned nr_files) {
  struct io_uring_rsrc_update2 up = {};
  up.offset = off;
  up.data = reinterpret_cast<__u64>(files);
  up.tags = reinterpret_cast<__u64>(tags);
  up.nr = nr_files;
  return Register(ring, IORING_REGISTER_FILES_UPDATE2, &up, sizeof(up), [&] {
    return real_io_uring_register_files_update_tag()(ring, off, files, tags, nr_files);
  });
}

IOTAP_EXPORT int io_uring_unregister_files(struct io_uring* ring) {
  return Register(ring, IORING_UNREGISTER_FILES, nullptr, 0,
                  [&] { return real_io_uring_unregister_files()(ring); });
}
