// Reading a Python thread's own stack from CPython's internal structures,
// in a signal handler: what the signal sampler (py_signal.h) records.
//
//   PyWalk walk = {PyLayoutFor(py_version), &PyUnicode_Type, &PyCode_Type,
//                  ReadOwnMemory};                       // layout nullptr: unknown
//   RawFrame frames[kMaxPyDepth];
//   bool cut;
//   int depth = WalkPyFrames(walk, tstate, &texts, frames, &cut);
//
// Everything here is async-signal-safe: no allocation, no lock, no call into
// the interpreter. The structures read are those of one CPython version
// (PyLayout), checked at start against the C API (WalkMatchesApi, in
// py_stacks.cc); the code objects' names and location tables are copied into
// CodeTexts, a fixed table filled by the handlers and read by the sampler
// thread without the GIL; the samples go through SampleRing, one per sampled
// thread.
//
// A handler can interrupt the interpreter anywhere, also between two stores
// that CPython makes as one step: a frame pointer may be uninitialised stack
// for a few instructions (3.11 sets tstate->cframe to a new _PyCFrame before
// that cframe's current_frame), or name a frame being cleared, whose code
// object may be freed. So no pointer read from the interpreter's objects is
// followed with a plain load: a walk reads through `read` (ReadOwnMemory: a
// system call that copies, and fails where memory is not mapped, rather than
// fault), except for a frame that lies inside the thread's own data stack,
// whose chunks stay mapped while the thread links them. What a stale pointer
// can still give is a wrong name or line, never a fault; a code object is
// used only if its type is the code type.

#ifndef IOTAP_INTERPOSE_PYSTACKS_PY_FRAMES_H_
#define IOTAP_INTERPOSE_PYSTACKS_PY_FRAMES_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <atomic>

namespace iotap::interpose {

// Frames kept per stack, innermost first; a deeper stack is cut.
constexpr int kMaxPyDepth = 128;

// Offsets (bytes) into the structures of one CPython version, x86-64 and
// aarch64 alike (LP64). The sampler reads nothing else.
struct PyLayout {
  uint32_t tstate_cframe;          // PyThreadState.cframe
  uint32_t tstate_datastack_chunk; // .datastack_chunk (the innermost chunk)
  uint32_t chunk_previous;         // _PyStackChunk.previous
  uint32_t chunk_size;             // .size (bytes, the header included)
  uint32_t chunk_data;             // .data: the first frame's place
  uint32_t cframe_current_frame;   // _PyCFrame.current_frame
  uint32_t frame_code;             // _PyInterpreterFrame.f_code
  uint32_t frame_previous;         // .previous
  uint32_t frame_prev_instr;       // .prev_instr
  uint32_t frame_owner;            // .owner (a char)
  uint8_t owned_by_generator;      // FRAME_OWNED_BY_GENERATOR
  uint32_t code_filename;          // PyCodeObject.co_filename
  uint32_t code_qualname;          // .co_qualname
  uint32_t code_firstlineno;       // .co_firstlineno (an int)
  uint32_t code_linetable;         // .co_linetable (bytes)
  uint32_t code_firsttraceable;    // ._co_firsttraceable (an int, code units)
  uint32_t code_code;              // .co_code_adaptive: the first code unit
  uint32_t object_type;            // PyObject.ob_type
  uint32_t bytes_size;             // PyVarObject.ob_size
  uint32_t bytes_data;             // PyBytesObject.ob_sval
  uint32_t str_length;             // PyASCIIObject.length (code points)
  uint32_t str_state;              // .state (bit fields, below)
  uint32_t str_ascii_data;         // sizeof(PyASCIIObject): a compact ASCII string's text
  uint32_t str_utf8_length;        // PyCompactUnicodeObject.utf8_length
  uint32_t str_utf8;               // .utf8 (a cached UTF-8 copy, or null)
  uint32_t str_compact_data;       // sizeof(PyCompactUnicodeObject): other compact text
  uint32_t state_kind_shift;       // state's kind (1, 2, 4 bytes a code point)
  uint32_t state_compact_bit;
  uint32_t state_ascii_bit;
};

// One piece of a read: `size` bytes at `address`, into `out`.
struct ReadPiece {
  uintptr_t address;
  void* out;
  size_t size;
};
// At most this many pieces a read.
constexpr int kMaxReadPieces = 16;

// Copies `count` pieces of process `pid`'s memory (the caller's own); false
// if any byte of them cannot be read. Must not fault.
using MemoryReader = bool (*)(pid_t pid, const ReadPiece* pieces, int count);

// A MemoryReader that copies with one process_vm_readv: about 0.85 us a
// call and 0.35 us more a piece on the 2-core VM. False also where the
// system call is refused (a seccomp profile), which a walk then reports as
// an unreadable stack.
bool ReadOwnMemory(pid_t pid, const ReadPiece* pieces, int count);

// What a walk needs: the structures' layout, the types that tell a str and
// a code object, and how memory the walk does not trust is read.
struct PyWalk {
  const PyLayout* layout;
  const void* unicode_type;  // &PyUnicode_Type
  const void* code_type;     // &PyCode_Type
  MemoryReader read;
};

// The layout of CPython `py_version` (Py_Version: 0xMMmmppRS), or nullptr if
// the sampler does not know it. 3.11.1 and later 3.11 releases only: 3.11.0
// cleared a returning frame while the thread's current frame still pointed
// at it (cpython gh-99729), which a handler would read freed.
const PyLayout* PyLayoutFor(unsigned long py_version);

// The line of the instruction at byte offset `address` of a code object
// whose co_linetable is `table` (`size` bytes; CPython 3.11's location table)
// and co_firstlineno `first`: what PyCode_Addr2Line returns. -1 where the
// table says the instruction has no line, or does not cover it; `first`
// for a negative address.
int PyLineAt(const uint8_t* table, size_t size, int first, int address);

// The identity of a code object as a handler sees it: its address, and what
// tells a code object later made at the same address apart (its name, file
// and location table objects and first line).
struct CodeKey {
  uintptr_t code;
  uintptr_t qualname;
  uintptr_t filename;
  uintptr_t linetable;
  int32_t firstlineno;

  bool operator==(const CodeKey&) const = default;
};

// A fixed table of code objects' names, "QUALNAME" and "FILE" as UTF-8, and
// of their location tables (so that a sample's line costs no read of the
// interpreter's memory), filled by signal handlers in any thread and read by
// handlers and the sampler thread.
// An entry is written under its sequence number (odd while written): a
// reader copies it and keeps the copy only if the number did not change, so
// an entry taken over by another code object is never read as this one's.
class CodeTexts {
 public:
  static constexpr size_t kSlots = 4096;  // a power of two
  static constexpr size_t kProbes = 8;
  // Room for the qualname and the file name together, and for the
  // qualname: longer names are cut (the GIL sampler cuts at 4 KiB).
  static constexpr size_t kTextRoom = 1000;
  static constexpr size_t kQualnameRoom = 400;
  // Room for a location table: 99% of those of PyTorch's and PIL's
  // functions fit (CPython 3.11.2). A longer one is read at each sample.
  static constexpr size_t kTableRoom = 1024;
  static constexpr uint16_t kTableNotKept = 0xFFFF;

  struct Entry {
    std::atomic<uint32_t> seq;  // 0: never written; odd: being written
    CodeKey key;
    uint16_t qualname_size;
    uint16_t filename_size;
    uint16_t table_size;  // kTableNotKept: too long, or unreadable
    // The last line looked up: the entry's seq (low 16 bits), the byte
    // offset (24 bits) and the line + 2 (24 bits); 0: none. The callers'
    // frames of a busy thread sit at the same offset sample after sample.
    mutable std::atomic<uint64_t> last_line;
    char text[kTextRoom];  // the qualname, then the file name
    uint8_t table[kTableRoom];
  };

  // A reference to an entry as written: slot and sequence number.
  struct Ref {
    uint32_t slot;
    uint32_t seq;
  };

  // Uses `entries` (kSlots of them, zeroed): memory the caller maps once.
  void Init(Entry* entries) { entries_ = entries; }
  bool ready() const { return entries_ != nullptr; }

  // The entry of `key`, if one holds it. Signal-safe.
  bool Find(const CodeKey& key, Ref* ref) const;
  // Claims an entry for `key` (an empty one among the probes, else the
  // first probe's, taken over): its text is written with Text() and made
  // visible by Publish(). False if another writer holds it. Signal-safe.
  bool Claim(const CodeKey& key, Ref* ref);
  Entry* Text(const Ref& ref) { return &entries_[ref.slot]; }
  // Ends a Claim: the entry is readable as `ref` (whose seq it sets).
  void Publish(Ref* ref);

  // Copies the texts of `ref` into `qualname` and `filename` (kTextRoom
  // bytes each) with their sizes; false if the entry is no longer `ref`'s.
  bool Read(const Ref& ref, char* qualname, size_t* qualname_size, char* filename,
            size_t* filename_size) const;

  // The line of byte offset `address` in the location table kept in
  // `ref`'s entry (PyLineAt, first line `first`). -1: no line; -2: the
  // entry keeps no table, or is no longer `ref`'s. Signal-safe.
  int LineAt(const Ref& ref, int first, int address) const;

  // Empties the table (before any handler runs), writing only entries that
  // were used: pages never touched stay unallocated.
  void Clear();

  // Whether an entry is claimed and not yet published. In a fork child,
  // where the writer no longer exists, such an entry would stay claimed for
  // ever: the child then clears the table.
  bool Writing() const { return writing_.load(std::memory_order_acquire) != 0; }

 private:
  static size_t Home(uintptr_t code);
  Entry* entries_ = nullptr;
  std::atomic<uint32_t> writing_{0};  // claims not yet published
};

// A single-producer, single-consumer ring of variable-sized records in
// caller-provided memory: the handler of one thread writes, the sampler
// thread reads. Push and Pop never block; Push fails when the ring is full.
class SampleRing {
 public:
  // `bytes`: a power of two, a multiple of 8; `memory` 8-byte aligned.
  void Init(void* memory, uint32_t bytes);
  void Reset();
  bool Push(const void* a, uint32_t a_size, const void* b, uint32_t b_size);
  // Copies the oldest record into `out` (at most `room` bytes) and drops
  // it; its size, or 0 if the ring is empty (or the record does not fit
  // `room`: dropped too).
  uint32_t Pop(void* out, uint32_t room);

 private:
  uint8_t* data_ = nullptr;
  uint32_t mask_ = 0;
  std::atomic<uint64_t> head_{0};  // bytes written, by the producer
  std::atomic<uint64_t> tail_{0};  // bytes read, by the consumer
};

// One frame of a raw sample: the code object's names in CodeTexts, its
// first line (in the key) and the current line (0 if none).
struct RawFrame {
  CodeTexts::Ref text;
  int32_t firstlineno;
  uint32_t line;
};

// The stack of the thread whose PyThreadState is `tstate`, innermost frame
// first, into `frames` (kMaxPyDepth of them). Incomplete frames (pushed, not
// yet started) are skipped, as the C API does. Returns the depth, 0 if the
// thread has no Python frame, -1 if a name could not be copied (another
// thread's handler was writing the entry: the caller tries again later), -2
// if a frame or code object could not be read or is not one (a pointer
// caught between two stores, or `walk.read` refused): no part of such a
// stack is kept. `*cut` says the stack went deeper than kMaxPyDepth.
// Signal-safe, given that the calling thread is `tstate`'s (its frames
// cannot change while the handler runs) and that `tstate` is alive.
int WalkPyFrames(const PyWalk& walk, const void* tstate, CodeTexts* texts, RawFrame* frames,
                 bool* cut);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_PYSTACKS_PY_FRAMES_H_
