// CPython 3.11's frames and code objects read from a signal handler, the
// table of code objects' names, and the per-thread ring of raw samples: see
// py_frames.h. Nothing here allocates, locks or calls the interpreter.

#include "interpose/pystacks/py_frames.h"

#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "interpose/core/raw_syscall.h"

namespace iotap::interpose {

namespace {

// Offsets of CPython 3.11 (Include/cpython/pystate.h,
// Include/internal/pycore_frame.h, Include/cpython/code.h,
// Include/cpython/unicodeobject.h), as offsetof gives them on LP64 against
// Debian's 3.11.2 headers; unchanged within 3.11.
constexpr PyLayout kPython311 = {
    .tstate_cframe = 56,
    .tstate_datastack_chunk = 296,
    .chunk_previous = 0,
    .chunk_size = 8,
    .chunk_data = 24,
    .cframe_current_frame = 8,
    .frame_code = 32,
    .frame_previous = 48,
    .frame_prev_instr = 56,
    .frame_owner = 69,
    .owned_by_generator = 1,
    .code_filename = 112,
    .code_qualname = 128,
    .code_firstlineno = 72,
    .code_linetable = 136,
    .code_firsttraceable = 168,
    .code_code = 184,
    .object_type = 8,
    .bytes_size = 16,
    .bytes_data = 32,
    .str_length = 16,
    .str_state = 32,
    .str_ascii_data = 48,
    .str_utf8_length = 48,
    .str_utf8 = 56,
    .str_compact_data = 72,
    .state_kind_shift = 2,
    .state_compact_bit = 1u << 5,
    .state_ascii_bit = 1u << 6,
};

// Bytes of a frame and of a code object's head that a walk reads: each is
// copied whole once, and its fields taken from the copy.
// (80: the whole _PyInterpreterFrame head; 176: a code object up to its
// last field read, _co_firsttraceable, so that a copy never runs past a
// small object at the end of a mapping.)
constexpr size_t kFrameCopy = 80;
constexpr size_t kCodeCopy = 176;
// Chunks of a thread's data stack whose bounds a walk keeps; frames in
// deeper chunks are read through the reader.
constexpr int kMaxChunks = 16;

// A load from memory known to be mapped: the thread state and what it links.
template <typename T>
T Plain(uintptr_t address) {
  T value;
  __builtin_memcpy(&value, reinterpret_cast<const void*>(address), sizeof(T));
  return value;
}

template <typename T>
T Field(const uint8_t* copy, uint32_t offset) {
  T value;
  __builtin_memcpy(&value, copy + offset, sizeof(T));
  return value;
}

// One walk's reading of the interpreter's memory.
class Reader {
 public:
  explicit Reader(MemoryReader read)
      : read_(read), pid_(static_cast<pid_t>(RawSyscall(SYS_getpid))) {}

  bool Copy(uintptr_t address, void* out, size_t n) const {
    ReadPiece piece = {address, out, n};
    return address != 0 && read_(pid_, &piece, 1);
  }
  bool CopyAll(const ReadPiece* pieces, int count) const {
    for (int i = 0; i < count; ++i) {
      if (pieces[i].address == 0) return false;
    }
    return count == 0 || read_(pid_, pieces, count);
  }
  template <typename T>
  bool Load(uintptr_t address, T* out) const {
    return Copy(address, out, sizeof(T));
  }

 private:
  MemoryReader read_;
  pid_t pid_;
};

// CPython's location table varints: 6 bits a byte, bit 6 says more follow.
bool Varint(const uint8_t** p, const uint8_t* end, uint32_t* out) {
  uint32_t value = 0;
  for (int shift = 0; *p < end && shift < 32; shift += 6) {
    uint8_t b = *(*p)++;
    value |= static_cast<uint32_t>(b & 63) << shift;
    if ((b & 64) == 0) {
      *out = value;
      return true;
    }
  }
  return false;
}

size_t PutUtf8(uint32_t c, uint8_t* bytes) {
  if (c < 0x80) {
    bytes[0] = static_cast<uint8_t>(c);
    return 1;
  }
  if (c < 0x800) {
    bytes[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
    bytes[1] = static_cast<uint8_t>(0x80 | (c & 63));
    return 2;
  }
  if (c < 0x10000) {
    bytes[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
    bytes[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 63));
    bytes[2] = static_cast<uint8_t>(0x80 | (c & 63));
    return 3;
  }
  bytes[0] = static_cast<uint8_t>(0xF0 | ((c >> 18) & 7));
  bytes[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 63));
  bytes[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 63));
  bytes[3] = static_cast<uint8_t>(0x80 | (c & 63));
  return 4;
}

// Copies string object `s` as UTF-8 into `out`, at most `room` bytes: "?"
// if it cannot be read or is not a compact str (code objects' names always
// are).
size_t CopyString(const PyWalk& w, const Reader& r, uintptr_t s, char* out, size_t room) {
  if (room == 0) return 0;
  const PyLayout& l = *w.layout;
  // The head of a compact ASCII string first (what names nearly always
  // are), the rest of a compact one only where it is not ASCII: a copy
  // never runs past a short string at the end of a mapping.
  uint8_t head[80];
  int64_t length = -1;
  uint32_t state = 0;
  if (l.str_compact_data <= sizeof(head) && r.Copy(s, head, l.str_ascii_data) &&
      Field<const void*>(head, l.object_type) == w.unicode_type) {
    state = Field<uint32_t>(head, l.str_state);
    length = Field<int64_t>(head, l.str_length);
  }
  if (length < 0 || (state & l.state_compact_bit) == 0) {
    out[0] = '?';
    return 1;
  }
  size_t n = static_cast<size_t>(length);
  if ((state & l.state_ascii_bit) != 0) {
    if (n > room) n = room;
    return r.Copy(s + l.str_ascii_data, out, n) ? n : 0;
  }
  if (!r.Copy(s + l.str_ascii_data, head + l.str_ascii_data,
              l.str_compact_data - l.str_ascii_data)) {
    return 0;
  }
  uintptr_t utf8 = Field<uintptr_t>(head, l.str_utf8);
  if (utf8 != 0) {
    int64_t size = Field<int64_t>(head, l.str_utf8_length);
    n = size < 0 ? 0 : static_cast<size_t>(size);
    if (n > room) n = room;
    return r.Copy(utf8, out, n) ? n : 0;
  }
  uint32_t kind = (state >> l.state_kind_shift) & 7;
  if (kind != 1 && kind != 2 && kind != 4) return 0;
  uintptr_t data = s + l.str_compact_data;
  size_t used = 0;
  uint8_t piece[256];
  for (size_t i = 0; i < n;) {
    size_t take = sizeof(piece) / kind;
    if (take > n - i) take = n - i;
    if (!r.Copy(data + i * kind, piece, take * kind)) break;
    for (size_t j = 0; j < take; ++j) {
      uint32_t c = kind == 1   ? piece[j]
                   : kind == 2 ? Field<uint16_t>(piece, static_cast<uint32_t>(2 * j))
                               : Field<uint32_t>(piece, static_cast<uint32_t>(4 * j));
      uint8_t bytes[4];
      size_t k = PutUtf8(c, bytes);
      if (used + k > room) return used;
      __builtin_memcpy(out + used, bytes, k);
      used += k;
    }
    i += take;
  }
  return used;
}

}  // namespace

const PyLayout* PyLayoutFor(unsigned long py_version) {
  unsigned long major = (py_version >> 24) & 0xFF;
  unsigned long minor = (py_version >> 16) & 0xFF;
  unsigned long micro = (py_version >> 8) & 0xFF;
  if (major == 3 && minor == 11 && micro >= 1) return &kPython311;
  return nullptr;
}

// As CPython 3.11's _PyCode_CheckLineNumber from a fresh address range
// (Objects/codeobject.c): each entry starts with a byte whose bit 7 is set,
// bits 3-6 its code, bits 0-2 its length in code units less one; codes 13
// (no columns) and 14 (long form) carry a signed line delta, 11 and 12 a
// delta of 1 and 2, and 15 marks instructions with no line.
int PyLineAt(const uint8_t* table, size_t size, int first, int address) {
  if (address < 0) return first;
  const uint8_t* p = table;
  const uint8_t* end = table + size;
  int line = first;
  int64_t start = 0;
  while (p < end) {
    uint8_t b = *p++;
    int code = (b >> 3) & 15;
    int64_t length = ((b & 7) + 1) * 2;
    if (code == 13 || code == 14) {
      uint32_t v;
      const uint8_t* q = p;
      if (!Varint(&q, end, &v)) return -1;
      line += (v & 1) != 0 ? -static_cast<int>(v >> 1) : static_cast<int>(v >> 1);
    } else if (code == 11 || code == 12) {
      line += code - 10;
    }
    if (address < start + length) return code == 15 ? -1 : line;
    start += length;
    while (p < end && (*p & 128) == 0) ++p;
  }
  return -1;
}

// --- CodeTexts ---------------------------------------------------------------

size_t CodeTexts::Home(uintptr_t code) {
  uint64_t h = (static_cast<uint64_t>(code) >> 4) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> 40) & (kSlots - 1);
}

bool CodeTexts::Find(const CodeKey& key, Ref* ref) const {
  size_t home = Home(key.code);
  for (size_t i = 0; i < kProbes; ++i) {
    size_t slot = (home + i) & (kSlots - 1);
    const Entry& e = entries_[slot];
    uint32_t seq = e.seq.load(std::memory_order_acquire);
    if (seq == 0) return false;  // entries fill in probe order
    if ((seq & 1) != 0) continue;
    CodeKey held;
    __builtin_memcpy(&held, &e.key, sizeof(held));
    std::atomic_thread_fence(std::memory_order_acquire);
    if (e.seq.load(std::memory_order_relaxed) == seq && held == key) {
      *ref = {static_cast<uint32_t>(slot), seq};
      return true;
    }
  }
  return false;
}

bool CodeTexts::Claim(const CodeKey& key, Ref* ref) {
  size_t home = Home(key.code);
  size_t slot = kSlots;
  uint32_t seq = 0;
  for (size_t i = 0; i < kProbes; ++i) {
    size_t s = (home + i) & (kSlots - 1);
    if (entries_[s].seq.load(std::memory_order_relaxed) == 0) {
      slot = s;
      break;
    }
  }
  if (slot == kSlots) {
    // Every probe is taken: the one after the home slot by the code
    // object's address takes the new one, so that two hot code objects that
    // share a home do not keep taking each other's entry.
    slot = (home + (key.code >> 6) % kProbes) & (kSlots - 1);
    seq = entries_[slot].seq.load(std::memory_order_relaxed);
    if ((seq & 1) != 0) return false;
  }
  Entry& e = entries_[slot];
  if (!e.seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire,
                                     std::memory_order_relaxed)) {
    return false;
  }
  writing_.fetch_add(1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  __builtin_memcpy(&e.key, &key, sizeof(key));
  e.qualname_size = 0;
  e.filename_size = 0;
  e.table_size = kTableNotKept;
  e.last_line.store(0, std::memory_order_relaxed);
  *ref = {static_cast<uint32_t>(slot), seq + 1};
  return true;
}

void CodeTexts::Publish(Ref* ref) {
  ref->seq += 1;
  entries_[ref->slot].seq.store(ref->seq, std::memory_order_release);
  writing_.fetch_sub(1, std::memory_order_release);
}

bool CodeTexts::Read(const Ref& ref, char* qualname, size_t* qualname_size, char* filename,
                     size_t* filename_size) const {
  if (ref.slot >= kSlots || (ref.seq & 1) != 0) return false;
  const Entry& e = entries_[ref.slot];
  if (e.seq.load(std::memory_order_acquire) != ref.seq) return false;
  size_t q = e.qualname_size;
  size_t f = e.filename_size;
  if (q > kTextRoom || f > kTextRoom - q) return false;
  __builtin_memcpy(qualname, e.text, q);
  __builtin_memcpy(filename, e.text + q, f);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (e.seq.load(std::memory_order_relaxed) != ref.seq) return false;
  *qualname_size = q;
  *filename_size = f;
  return true;
}

int CodeTexts::LineAt(const Ref& ref, int first, int address) const {
  if (ref.slot >= kSlots || (ref.seq & 1) != 0) return -2;
  const Entry& e = entries_[ref.slot];
  if (e.seq.load(std::memory_order_acquire) != ref.seq) return -2;
  size_t size = e.table_size;
  if (size > kTableRoom) return -2;
  constexpr uint64_t kField = (uint64_t{1} << 24) - 1;
  uint64_t tag = ((static_cast<uint64_t>(ref.seq) & 0xFFFF) << 48) |
                 ((static_cast<uint64_t>(address) & kField) << 24);
  bool memo = address >= 0 && static_cast<uint64_t>(address) <= kField;
  uint64_t last = e.last_line.load(std::memory_order_relaxed);
  int line;
  if (memo && last != 0 && (last & ~kField) == tag) {
    line = static_cast<int>(last & kField) - 2;
  } else {
    // The entry may be taken over while it is read: the line is then
    // thrown away (the table's bytes, read racing, stay inside the entry),
    // and a line kept here under the old seq never matches the new one's.
    line = PyLineAt(e.table, size, first, address);
    if (memo && line >= -1 && static_cast<uint64_t>(line) + 2 <= kField) {
      e.last_line.store(tag | static_cast<uint64_t>(line + 2), std::memory_order_relaxed);
    }
  }
  std::atomic_thread_fence(std::memory_order_acquire);
  if (e.seq.load(std::memory_order_relaxed) != ref.seq) return -2;
  return line;
}

void CodeTexts::Clear() {
  for (size_t i = 0; i < kSlots; ++i) {
    if (entries_[i].seq.load(std::memory_order_relaxed) != 0) {
      entries_[i].seq.store(0, std::memory_order_relaxed);
    }
  }
  writing_.store(0, std::memory_order_relaxed);
}

// --- SampleRing --------------------------------------------------------------

namespace {
// A record: its size (header included, a multiple of 8) in the first word;
// kWrap fills the ring's end when the next record does not fit there.
constexpr uint32_t kWrap = 0xFFFFFFFFu;
constexpr uint32_t kHeader = 8;
}  // namespace

void SampleRing::Init(void* memory, uint32_t bytes) {
  data_ = static_cast<uint8_t*>(memory);
  mask_ = bytes - 1;
  Reset();
}

void SampleRing::Reset() {
  head_.store(0, std::memory_order_relaxed);
  tail_.store(0, std::memory_order_relaxed);
}

bool SampleRing::Push(const void* a, uint32_t a_size, const void* b, uint32_t b_size) {
  uint64_t capacity = static_cast<uint64_t>(mask_) + 1;
  uint64_t total = (kHeader + static_cast<uint64_t>(a_size) + b_size + 7) & ~uint64_t{7};
  uint64_t head = head_.load(std::memory_order_relaxed);
  uint64_t tail = tail_.load(std::memory_order_acquire);
  uint64_t pos = head & mask_;
  uint64_t pad = pos + total > capacity ? capacity - pos : 0;
  if (total > capacity || (head - tail) + pad + total > capacity) return false;
  if (pad != 0) {
    uint32_t wrap = kWrap;
    __builtin_memcpy(data_ + pos, &wrap, sizeof(wrap));
    head += pad;
    pos = 0;
  }
  uint32_t size = static_cast<uint32_t>(total);
  __builtin_memcpy(data_ + pos, &size, sizeof(size));
  if (a_size != 0) __builtin_memcpy(data_ + pos + kHeader, a, a_size);
  if (b_size != 0) __builtin_memcpy(data_ + pos + kHeader + a_size, b, b_size);
  head_.store(head + total, std::memory_order_release);
  return true;
}

uint32_t SampleRing::Pop(void* out, uint32_t room) {
  uint64_t capacity = static_cast<uint64_t>(mask_) + 1;
  uint64_t tail = tail_.load(std::memory_order_relaxed);
  for (;;) {
    uint64_t head = head_.load(std::memory_order_acquire);
    if (tail == head) return 0;
    uint64_t pos = tail & mask_;
    uint32_t size;
    __builtin_memcpy(&size, data_ + pos, sizeof(size));
    if (size == kWrap) {
      tail += capacity - pos;
      tail_.store(tail, std::memory_order_release);
      continue;
    }
    uint32_t payload = size - kHeader;
    bool fits = payload <= room;
    if (fits) __builtin_memcpy(out, data_ + pos + kHeader, payload);
    tail_.store(tail + size, std::memory_order_release);
    return fits ? payload : 0;
  }
}

// --- WalkPyFrames ------------------------------------------------------------

bool ReadOwnMemory(pid_t pid, const ReadPiece* pieces, int count) {
  if (count <= 0 || count > kMaxReadPieces) return false;
  struct iovec local[kMaxReadPieces];
  struct iovec remote[kMaxReadPieces];
  size_t total = 0;
  for (int i = 0; i < count; ++i) {
    local[i] = {pieces[i].out, pieces[i].size};
    remote[i] = {reinterpret_cast<void*>(pieces[i].address), pieces[i].size};
    total += pieces[i].size;
  }
  // A piece that cannot be read ends the copy there: fewer bytes than asked.
  return RawSyscall(SYS_process_vm_readv, pid, local, count, remote, count, 0) ==
         static_cast<long>(total);
}

namespace {

// The bounds of the chunks of a thread's data stack, innermost first.
struct Chunks {
  uintptr_t begin[kMaxChunks];
  uintptr_t end[kMaxChunks];
  int count = 0;

  // Plain loads: the thread state is the calling thread's own, and a chunk
  // stays mapped while it is linked (CPython unlinks one before it frees
  // it; this thread, which does both, is the one interrupted).
  void Find(const PyLayout& l, uintptr_t tstate) {
    uintptr_t chunk = Plain<uintptr_t>(tstate + l.tstate_datastack_chunk);
    while (chunk != 0 && count < kMaxChunks) {
      uint64_t size = Plain<uint64_t>(chunk + l.chunk_size);
      if (size < l.chunk_data + kFrameCopy || size > (uint64_t{1} << 40)) return;
      begin[count] = chunk + l.chunk_data;
      end[count] = chunk + size;
      ++count;
      chunk = Plain<uintptr_t>(chunk + l.chunk_previous);
    }
  }

  bool Hold(uintptr_t frame) const {
    for (int i = 0; i < count; ++i) {
      if (frame >= begin[i] && frame <= end[i] - kFrameCopy) return true;
    }
    return false;
  }
};

// Copies the head of frame `frame`: with a plain copy inside a chunk of the
// data stack (mapped while linked, whatever the frame holds), else through
// the reader (a generator's frame, or a pointer caught mid-update).
bool CopyFrame(const Chunks& chunks, const Reader& r, uintptr_t frame, uint8_t* out) {
  if (chunks.Hold(frame)) {
    __builtin_memcpy(out, reinterpret_cast<const void*>(frame), kFrameCopy);
    return true;
  }
  return r.Copy(frame, out, kFrameCopy);
}

// Fills the entry claimed as `ref` for `key`: names, and the location table
// where it fits.
void FillText(const PyWalk& w, const Reader& r, CodeTexts* texts, const CodeKey& key,
              CodeTexts::Ref* ref) {
  const PyLayout& l = *w.layout;
  CodeTexts::Entry* e = texts->Text(*ref);
  size_t q = CopyString(w, r, key.qualname, e->text, CodeTexts::kQualnameRoom);
  size_t n = CopyString(w, r, key.filename, e->text + q, CodeTexts::kTextRoom - q);
  e->qualname_size = static_cast<uint16_t>(q);
  e->filename_size = static_cast<uint16_t>(n);
  int64_t size = -1;
  if (r.Load(key.linetable + l.bytes_size, &size) && size >= 0 &&
      static_cast<uint64_t>(size) <= CodeTexts::kTableRoom &&
      r.Copy(key.linetable + l.bytes_data, e->table, static_cast<size_t>(size))) {
    e->table_size = static_cast<uint16_t>(size);
  }
  texts->Publish(ref);
}

// The line of byte offset `address` of a code object whose table is not
// kept: read at each sample, up to 4 KiB of it. 0 if none.
int ReadLine(const PyLayout& l, const Reader& r, const CodeKey& key, int address) {
  uint8_t table[4096];
  int64_t size = -1;
  if (!r.Load(key.linetable + l.bytes_size, &size) || size < 0) return 0;
  size_t n = static_cast<uint64_t>(size) < sizeof(table) ? static_cast<size_t>(size)
                                                         : sizeof(table);
  if (!r.Copy(key.linetable + l.bytes_data, table, n)) return 0;
  return PyLineAt(table, n, key.firstlineno, address);
}

}  // namespace

int WalkPyFrames(const PyWalk& w, const void* tstate, CodeTexts* texts, RawFrame* frames,
                 bool* cut) {
  *cut = false;
  if (tstate == nullptr) return 0;
  const PyLayout& l = *w.layout;
  Reader r(w.read);
  uintptr_t ts = reinterpret_cast<uintptr_t>(tstate);
  // tstate->cframe is the thread state's root cframe or one on this
  // thread's C stack, mapped either way; what its current_frame holds may
  // be stale (set a few instructions after the cframe is installed).
  uintptr_t cframe = Plain<uintptr_t>(ts + l.tstate_cframe);
  if (cframe == 0) return 0;
  uintptr_t frame = Plain<uintptr_t>(cframe + l.cframe_current_frame);
  if (frame == 0) return 0;
  Chunks chunks;
  chunks.Find(l, ts);
  int depth = 0;
  // Frames are followed kMaxReadPieces at a time, and their code objects
  // copied with one read; incomplete frames are skipped, but not without end.
  struct Pending {
    uintptr_t code;
    uintptr_t prev_instr;
    uint8_t owner;
  };
  int steps = 0;
  while (frame != 0 && steps < 4 * kMaxPyDepth) {
    Pending pending[kMaxReadPieces];
    alignas(8) uint8_t codes[kMaxReadPieces][kCodeCopy];
    ReadPiece pieces[kMaxReadPieces];
    int n = 0;
    bool end = false;
    while (n < kMaxReadPieces && frame != 0 && steps < 4 * kMaxPyDepth) {
      alignas(8) uint8_t f[kFrameCopy];
      if (!CopyFrame(chunks, r, frame, f)) return -2;
      ++steps;
      uintptr_t code = Field<uintptr_t>(f, l.frame_code);
      if (code == 0) {
        end = true;
        break;
      }
      pending[n] = {code, Field<uintptr_t>(f, l.frame_prev_instr), Field<uint8_t>(f, l.frame_owner)};
      pieces[n] = {code, codes[n], kCodeCopy};
      ++n;
      frame = Field<uintptr_t>(f, l.frame_previous);
    }
    if (!r.CopyAll(pieces, n)) return -2;
    for (int i = 0; i < n; ++i) {
      const uint8_t* c = codes[i];
      if (Field<const void*>(c, l.object_type) != w.code_type) return -2;
      uintptr_t code = pending[i].code;
      intptr_t address = static_cast<intptr_t>(pending[i].prev_instr - (code + l.code_code));
      int32_t traceable = Field<int32_t>(c, l.code_firsttraceable);
      if (pending[i].owner != l.owned_by_generator &&
          address < 2 * static_cast<intptr_t>(traceable)) {
        continue;  // pushed, not started: as _PyFrame_IsIncomplete
      }
      if (depth == kMaxPyDepth) {
        *cut = true;
        return depth;
      }
      CodeKey key = {code, Field<uintptr_t>(c, l.code_qualname),
                     Field<uintptr_t>(c, l.code_filename), Field<uintptr_t>(c, l.code_linetable),
                     Field<int32_t>(c, l.code_firstlineno)};
      RawFrame& out = frames[depth];
      if (!texts->Find(key, &out.text)) {
        if (!texts->Claim(key, &out.text)) return -1;
        FillText(w, r, texts, key, &out.text);
      }
      out.firstlineno = key.firstlineno;
      int line = -1;
      if (address >= -(intptr_t{1} << 30) && address <= (intptr_t{1} << 30)) {
        line = texts->LineAt(out.text, key.firstlineno, static_cast<int>(address));
        if (line == -2) line = ReadLine(l, r, key, static_cast<int>(address));
      }
      out.line = line > 0 ? static_cast<uint32_t>(line) : 0;
      ++depth;
    }
    if (end) break;
  }
  return depth;
}

}  // namespace iotap::interpose
