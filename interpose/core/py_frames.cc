// CPython 3.11's frames and code objects read from a signal handler, the
// table of code objects' names, and the per-thread ring of raw samples: see
// py_frames.h. Nothing here allocates, locks or calls the interpreter.

#include "interpose/core/py_frames.h"

#include <string.h>

namespace iotap::interpose {

namespace {

// Offsets of CPython 3.11 (Include/cpython/pystate.h,
// Include/internal/pycore_frame.h, Include/cpython/code.h,
// Include/cpython/unicodeobject.h), as offsetof gives them on LP64 against
// Debian's 3.11.2 headers; unchanged within 3.11.
constexpr PyLayout kPython311 = {
    .tstate_cframe = 56,
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

template <typename T>
T Load(uintptr_t address) {
  T value;
  __builtin_memcpy(&value, reinterpret_cast<const void*>(address), sizeof(T));
  return value;
}

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

// Copies string object `s` as UTF-8 into `out`, at most `room` bytes: "?"
// if it is not a compact str (code objects' names always are).
size_t CopyString(const PyLayout& l, uintptr_t s, const void* unicode_type, char* out,
                  size_t room) {
  if (room == 0) return 0;
  uint32_t state = 0;
  int64_t length = -1;
  if (s != 0 && Load<const void*>(s + l.object_type) == unicode_type) {
    state = Load<uint32_t>(s + l.str_state);
    length = Load<int64_t>(s + l.str_length);
  }
  if (length < 0 || (state & l.state_compact_bit) == 0) {
    out[0] = '?';
    return 1;
  }
  size_t n = static_cast<size_t>(length);
  if ((state & l.state_ascii_bit) != 0) {
    if (n > room) n = room;
    __builtin_memcpy(out, reinterpret_cast<const void*>(s + l.str_ascii_data), n);
    return n;
  }
  uintptr_t utf8 = Load<uintptr_t>(s + l.str_utf8);
  if (utf8 != 0) {
    int64_t size = Load<int64_t>(s + l.str_utf8_length);
    n = size < 0 ? 0 : static_cast<size_t>(size);
    if (n > room) n = room;
    __builtin_memcpy(out, reinterpret_cast<const void*>(utf8), n);
    return n;
  }
  uint32_t kind = (state >> l.state_kind_shift) & 7;
  uintptr_t data = s + l.str_compact_data;
  size_t used = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t c = kind == 1   ? Load<uint8_t>(data + i)
                 : kind == 2 ? Load<uint16_t>(data + 2 * i)
                             : Load<uint32_t>(data + 4 * i);
    uint8_t bytes[4];
    size_t k;
    if (c < 0x80) {
      bytes[0] = static_cast<uint8_t>(c);
      k = 1;
    } else if (c < 0x800) {
      bytes[0] = static_cast<uint8_t>(0xC0 | (c >> 6));
      bytes[1] = static_cast<uint8_t>(0x80 | (c & 63));
      k = 2;
    } else if (c < 0x10000) {
      bytes[0] = static_cast<uint8_t>(0xE0 | (c >> 12));
      bytes[1] = static_cast<uint8_t>(0x80 | ((c >> 6) & 63));
      bytes[2] = static_cast<uint8_t>(0x80 | (c & 63));
      k = 3;
    } else {
      bytes[0] = static_cast<uint8_t>(0xF0 | ((c >> 18) & 7));
      bytes[1] = static_cast<uint8_t>(0x80 | ((c >> 12) & 63));
      bytes[2] = static_cast<uint8_t>(0x80 | ((c >> 6) & 63));
      bytes[3] = static_cast<uint8_t>(0x80 | (c & 63));
      k = 4;
    }
    if (used + k > room) break;
    __builtin_memcpy(out + used, bytes, k);
    used += k;
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
  std::atomic_thread_fence(std::memory_order_release);
  __builtin_memcpy(&e.key, &key, sizeof(key));
  e.qualname_size = 0;
  e.filename_size = 0;
  *ref = {static_cast<uint32_t>(slot), seq + 1};
  return true;
}

void CodeTexts::Publish(Ref* ref) {
  ref->seq += 1;
  entries_[ref->slot].seq.store(ref->seq, std::memory_order_release);
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

void CodeTexts::Clear() {
  for (size_t i = 0; i < kSlots; ++i) entries_[i].seq.store(0, std::memory_order_relaxed);
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

int WalkPyFrames(const PyLayout& l, const void* tstate, const void* unicode_type,
                 CodeTexts* texts, RawFrame* frames, bool* cut) {
  *cut = false;
  if (tstate == nullptr) return 0;
  uintptr_t cframe = Load<uintptr_t>(reinterpret_cast<uintptr_t>(tstate) + l.tstate_cframe);
  if (cframe == 0) return 0;
  uintptr_t frame = Load<uintptr_t>(cframe + l.cframe_current_frame);
  int depth = 0;
  // Incomplete frames are skipped, but not without end.
  for (int steps = 0; frame != 0 && steps < 4 * kMaxPyDepth; ++steps) {
    uintptr_t code = Load<uintptr_t>(frame + l.frame_code);
    if (code == 0) break;
    uintptr_t prev_instr = Load<uintptr_t>(frame + l.frame_prev_instr);
    uintptr_t first_unit = code + l.code_code;
    int32_t traceable = Load<int32_t>(code + l.code_firsttraceable);
    uintptr_t next = Load<uintptr_t>(frame + l.frame_previous);
    if (Load<uint8_t>(frame + l.frame_owner) != l.owned_by_generator &&
        static_cast<intptr_t>(prev_instr - first_unit) < 2 * static_cast<intptr_t>(traceable)) {
      frame = next;  // pushed, not started: as _PyFrame_IsIncomplete
      continue;
    }
    if (depth == kMaxPyDepth) {
      *cut = true;
      break;
    }
    CodeKey key = {code, Load<uintptr_t>(code + l.code_qualname),
                   Load<uintptr_t>(code + l.code_filename),
                   Load<int32_t>(code + l.code_firstlineno)};
    RawFrame& f = frames[depth];
    if (!texts->Find(key, &f.text)) {
      if (!texts->Claim(key, &f.text)) return -1;
      CodeTexts::Entry* e = texts->Text(f.text);
      size_t q = CopyString(l, key.qualname, unicode_type, e->text, CodeTexts::kQualnameRoom);
      size_t n = CopyString(l, key.filename, unicode_type, e->text + q, CodeTexts::kTextRoom - q);
      e->qualname_size = static_cast<uint16_t>(q);
      e->filename_size = static_cast<uint16_t>(n);
      texts->Publish(&f.text);
    }
    f.firstlineno = key.firstlineno;
    int line = -1;
    uintptr_t table = Load<uintptr_t>(code + l.code_linetable);
    if (table != 0) {
      int64_t size = Load<int64_t>(table + l.bytes_size);
      if (size >= 0 && size <= (1 << 24)) {
        line = PyLineAt(reinterpret_cast<const uint8_t*>(table + l.bytes_data),
                        static_cast<size_t>(size), key.firstlineno,
                        static_cast<int>(static_cast<intptr_t>(prev_instr - first_unit)));
      }
    }
    f.line = line > 0 ? static_cast<uint32_t>(line) : 0;
    ++depth;
    frame = next;
  }
  return depth;
}

}  // namespace iotap::interpose
