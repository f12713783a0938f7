#include "interpose/uring/uring_requests.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/uio.h>

#include "interpose/core/clock.h"
#include "interpose/core/fd_table.h"
#include "interpose/core/io_event.h"
#include "interpose/core/ops.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"

namespace iotap::interpose {

namespace {

// Bounds what is read of a vectored request's iovec array.
constexpr uint32_t kMaxIovecs = 1024;

// A request in flight.
struct Inflight {
  uint64_t user_data;
  uint64_t submit_time;  // raw (clock.h)
  int64_t offset;
  uint64_t requested;
  int ring_fd;
  int fd;               // the descriptor asked for (close), or -1
  uint32_t file;
  uint32_t open_flags;  // openat
  uint16_t op;
  uint8_t opcode;
  bool has_offset;
  bool used;
};

// Open addressing on (ring, user_data), deleted entries shifted back, so
// lookups stop at the first empty slot. Guarded by the rings' lock.
constinit Inflight g_inflight[kMaxInflight] = {};
constinit int g_inflight_count = 0;

uint32_t Hash(int ring_fd, uint64_t user_data) {
  uint64_t h = (user_data ^ (static_cast<uint64_t>(ring_fd) << 48)) * 0x9E3779B97F4A7C15ull;
  return static_cast<uint32_t>(h >> 40) % kMaxInflight;
}

bool Insert(const Inflight& r) {
  if (g_inflight_count >= kMaxInflight - 1) return false;
  for (uint32_t i = Hash(r.ring_fd, r.user_data);; i = (i + 1) % kMaxInflight) {
    if (!g_inflight[i].used) {
      g_inflight[i] = r;
      g_inflight[i].used = true;
      ++g_inflight_count;
      return true;
    }
  }
}

void EraseAt(uint32_t i) {
  g_inflight[i].used = false;
  --g_inflight_count;
  // Backward shift: move later entries of the probe run into the hole.
  for (uint32_t j = (i + 1) % kMaxInflight; g_inflight[j].used; j = (j + 1) % kMaxInflight) {
    uint32_t home = Hash(g_inflight[j].ring_fd, g_inflight[j].user_data);
    bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
    if (movable) {
      g_inflight[i] = g_inflight[j];
      g_inflight[j].used = false;
      i = j;
    }
  }
}

// The oldest entry of (ring, user_data): the first of its probe run.
bool Take(int ring_fd, uint64_t user_data, Inflight* out) {
  for (uint32_t i = Hash(ring_fd, user_data); g_inflight[i].used; i = (i + 1) % kMaxInflight) {
    if (g_inflight[i].ring_fd == ring_fd && g_inflight[i].user_data == user_data) {
      *out = g_inflight[i];
      EraseAt(i);
      return true;
    }
  }
  return false;
}

RawEvent EventOf(const Inflight& r, uint64_t end_time) {
  return RawEvent{.t0 = r.submit_time,
                  .t1 = end_time,
                  .offset = r.has_offset ? r.offset : 0,
                  .requested = r.requested,
                  .result = 0,
                  .aux = r.opcode,
                  .parent = 0,
                  .file = r.file,
                  .op = r.op,
                  .error = 0,
                  .flags = static_cast<uint16_t>(r.has_offset ? kFlagHasOffset : 0)};
}

void Add(Leftovers* out, const RawEvent& e) {
  if (out->count < kLeftoverBatch) {
    out->events[out->count++] = e;
  } else {
    ++out->lost;
  }
}

uint64_t IovecBytes(uint64_t addr, uint32_t count) {
  const auto* iov = reinterpret_cast<const struct iovec*>(addr);
  uint64_t total = 0;
  for (uint32_t i = 0; iov != nullptr && i < count && i < kMaxIovecs; ++i) total += iov[i].iov_len;
  return total;
}

// What a submitted request is, if it is one the shim records.
bool Decode(int ring_fd, const struct io_uring_sqe& sqe, uint64_t submit_time, Inflight* r) {
  *r = Inflight{};
  r->ring_fd = ring_fd;
  r->user_data = sqe.user_data;
  r->submit_time = submit_time;
  r->opcode = sqe.opcode;
  r->fd = -1;
  bool fixed = (sqe.flags & IOSQE_FIXED_FILE) != 0;
  auto file_of = [&](int fd) {
    return fixed ? UringFixedFile(ring_fd, static_cast<uint32_t>(fd)) : FileOf(fd);
  };
  auto positioned = [&]() {
    r->file = file_of(sqe.fd);
    r->has_offset = sqe.off != ~uint64_t{0};
    r->offset = static_cast<int64_t>(sqe.off);
  };
  switch (sqe.opcode) {
    case IORING_OP_READ:
    case IORING_OP_READ_FIXED:
    case IORING_OP_WRITE:
    case IORING_OP_WRITE_FIXED:
      positioned();
      r->requested = sqe.len;
      break;
    case IORING_OP_READV:
    case IORING_OP_WRITEV:
      positioned();
      r->requested = IovecBytes(sqe.addr, sqe.len);
      break;
    case IORING_OP_OPENAT:
    case IORING_OP_OPENAT2: {
      const char* path = reinterpret_cast<const char*>(sqe.addr);
      r->file = path != nullptr ? InternPath(sqe.fd, path) : 0;
      if (sqe.opcode == IORING_OP_OPENAT) {
        r->open_flags = sqe.open_flags;
      } else if (sqe.off != 0 && sqe.len >= sizeof(uint64_t)) {
        r->open_flags = static_cast<uint32_t>(reinterpret_cast<const struct open_how*>(sqe.off)->flags);
      }
      r->op = kOpUringOpenat;
      return true;
    }
    case IORING_OP_CLOSE:
      r->fd = sqe.fd;
      r->file = sqe.file_index != 0 ? UringFixedFile(ring_fd, sqe.file_index - 1) : FileOf(sqe.fd);
      r->op = kOpUringClose;
      return true;
    case IORING_OP_STATX: {
      const char* path = reinterpret_cast<const char*>(sqe.addr);
      r->file = path != nullptr ? InternPath(sqe.fd, path) : 0;
      r->op = kOpUringStatx;
      return true;
    }
    default:
      return false;
  }
  bool write = sqe.opcode == IORING_OP_WRITE || sqe.opcode == IORING_OP_WRITE_FIXED ||
               sqe.opcode == IORING_OP_WRITEV;
  r->op = write ? kOpUringWrite : kOpUringRead;
  return true;
}

struct MarkContext {
  SubmitMark mark;
};

struct AfterContext {
  SubmitMark mark;
  uint64_t submit_time;
  uint32_t submitted;
  Leftovers* out;
};

// Requests taken since the mark: in flight from now on. Lock held.
void TakeSubmissionsLocked(const RingView& v, const SubmitMark& mark, uint64_t submit_time,
                           uint32_t* submitted, Leftovers* out) {
  uint32_t head = __atomic_load_n(v.sq_head, __ATOMIC_ACQUIRE);
  *submitted = mark.valid ? head - mark.sq_head : 0;
  if (!mark.valid) return;
  size_t sqe_size = (v.setup_flags & IORING_SETUP_SQE128) ? 128 : 64;
  for (uint32_t i = mark.sq_head; i != head; ++i) {
    uint32_t slot = v.sq_array != nullptr ? v.sq_array[i & v.sq_mask] : (i & v.sq_mask);
    const auto* sqe = reinterpret_cast<const struct io_uring_sqe*>(v.sqes + slot * sqe_size);
    Inflight r;
    if (!Decode(v.fd, *sqe, submit_time, &r)) continue;
    if (!Insert(r)) {
      // No room to wait for its completion: recorded now, as incomplete.
      RawEvent e = EventOf(r, submit_time);
      e.flags |= kFlagIncomplete;
      Add(out, e);
    }
  }
}

}  // namespace

void CollectCompletionsLocked(const RingView& v, QueueState* state, Leftovers* out) {
  uint32_t tail = __atomic_load_n(v.cq_tail, __ATOMIC_ACQUIRE);
  uint32_t entries = v.cq_mask + 1;
  // More than a queue's worth since the last look: the oldest are
  // overwritten, and their requests stay incomplete.
  if (tail - state->cq_seen > entries) state->cq_seen = tail - entries;
  size_t cqe_size = (v.setup_flags & IORING_SETUP_CQE32) ? 32 : 16;
  uint64_t now = Now();
  while (state->cq_seen != tail && out->count < kLeftoverBatch) {
    const auto* cqe = reinterpret_cast<const struct io_uring_cqe*>(
        v.cqes + (state->cq_seen & v.cq_mask) * cqe_size);
    ++state->cq_seen;
    Inflight r;
    if (!Take(v.fd, cqe->user_data, &r)) continue;
    RawEvent e = EventOf(r, now);
    if (cqe->res >= 0) {
      e.result = cqe->res;
      if (r.op == kOpUringOpenat) FdOpened(cqe->res, r.file, static_cast<int>(r.open_flags), 0, nullptr);
      if (r.op == kOpUringClose && r.fd >= 0) FdClosed(r.fd);
    } else {
      e.result = -1;
      e.error = static_cast<uint16_t>(-cqe->res);
    }
    Add(out, e);
  }
}

void TakeInflightLocked(int fd, Leftovers* out) {
  // Past a batch they are counted as dropped (RecordLeftovers): a ring torn
  // down with more requests in flight than that is rare. The walk stops
  // when the table is empty: a process that never used io_uring reads none
  // of its pages at exit.
  for (int i = 0; i < kMaxInflight && g_inflight_count > 0; ++i) {
    // EraseAt shifts a later entry into slot i: look at it again.
    while (g_inflight[i].used && (fd < 0 || g_inflight[i].ring_fd == fd)) {
      RawEvent e = EventOf(g_inflight[i], g_inflight[i].submit_time);
      e.flags |= kFlagIncomplete;
      Add(out, e);
      EraseAt(static_cast<uint32_t>(i));
    }
  }
}

void RecordLeftovers(Leftovers* leftovers) {
  if ((g_active_layers.load(std::memory_order_relaxed) & kLayerUring) == 0) return;
  ThreadState* ts = &tls_thread;
  bool was_busy = ts->busy;
  ts->busy = true;
  for (int i = 0; i < leftovers->count; ++i) {
    RawEvent* e = ReserveEvent(ts);
    if (e == nullptr) {
      CountDropped(ts);
      continue;
    }
    *e = leftovers->events[i];
    e->parent = ts->parent;
    CommitEvent(ts);
  }
  for (int i = 0; i < leftovers->lost; ++i) CountDropped(ts);
  leftovers->count = 0;
  leftovers->lost = 0;
  ts->busy = was_busy;
}

void AddUnseenLocked(int, uint32_t file, uint32_t unseen, uint32_t completions,
                     Leftovers* out) {
  if (unseen == 0) return;
  uint64_t now = Now();
  Add(out, RawEvent{.t0 = now,
                    .t1 = now,
                    .offset = 0,
                    .requested = unseen,
                    .result = completions,
                    .aux = 0,
                    .parent = 0,
                    .file = file,
                    .op = kOpUringEnter,
                    .error = 0,
                    .flags = kFlagIncomplete});
}

SubmitMark UringMark(int fd, const RingView* given) {
  MarkContext c;
  WithRing(
      fd, given,
      [](const RingView& v, QueueState*, void* p) {
        auto* c = static_cast<MarkContext*>(p);
        c->mark.sq_head = __atomic_load_n(v.sq_head, __ATOMIC_ACQUIRE);
        c->mark.valid = true;
      },
      &c);
  return c.mark;
}

void UringAfterCall(TraceCall& call, RawEvent* e, int fd, const RingView* given,
                    const SubmitMark& mark) {
  Leftovers out;
  AfterContext c{mark, call.start(), 0, &out};
  bool known = WithRing(
      fd, given,
      [](const RingView& v, QueueState* state, void* p) {
        auto* c = static_cast<AfterContext*>(p);
        TakeSubmissionsLocked(v, c->mark, c->submit_time, &c->submitted, c->out);
        state->sq_taken += c->submitted;
        CollectCompletionsLocked(v, state, c->out);
      },
      &c);
  if (e != nullptr) {
    e->file = UringRingFile(fd);
    e->requested = c.submitted;
  }
  while (known) {
    bool full = out.count == kLeftoverBatch;
    for (int i = 0; i < out.count; ++i) {
      if (RawEvent* f = call.Follow(static_cast<Op>(out.events[i].op))) {
        uint64_t parent = f->parent;
        *f = out.events[i];
        f->parent = parent;
      }
    }
    out.count = 0;
    if (!full) break;
    // More completions than one batch: another look.
    WithRing(
        fd, given,
        [](const RingView& v, QueueState* state, void* p) {
          CollectCompletionsLocked(v, state, static_cast<Leftovers*>(p));
        },
        &out);
  }
}

void UringEndOfTrace() {
  Leftovers out;
  do {
    out.count = 0;
    LockRingsTable();
    TakeInflightLocked(-1, &out);
    UnlockRingsTable();
    RecordLeftovers(&out);
  } while (g_inflight_count > 0);
}

void ForgetInflightInChild() {
  // Entries are read only where `used` is set, and none is in an empty
  // table: clearing its 224 KiB would fault in every page of it in each
  // forked child (most processes never submit a request).
  if (g_inflight_count == 0) return;
  memset(g_inflight, 0, sizeof(g_inflight));
  g_inflight_count = 0;
}

}  // namespace iotap::interpose
