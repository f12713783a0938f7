#include "interpose/tfrecord/tfrecord.h"

#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include <new>

#include "interpose/core/once_set.h"
#include "interpose/core/recorder.h"
#include "interpose/file/wire_writer.h"
#include "interpose/file/writer.h"
#include "interpose/tfrecord/tfrecord_parser.h"

namespace iotap::interpose {

// What the layer knows of one descriptor's TFRecord stream.
struct TfStream {
  // Taken around every use of `parser`: threads sharing a descriptor take
  // turns (their reads still interleave; each jump resynchronises).
  std::atomic<uint32_t> lock{0};
  uint32_t file = 0;
  uint8_t status = 0;  // Status below
  bool by_suffix = false;
  bool by_header = false;
  // Reads fed while undecided: a reader completes the 12-byte first header
  // within a few reads, so a file still undecided after kMaxUndecidedReads
  // (tiny reads at offset 0, again and again) is not one.
  uint32_t undecided_reads = 0;
  TfRecordParser parser;
  TfStream* next_free = nullptr;
};

namespace {

constexpr uint32_t kMaxUndecidedReads = 16;

enum Status : uint8_t {
  kUndecided = 0,  // the first header, at offset 0, is still incomplete
  kAccepted = 1,   // records are reported
  kIgnored = 2,    // not a (readable) TFRecord file: bytes pass by
};

// TfRecordFile.Compression in trace.proto.
enum Compression : uint32_t { kNone = 0, kGzip = 1, kZlib = 2 };

// Streams come from slabs mapped on first use and are recycled; one per
// descriptor reading a TFRecord file, at most kSlabs * kPerSlab at once.
constexpr int kPerSlab = 256;
constexpr int kSlabs = 64;
struct Pool {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  TfStream* slabs[kSlabs] = {};
  int slab_count = 0;
  int next_unused = kPerSlab;  // within the last slab
  TfStream* free = nullptr;
};
constinit Pool g_pool;
constinit OnceSet<4096> g_reported;

TfStream* NewStream() {
  pthread_mutex_lock(&g_pool.lock);
  TfStream* s = g_pool.free;
  if (s != nullptr) {
    g_pool.free = s->next_free;
  } else {
    if (g_pool.next_unused == kPerSlab && g_pool.slab_count < kSlabs) {
      void* mem = mmap(nullptr, sizeof(TfStream) * kPerSlab, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (mem != MAP_FAILED) {
        g_pool.slabs[g_pool.slab_count++] = static_cast<TfStream*>(mem);
        g_pool.next_unused = 0;
      }
    }
    if (g_pool.next_unused < kPerSlab) {
      s = &g_pool.slabs[g_pool.slab_count - 1][g_pool.next_unused++];
    }
  }
  pthread_mutex_unlock(&g_pool.lock);
  if (s != nullptr) new (s) TfStream();
  return s;
}

void FreeStream(TfStream* s) {
  pthread_mutex_lock(&g_pool.lock);
  s->next_free = g_pool.free;
  g_pool.free = s;
  pthread_mutex_unlock(&g_pool.lock);
}

void Lock(TfStream* s) {
  while (s->lock.exchange(1, std::memory_order_acquire) != 0) __builtin_ia32_pause();
}
void Unlock(TfStream* s) { s->lock.store(0, std::memory_order_release); }

// The compression a TFRecord file's first bytes announce (n >= 2).
Compression CompressionOf(const uint8_t* p, size_t n) {
  if (n < 2) return kNone;
  if (p[0] == 0x1f && p[1] == 0x8b) return kGzip;
  // RFC 1950: deflate with a window of at most 32 KiB, header check bits.
  if ((p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && ((p[0] << 8) | p[1]) % 31 == 0) return kZlib;
  return kNone;
}

// Writes the file's TfRecordFile packet. `first` holds the file's first
// `n` bytes when they were read (null otherwise), to name a compression.
void Describe(uint32_t file, bool by_suffix, bool by_header, const uint8_t* first, size_t n) {
  Compression compression = by_header || first == nullptr ? kNone : CompressionOf(first, n);
  const char* note = nullptr;
  if (compression == kGzip) {
    note = "GZIP-compressed: the program reads the compressed stream and inflates records in"
           " memory, so records cannot be attributed to POSIX reads";
  } else if (compression == kZlib) {
    note = "ZLIB-compressed: the program reads the compressed stream and inflates records in"
           " memory, so records cannot be attributed to POSIX reads";
  } else if (!by_header && first != nullptr) {
    note = "named as TFRecord, but offset 0 holds no valid record header: not attributed";
  }
  uint8_t buf[512];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);  // Trace.packet
  size_t msg = w.BeginNested(8);     // Packet.tfrecord_file
  w.Varint(1, file);
  w.VarintIfNonZero(2, compression);
  w.VarintIfNonZero(3, by_suffix);
  w.VarintIfNonZero(4, by_header);
  if (note != nullptr) w.String(5, note);
  w.EndNested(msg);
  w.EndNested(packet);
  if (!w.overflow()) WritePackets(buf, w.size());
}

// Stops looking at the descriptor's reads.
void Ignore(FdEntry* f) {
  f->bits.fetch_and(~(kFdTfRecord | kFdTfProbe), std::memory_order_relaxed);
}

// Gives the descriptor a stream on its first TFRecord read, or decides from
// the bytes at offset 0 that it needs none. Null when nothing is to be parsed.
TfStream* Attach(FdEntry* f, int64_t offset, const uint8_t* data, size_t n) {
  bool by_suffix = (f->bits.load(std::memory_order_relaxed) & kFdTfRecord) != 0;
  uint32_t file = FileOf(f);
  bool decided = offset == 0 && n >= kTfHeaderBytes;
  bool valid = decided && ValidTfRecordLength(data);
  if (decided && !valid) {
    if (by_suffix && g_reported.First(file)) Describe(file, true, false, data, n);
    Ignore(f);
    return nullptr;
  }
  TfStream* s = NewStream();
  if (s == nullptr) {
    Ignore(f);
    return nullptr;
  }
  s->file = file;
  s->by_suffix = by_suffix;
  s->by_header = valid;
  // A named file first read elsewhere than offset 0 is taken at its word.
  s->status = valid || (by_suffix && offset != 0) ? kAccepted : kUndecided;
  TfStream* expected = nullptr;
  if (!f->tfrecord.compare_exchange_strong(expected, s, std::memory_order_acq_rel)) {
    FreeStream(s);  // another thread attached one first
    return expected;
  }
  f->bits.fetch_or(kFdTfRecord, std::memory_order_relaxed);
  f->bits.fetch_and(~kFdTfProbe, std::memory_order_relaxed);
  return s;
}

// After bytes from offset 0 completed (or failed) an undecided stream's first
// header.
void Decide(FdEntry* f, TfStream* s) {
  const TfRecordParser& p = s->parser;
  bool stuck = ++s->undecided_reads >= kMaxUndecidedReads && p.valid_headers() == 0;
  if (p.state() == TfRecordParser::kLost || (stuck && !s->by_suffix)) {
    if (s->by_suffix && g_reported.First(s->file)) {
      Describe(s->file, true, false, p.header(), p.header_bytes());
    }
    s->status = kIgnored;
    Ignore(f);
  } else if (p.valid_headers() > 0) {
    s->by_header = true;
    s->status = kAccepted;
  }
}

// Turns the records the parser finds into events after the read's. A record
// that took more than one read is an OP_TFRECORD_RECORD event of its own.
// Consecutive records the read delivered whole are grouped (trace.proto):
// while their data lengths are equal, up to kMaxRun of them in one
// OP_TFRECORD_RUN event (fixed-size records, however small, cost one event
// per read); once lengths differ, up to eight below 64 KiB in an
// OP_TFRECORD_RECORDS event; a group of one is an OP_TFRECORD_RECORD.
class RecordEvents {
 public:
  RecordEvents(CallEvents* events, uint32_t file, uint64_t read_id)
      : events_(events), file_(file), read_id_(read_id) {}

  // Writes what is still grouped; call once the read's bytes are parsed.
  ~RecordEvents() { Flush(); }

  // Inline in the parser's loop: the common case, one more record of a run
  // of equal lengths, costs a few instructions and no call.
  __attribute__((always_inline)) void operator()(const TfRecordInfo& r) {
    if (count_ > 0 && uniform_ && r.offset == next_offset_ && r.length == first_.length &&
        r.reads == 1 && r.index_known == first_.index_known) {
      next_offset_ += static_cast<int64_t>(kTfHeaderBytes + r.length + kTfFooterBytes);
      if (++count_ == kMaxRun) Flush();
      return;
    }
    Add(r);
  }

 private:
  static constexpr uint32_t kMaxGroup = 8;
  static constexpr uint32_t kMaxRun = 255;
  static constexpr uint64_t kMaxGroupedLength = 1u << 16;

  // Every other record: one that took several reads, the first of a group,
  // or one whose length differs from the run's.
  __attribute__((noinline)) void Add(const TfRecordInfo& r) {
    if (r.reads != 1) {
      Flush();
      Emit(kOpTfrecordRecord, r.offset, r.length, r.reads, r.index_known ? r.index : 0,
           r.index_known, true);
      return;
    }
    if (count_ > 0 && !JoinsGroup(r)) Flush();
    next_offset_ = r.offset + static_cast<int64_t>(kTfHeaderBytes + r.length + kTfFooterBytes);
    if (count_ == 0) {
      first_ = r;
      uniform_ = true;
      count_ = 1;
      return;
    }
    // A length unlike the run's so far: the group keeps each length.
    if (uniform_) {
      lengths_[0] = lengths_[1] = 0;
      for (uint32_t k = 0; k < count_; ++k) Pack(k, first_.length);
      uniform_ = false;
    }
    Pack(count_, r.length);
    if (++count_ == kMaxGroup) Flush();
  }

  // Whether `r` (delivered whole, of a length unlike the run's, or the group
  // already holding differing lengths) can join the records grouped so far:
  // a group of eight at most, each length in 16 bits. A run of eight or more
  // is written as it is rather than broken up.
  bool JoinsGroup(const TfRecordInfo& r) const {
    return r.offset == next_offset_ && r.index_known == first_.index_known &&
           count_ < kMaxGroup && r.length < kMaxGroupedLength &&
           first_.length < kMaxGroupedLength;
  }

  void Pack(uint32_t k, uint64_t length) { lengths_[k / 4] |= length << (16 * (k % 4)); }

  void Flush() {
    uint64_t index = first_.index_known ? first_.index : 0;
    if (count_ == 1) {
      Emit(kOpTfrecordRecord, first_.offset, first_.length, 1, index, first_.index_known, false);
    } else if (count_ > 1 && uniform_) {
      Emit(kOpTfrecordRun, first_.offset, first_.length, count_, index, first_.index_known,
           false);
    } else if (count_ > 1) {
      Emit(kOpTfrecordRecords, first_.offset, lengths_[0], static_cast<int64_t>(lengths_[1]),
           uint64_t{count_} << 56 | index, first_.index_known, false);
    }
    count_ = 0;
  }

  void Emit(Op op, int64_t offset, uint64_t requested, int64_t result, uint64_t aux,
            bool index_known, bool spanned) {
    RawEvent* e = events_->Follow(op);
    if (e == nullptr) return;
    e->file = file_;
    e->offset = offset;
    e->requested = requested;
    e->result = result;
    e->aux = aux;
    e->parent = read_id_;
    e->flags = kFlagHasOffset | kFlagTfRecordCrcOk;
    if (spanned) e->flags |= kFlagTfRecordSpanned;
    if (!index_known) e->flags |= kFlagTfRecordIndexUnknown;
  }

  CallEvents* events_;
  uint32_t file_;
  uint64_t read_id_;
  TfRecordInfo first_ = {};
  int64_t next_offset_ = 0;
  uint64_t lengths_[2] = {0, 0};  // once !uniform_: each record's, 16 bits each
  uint32_t count_ = 0;
  bool uniform_ = true;  // every length equals first_.length
};

}  // namespace

bool HasTfRecordSuffix(const char* path) {
  if (path == nullptr) return false;
  const char* base = strrchr(path, '/');
  base = base == nullptr ? path : base + 1;
  size_t n = strlen(base);
  auto ends_with = [&](const char* suffix) {
    size_t k = strlen(suffix);
    return n >= k && memcmp(base + n - k, suffix, k) == 0;
  };
  for (const char* compressed : {".gz", ".gzip", ".zlib", ".zz"}) {
    if (ends_with(compressed)) {
      n -= strlen(compressed);
      break;
    }
  }
  return ends_with(".tfrecord") || ends_with(".tfrecords");
}

uint32_t TfRecordOpenBits(const char* path) {
  if ((g_active_layers.load(std::memory_order_relaxed) & kLayerTfRecord) == 0) return 0;
  return HasTfRecordSuffix(path) ? kFdTfRecord : kFdTfProbe;
}

void TfRecordFeed(CallEvents& events, FdEntry* f, int64_t offset, const void* data, size_t n) {
  const uint8_t* bytes = static_cast<const uint8_t*>(data);
  TfStream* s = f->tfrecord.load(std::memory_order_acquire);
  if (s == nullptr && (s = Attach(f, offset, bytes, n)) == nullptr) return;
  Lock(s);
  if (s->status != kIgnored) {
    {
      RecordEvents sink(&events, s->file, events.EventId());
      s->parser.Feed(offset, bytes, n, sink);
    }
    if (s->status == kUndecided) Decide(f, s);
    if (s->status == kAccepted && g_reported.First(s->file)) {
      Describe(s->file, s->by_suffix, s->by_header, nullptr, 0);
    }
  }
  Unlock(s);
}

void TfRecordFeedIov(CallEvents& events, FdEntry* f, int64_t offset, const struct iovec* iov,
                     int count, size_t n) {
  for (int i = 0; i < count && n > 0; ++i) {
    size_t take = iov[i].iov_len < n ? iov[i].iov_len : n;
    if (take == 0) continue;
    TfRecordFeed(events, f, offset, iov[i].iov_base, take);
    offset += static_cast<int64_t>(take);
    n -= take;
  }
}

void TfRecordRelease(FdEntry* f) {
  TfStream* s = f->tfrecord.exchange(nullptr, std::memory_order_acq_rel);
  if (s != nullptr) FreeStream(s);
}

void TfRecordAfterForkChild() {
  pthread_mutex_init(&g_pool.lock, nullptr);
  for (int i = 0; i < g_pool.slab_count; ++i) {
    // Only the locks held at the fork are written: a write to each would
    // copy every page of the parent's slabs into the child.
    for (int k = 0; k < kPerSlab; ++k) {
      auto& lock = g_pool.slabs[i][k].lock;
      if (lock.load(std::memory_order_relaxed) != 0) lock.store(0, std::memory_order_relaxed);
    }
  }
  g_reported.Clear();
}

}  // namespace iotap::interpose
