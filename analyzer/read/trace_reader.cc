#include "analyzer/read/trace_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "proto/wire/little_endian.h"
#include "proto/wire/varint.h"
#include "zstd.h"

namespace iotap::analyzer {

namespace {

constexpr uint32_t kZstdMagic = 0xFD2FB528u;
// Skippable frames (magic 0x184D2A50..5F) are valid zstd and carry nothing.
constexpr uint32_t kSkippableMask = 0xFFFFFFF0u;
constexpr uint32_t kSkippableMagic = 0x184D2A50u;
// The shim's frames hold at most a few MiB; anything claiming far more is
// damage, not data.
constexpr size_t kMaxFrameBytes = 64u << 20;
constexpr size_t kReadBlock = 4u << 20;
// With a FrameLimit, which may stop a read after a frame of a few KiB: the
// rest of a larger block would be read again by the next call.
constexpr size_t kLimitedReadBlock = 64u << 10;
constexpr size_t kSalvageBytes = 1u << 20;

// Reads the varint at data[*at] (as libprotobuf reads a length) and moves
// `*at` past it; false if `size` ends first.
bool ReadLength(const uint8_t* data, size_t size, size_t* at, uint64_t* value) {
  const uint8_t* p = data + *at;
  bool ok = wire::ReadVarint(&p, data + size, value);
  *at = static_cast<size_t>(p - data);
  return ok;
}

bool IsFrameStart(const uint8_t* p) {
  uint32_t m = wire::LoadLe32(p);
  return m == kZstdMagic || (m & kSkippableMask) == kSkippableMagic;
}

// Bytes read ahead of the decoder. Unlike a std::string it grows without
// zero-filling: each refill asks for 4 MiB and usually gets far less.
class ReadBuffer {
 public:
  const uint8_t* data() const { return bytes_.get(); }
  size_t size() const { return size_; }
  // Room for `n` more bytes; returns where they go (Commit says how many
  // did).
  uint8_t* Extend(size_t n) {
    if (size_ + n > capacity_) {
      size_t capacity = std::max(size_ + n, capacity_ * 2);
      std::unique_ptr<uint8_t[]> bigger(new uint8_t[capacity]);
      if (size_ > 0) std::memcpy(bigger.get(), bytes_.get(), size_);
      bytes_ = std::move(bigger);
      capacity_ = capacity;
    }
    return bytes_.get() + size_;
  }
  void Commit(size_t n) { size_ += n; }
  // Drops the first `n` bytes.
  void Consume(size_t n) {
    std::memmove(bytes_.get(), bytes_.get() + n, size_ - n);
    size_ -= n;
  }
  void Clear() { size_ = 0; }

 private:
  std::unique_ptr<uint8_t[]> bytes_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

// Where the bytes come from: a file read block by block, or memory.
class Source {
 public:
  virtual ~Source() = default;
  // Appends up to `n` more bytes to `buf`; returns how many (0 at the end).
  virtual absl::StatusOr<size_t> Read(ReadBuffer* buf, size_t n) = 0;
};

class FileSource : public Source {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}
  ~FileSource() override { close(fd_); }
  absl::StatusOr<size_t> Read(ReadBuffer* buf, size_t n) override {
    uint8_t* to = buf->Extend(n);
    for (;;) {
      ssize_t r = read(fd_, to, n);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        return absl::UnavailableError(
            absl::StrCat(path_, ": cannot read: ", std::strerror(errno)));
      }
      buf->Commit(static_cast<size_t>(r));
      return static_cast<size_t>(r);
    }
  }

 private:
  int fd_;
  std::string path_;
};

class MemorySource : public Source {
 public:
  explicit MemorySource(const std::string& bytes) : bytes_(bytes) {}
  absl::StatusOr<size_t> Read(ReadBuffer* buf, size_t n) override {
    size_t take = std::min(n, bytes_.size() - pos_);
    if (take == 0) return size_t{0};  // Extend(0) of an empty buffer may be null
    std::memcpy(buf->Extend(take), bytes_.data() + pos_, take);
    buf->Commit(take);
    pos_ += take;
    return take;
  }

 private:
  const std::string& bytes_;
  size_t pos_ = 0;
};

// One InternedString as its wire bytes give it (Reader::FastStrings).
struct StringEntry {
  uint32_t id = 0;
  InternedString::Kind kind = InternedString::KIND_UNSPECIFIED;
  std::string_view value;
};

// Parses the body of an InternedString message into `out` as libprotobuf
// would (absent fields are zero or empty, a repeated field's last value
// wins); false for anything it does not expect (unknown fields, values out
// of range, a cut field), which libprotobuf then judges.
bool ParseInternedString(const uint8_t* p, const uint8_t* end, StringEntry* out) {
  *out = StringEntry();
  while (p < end) {
    size_t at = 0;
    uint64_t tag = 0, v = 0;
    if (!ReadLength(p, static_cast<size_t>(end - p), &at, &tag)) return false;
    p += at;
    at = 0;
    if (!ReadLength(p, static_cast<size_t>(end - p), &at, &v)) return false;
    p += at;
    switch (tag) {
      case 0x08:  // id = 1, varint
        if (v > UINT32_MAX) return false;
        out->id = static_cast<uint32_t>(v);
        break;
      case 0x12:  // value = 2, length-delimited
        if (v > static_cast<uint64_t>(end - p)) return false;
        out->value = std::string_view(reinterpret_cast<const char*>(p), v);
        p += v;
        break;
      case 0x18:  // kind = 3, varint
        if (v > INT32_MAX) return false;
        out->kind = static_cast<InternedString::Kind>(v);
        break;
      default:
        return false;
    }
  }
  return true;
}

// Zeroes clock values no real trace holds (kMaxMonotonicNs, kMaxRealtimeNs;
// CPU times are bounded as monotonic ones); true if there were any.
bool ClearImpossibleClocks(Packet* p) {
  bool cleared = false;
  auto check = [&](uint64_t value, int64_t max, auto clear) {
    if (value >= static_cast<uint64_t>(max)) {
      clear();
      cleared = true;
    }
  };
  switch (p->payload_case()) {
    case Packet::kProcess: {
      ProcessHeader* h = p->mutable_process();
      check(h->start_monotonic_ns(), kMaxMonotonicNs, [&] { h->set_start_monotonic_ns(0); });
      check(h->start_realtime_ns(), kMaxRealtimeNs, [&] { h->set_start_realtime_ns(0); });
      break;
    }
    case Packet::kClock: {
      ClockSnapshot* c = p->mutable_clock();
      check(c->monotonic_ns(), kMaxMonotonicNs, [&] { c->set_monotonic_ns(0); });
      check(c->realtime_ns(), kMaxRealtimeNs, [&] { c->set_realtime_ns(0); });
      break;
    }
    case Packet::kEnd: {
      EndOfTrace* e = p->mutable_end();
      check(e->monotonic_ns(), kMaxMonotonicNs, [&] { e->set_monotonic_ns(0); });
      check(e->realtime_ns(), kMaxRealtimeNs, [&] { e->set_realtime_ns(0); });
      break;
    }
    case Packet::kResources: {
      ResourceSample* r = p->mutable_resources();
      check(r->monotonic_ns(), kMaxMonotonicNs, [&] { r->set_monotonic_ns(0); });
      check(r->user_cpu_ns(), kMaxMonotonicNs, [&] { r->set_user_cpu_ns(0); });
      check(r->system_cpu_ns(), kMaxMonotonicNs, [&] { r->set_system_cpu_ns(0); });
      check(r->run_queue_ns(), kMaxMonotonicNs, [&] { r->set_run_queue_ns(0); });
      break;
    }
    default:
      break;
  }
  return cleared;
}

struct DctxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// The memory a Reader works in. Files are read one after another on each
// thread, so each thread keeps one set and the next file reuses it: no
// fresh (page-faulting) megabytes per file.
struct ReaderMemory {
  std::unique_ptr<ZSTD_DCtx, DctxDeleter> dctx{ZSTD_createDCtx()};
  ReadBuffer in;       // compressed bytes read ahead
  std::string out;     // one decompressed frame
  Packet packet;
  EventBatch batch;
  ChunkDecoder decoder;
  std::vector<StringEntry> strings;  // one string table, before it is applied
  std::unique_ptr<char[]> salvage;   // output block for a cut frame (kSalvageBytes)
  bool in_use = false;
};

// This thread's ReaderMemory, or a fresh one if a Reader on this thread is
// already using it (a visitor that reads another file from a callback).
class BorrowedMemory {
 public:
  BorrowedMemory() {
    thread_local ReaderMemory memory;
    if (memory.in_use) {
      owned_ = std::make_unique<ReaderMemory>();
      memory_ = owned_.get();
    } else {
      memory_ = &memory;
    }
    memory_->in_use = true;
    memory_->in.Clear();
  }
  ~BorrowedMemory() { memory_->in_use = false; }
  ReaderMemory* operator->() const { return memory_; }

 private:
  std::unique_ptr<ReaderMemory> owned_;
  ReaderMemory* memory_;
};

// Reads the frames of one file from `state->offset` on. `follow`: the file
// is still being written, so a frame cut at its end is left for later (and
// an empty file is no error); otherwise the cut frame is salvaged and the
// visitor told the file has ended.
class Reader {
 public:
  Reader(std::string name, Source* source, TraceVisitor* visitor, std::vector<ReadIssue>* issues,
         internal::ReaderState* state, bool follow, const HostClockCorrections* clocks = nullptr,
         const FrameLimit* limit = nullptr)
      : name_(std::move(name)),
        source_(source),
        visitor_(visitor),
        issues_(issues),
        clocks_(clocks),
        state_(state),
        process_(state->process),
        follow_(follow),
        limit_(limit != nullptr && *limit ? limit : nullptr),
        read_block_(limit_ != nullptr ? kLimitedReadBlock : kReadBlock),
        base_(state->offset),
        seen_process_(state->seen_process),
        packets_(state->packets) {}

  absl::Status Run();
  // Run stopped at its FrameLimit with frames left.
  bool held_back() const { return held_back_; }

 private:
  // Makes at least `n` bytes available after pos_ if the source has them.
  absl::Status Fill(size_t n);
  size_t Available() const { return memory_->in.size() - pos_; }
  const uint8_t* Here() const { return memory_->in.data() + pos_; }
  uint64_t Offset() const { return base_ + pos_; }
  void Advance(size_t n) { pos_ += n; }

  void Issue(uint64_t offset, uint64_t skipped, bool truncated, std::string message) {
    issues_->push_back(ReadIssue{name_, offset, skipped, truncated, std::move(message)});
  }
  // Skips to the next frame start after damage at the current position.
  absl::Status Resync(const std::string& why);
  // Parses the packets in `data`; with `partial`, the last one may be cut.
  void Packets(const uint8_t* data, size_t size, uint64_t frame_offset, bool partial);
  void Deliver(const Packet& packet);
  // Counts a packet that is not a header; reports a missing header first.
  void Announce();
  // Hands a decoded batch (or the reason it could not be decoded) on.
  void DeliverEvents(const absl::Status& decoded);
  // Decodes and delivers `data` if it is an event packet the ChunkDecoder
  // takes; false leaves it to libprotobuf.
  bool FastEvents(const uint8_t* data, size_t size);
  // As FastEvents, for a string table: its strings go straight into the
  // process, without a Packet's worth of messages and copies.
  bool FastStrings(const uint8_t* data, size_t size);
  void SalvageTruncatedFrame(uint64_t frame_offset);

  std::string name_;
  Source* source_;
  TraceVisitor* visitor_;
  std::vector<ReadIssue>* issues_;
  const HostClockCorrections* clocks_;
  internal::ReaderState* state_;
  ProcessTrace& process_;
  const bool follow_;
  const FrameLimit* limit_;  // null: read every frame there is
  const size_t read_block_;  // bytes asked of the source at a time
  bool held_back_ = false;
  BorrowedMemory memory_;
  size_t pos_ = 0;
  uint64_t base_;  // file offset of memory_->in's first byte
  bool eof_ = false;
  bool& seen_process_;
  bool done_ = false;  // the visitor is satisfied
  uint64_t& packets_;
};

absl::Status Reader::Fill(size_t n) {
  while (Available() < n && !eof_) {
    if (pos_ > kReadBlock) {  // drop what has been consumed
      memory_->in.Consume(pos_);
      base_ += pos_;
      pos_ = 0;
    }
    absl::StatusOr<size_t> got =
        source_->Read(&memory_->in, std::max(read_block_, n - Available()));
    if (!got.ok()) return got.status();
    if (*got == 0) eof_ = true;
  }
  return absl::OkStatus();
}

absl::Status Reader::Resync(const std::string& why) {
  uint64_t start = Offset();
  Advance(1);
  for (;;) {
    if (absl::Status s = Fill(4); !s.ok()) return s;
    if (Available() < 4) {
      uint64_t skipped = Offset() + Available() - start;
      Advance(Available());
      Issue(start, skipped, false,
            absl::StrCat(why, "; nothing readable follows up to the end of the file"));
      return absl::OkStatus();
    }
    const uint8_t* p = Here();
    size_t n = Available();
    for (size_t i = 0; i + 4 <= n; ++i) {
      if (IsFrameStart(p + i)) {
        Advance(i);
        Issue(start, Offset() - start, false,
              absl::StrCat(why, "; reading resumes at the next frame"));
        return absl::OkStatus();
      }
    }
    Advance(n - 3);
  }
}

void Reader::Announce() {
  ++packets_;
  if (!seen_process_) {
    // Damage took the header; go on with what the rest of the file says.
    seen_process_ = true;
    Issue(0, 0, false, "no process header before the first events; process details unknown");
    visitor_->OnProcess(process_);
  }
}

void Reader::DeliverEvents(const absl::Status& decoded) {
  Announce();
  if (!decoded.ok()) {
    Issue(Offset(), 0, false, std::string(decoded.message()));
    return;
  }
  const EventBatch& batch = memory_->batch;
  process_.CountEvents(batch.size(), batch.dropped_before);
  visitor_->OnEvents(process_, batch);
}

void Reader::Deliver(const Packet& packet) {
  if (packet.has_process()) {
    ++packets_;
    process_.SetHeader(packet.process());
    if (clocks_ != nullptr) {
      auto it = clocks_->find(packet.process().hostname());
      if (it != clocks_->end()) process_.SetClockCorrection(it->second);
    }
    seen_process_ = true;
    visitor_->OnProcess(process_);
    return;
  }
  if (packet.payload_case() == Packet::kEvents) {
    DeliverEvents(DecodeChunk(packet.events(), &memory_->batch));
    return;
  }
  Announce();
  switch (packet.payload_case()) {
    case Packet::kStrings:
      process_.AddStrings(packet.strings());
      return;  // absorbed: visitors see the strings through the process
    case Packet::kClock:
      process_.AddClock(packet.clock());
      break;
    case Packet::kEnd:
      process_.SetEnd(packet.end());
      break;
    case Packet::kExec:
      if (!packet.exec().spawn()) process_.NoteExec();
      break;
    default:
      break;
  }
  visitor_->OnPacket(process_, packet);
}

bool Reader::FastEvents(const uint8_t* data, size_t size) {
  // An event packet is Packet field 4 (tag 0x22) and nothing else.
  if (size < 2 || data[0] != 0x22) return false;
  uint64_t len = 0;
  size_t at = 1;
  if (!ReadLength(data, size, &at, &len) || len != size - at) return false;
  std::optional<absl::Status> decoded = memory_->decoder.Decode(data + at, len, &memory_->batch);
  if (!decoded.has_value()) return false;
  DeliverEvents(*decoded);
  return true;
}

bool Reader::FastStrings(const uint8_t* data, size_t size) {
  // A string table packet is Packet field 3 (tag 0x1A) and nothing else,
  // holding StringTable field 1 (tag 0x0A) entries and nothing else.
  if (size < 2 || data[0] != 0x1A) return false;
  uint64_t len = 0;
  size_t at = 1;
  if (!ReadLength(data, size, &at, &len) || len != size - at) return false;
  std::vector<StringEntry>& entries = memory_->strings;
  entries.clear();
  const uint8_t* p = data + at;
  const uint8_t* end = data + size;
  while (p < end) {
    size_t n = 0;
    uint64_t entry_len = 0;
    if (*p != 0x0A) return false;
    ++p;
    if (!ReadLength(p, static_cast<size_t>(end - p), &n, &entry_len)) return false;
    p += n;
    if (entry_len > static_cast<uint64_t>(end - p)) return false;
    if (!ParseInternedString(p, p + entry_len, &entries.emplace_back())) return false;
    p += entry_len;
  }
  // Applied only once the whole table has parsed.
  Announce();
  for (const StringEntry& e : entries) process_.AddString(e.id, e.kind, e.value);
  return true;
}

void Reader::Packets(const uint8_t* data, size_t size, uint64_t frame_offset, bool partial) {
  size_t i = 0;
  while (i < size) {
    // Each packet is Trace field 1, length-delimited: tag 0x0A, varint length.
    if (data[i] != 0x0A) {
      Issue(frame_offset, 0, false,
            absl::StrFormat("frame contents damaged at byte %u of the frame; the rest of the "
                            "frame was skipped",
                            i));
      return;
    }
    uint64_t len = 0;
    size_t j = i + 1;
    if (!ReadLength(data, size, &j, &len) || len > size - j) {
      if (!partial) {
        Issue(frame_offset, 0, false, "frame ends inside a packet; the packet was skipped");
      }
      return;
    }
    if (FastEvents(data + j, len) || FastStrings(data + j, len)) {
      // Decoded without building a Packet.
    } else if (!memory_->packet.ParseFromArray(data + j, static_cast<int>(len))) {
      Issue(frame_offset, 0, false,
            absl::StrFormat("a packet at byte %u of the frame does not parse; skipped it", i));
    } else {
      if (ClearImpossibleClocks(&memory_->packet)) {
        Issue(frame_offset, 0, false,
              absl::StrFormat("a packet at byte %u of the frame holds impossible clock values "
                              "(damaged?); they were read as 0",
                              i));
      }
      Deliver(memory_->packet);
    }
    i = j + len;
    if (visitor_->Satisfied()) {
      done_ = true;
      return;
    }
  }
}

void Reader::SalvageTruncatedFrame(uint64_t frame_offset) {
  // Decompress what there is; every complete packet before the cut counts.
  ZSTD_DCtx_reset(memory_->dctx.get(), ZSTD_reset_session_only);
  std::string& frame = memory_->out;
  frame.clear();
  ZSTD_inBuffer in{Here(), Available(), 0};
  if (!memory_->salvage) memory_->salvage.reset(new char[kSalvageBytes]);
  char* chunk = memory_->salvage.get();
  bool failed = false;
  while (in.pos < in.size && frame.size() < kMaxFrameBytes) {
    ZSTD_outBuffer out{chunk, kSalvageBytes, 0};
    size_t r = ZSTD_decompressStream(memory_->dctx.get(), &out, &in);
    frame.append(chunk, out.pos);
    if (ZSTD_isError(r)) {
      failed = true;
      break;
    }
    if (out.pos == 0 && in.pos == in.size) break;
  }
  uint64_t before = packets_;
  Packets(reinterpret_cast<const uint8_t*>(frame.data()), frame.size(), frame_offset,
          /*partial=*/true);
  uint64_t cut = Available();
  Advance(Available());
  Issue(frame_offset, cut, true,
        absl::StrCat("the file ends in the middle of a frame (", failed ? "damaged, " : "",
                     "a job killed while writing?); kept ", packets_ - before,
                     " complete packets from it"));
}

absl::Status Reader::Run() {
  if (memory_->dctx == nullptr) return absl::ResourceExhaustedError("cannot create a zstd context");
  if (absl::Status s = Fill(4); !s.ok()) return s;
  if (base_ == 0 && follow_ && Available() < 4) return absl::OkStatus();  // not written yet
  if (base_ == 0 && Available() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name_, ": empty file, not an iotap trace"));
  }
  if (base_ == 0 && (Available() < 4 || wire::LoadLe32(Here()) != kZstdMagic)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name_, ": not an iotap trace (it does not start with a zstd frame)"));
  }
  while (true) {
    if (absl::Status s = Fill(4); !s.ok()) return s;
    if (Available() == 0) break;
    if (limit_ != nullptr && seen_process_ && (*limit_)(process_)) {
      held_back_ = true;  // frames (or the start of one) left for a later call
      break;
    }
    uint64_t frame_offset = Offset();
    if (Available() < 4 || !IsFrameStart(Here())) {
      if (Available() < 4 && eof_ && follow_) break;  // the rest is being written
      if (Available() < 4 && eof_) {
        Issue(frame_offset, Available(), true, "the file ends with a partial frame header");
        Advance(Available());
        break;
      }
      if (absl::Status s = Resync("bytes that are not a zstd frame"); !s.ok()) return s;
      continue;
    }
    // Find the frame's extent, reading more as needed.
    size_t frame_size = 0;
    for (;;) {
      frame_size = ZSTD_findFrameCompressedSize(Here(), Available());
      if (!ZSTD_isError(frame_size)) break;
      if (eof_ || Available() >= kMaxFrameBytes) break;
      if (absl::Status s = Fill(Available() + read_block_); !s.ok()) return s;
    }
    if (ZSTD_isError(frame_size)) {
      if (eof_ && follow_) break;  // the frame is being written
      if (eof_) {
        SalvageTruncatedFrame(frame_offset);
        break;
      }
      if (absl::Status s = Resync("a frame too large or malformed"); !s.ok()) return s;
      continue;
    }
    if ((wire::LoadLe32(Here()) & kSkippableMask) == kSkippableMagic) {
      Advance(frame_size);
      continue;
    }
    unsigned long long content = ZSTD_getFrameContentSize(Here(), frame_size);
    size_t capacity = content == ZSTD_CONTENTSIZE_UNKNOWN || content == ZSTD_CONTENTSIZE_ERROR
                          ? kMaxFrameBytes
                          : static_cast<size_t>(std::min<unsigned long long>(content, kMaxFrameBytes));
    std::string& frame = memory_->out;
    if (frame.size() < capacity) frame.resize(capacity);
    size_t n = ZSTD_decompressDCtx(memory_->dctx.get(), frame.data(), capacity, Here(), frame_size);
    if (ZSTD_isError(n)) {
      Issue(frame_offset, frame_size, false,
            absl::StrCat("damaged frame (", ZSTD_getErrorName(n), "); skipped it"));
      Advance(frame_size);
      continue;
    }
    Advance(frame_size);
    Packets(reinterpret_cast<const uint8_t*>(frame.data()), n, frame_offset, /*partial=*/false);
    if (done_) break;
  }
  state_->offset = Offset();
  if (follow_ || held_back_) return absl::OkStatus();
  if (!seen_process_) {
    return absl::DataLossError(
        absl::StrCat(name_, ": no readable packet in the file; it is damaged beyond use"));
  }
  visitor_->OnFileEnd(process_);
  return absl::OkStatus();
}

}  // namespace

std::string ReadIssue::ToString() const {
  std::string s = offset == 0 && bytes_skipped == 0 && !truncated
                      ? absl::StrCat(path, ": ", message)
                      : absl::StrCat(path, ": at byte ", offset, ": ", message);
  if (bytes_skipped > 0) absl::StrAppend(&s, " (", bytes_skipped, " bytes skipped)");
  return s;
}

namespace {

// Reads `path` from `state->offset` on (Reader), each process on its host's
// corrected clock if `clocks` has one.
absl::Status ReadFrom(const std::string& path, internal::ReaderState* state, bool follow,
                      TraceVisitor* visitor, std::vector<ReadIssue>* issues,
                      const HostClockCorrections* clocks = nullptr,
                      const FrameLimit* limit = nullptr, bool* held_back = nullptr) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  }
  if (state->offset > 0 && lseek(fd, static_cast<off_t>(state->offset), SEEK_SET) < 0) {
    close(fd);
    return absl::UnavailableError(absl::StrCat(path, ": cannot seek to byte ", state->offset,
                                               ": ", std::strerror(errno)));
  }
  FileSource source(fd, path);
  Reader reader(path, &source, visitor, issues, state, follow, clocks, limit);
  absl::Status s = reader.Run();
  if (held_back != nullptr) *held_back = reader.held_back();
  return s;
}

}  // namespace

absl::Status ReadTraceFile(const std::string& path, TraceVisitor* visitor,
                           std::vector<ReadIssue>* issues, const HostClockCorrections* clocks) {
  internal::ReaderState state(path);
  return ReadFrom(path, &state, /*follow=*/false, visitor, issues, clocks);
}

absl::Status ReadTraceBytes(const std::string& name, const std::string& bytes,
                            TraceVisitor* visitor, std::vector<ReadIssue>* issues) {
  MemorySource source(bytes);
  internal::ReaderState state(name);
  Reader reader(name, &source, visitor, issues, &state, /*follow=*/false);
  return reader.Run();
}

absl::Status TraceFollower::ReadNew(TraceVisitor* visitor, std::vector<ReadIssue>* issues,
                                    const FrameLimit& limit) {
  held_back_ = false;
  if (finished_) return absl::OkStatus();
  return ReadFrom(state_.process.path(), &state_, /*follow=*/true, visitor, issues, nullptr, &limit,
                  &held_back_);
}

absl::Status TraceFollower::Finish(TraceVisitor* visitor, std::vector<ReadIssue>* issues,
                                   const FrameLimit& limit) {
  held_back_ = false;
  if (finished_) return absl::OkStatus();
  absl::Status s = ReadFrom(state_.process.path(), &state_, /*follow=*/false, visitor, issues,
                            nullptr, &limit, &held_back_);
  // A file that cannot be read is not tried again.
  finished_ = !held_back_ || !s.ok();
  return s;
}

}  // namespace iotap::analyzer
