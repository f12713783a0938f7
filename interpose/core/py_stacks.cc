// iotap_py_stacks: the Python stacks of a process's threads, read and
// interned in one call that holds the GIL throughout.
//
// From CPython 3.11 on, a frame object of another thread (what
// sys._current_frames() returns) is a view of that thread's live frame. A
// sampler written in Python walks it bytecode by bytecode, and between two
// bytecodes the interpreter may hand the GIL to the thread whose frames are
// being walked (the switch interval, a sampler descheduled on a busy
// machine). That thread then pops frames the sampler still reads: CPython
// 3.11 crashes there (cpython gh-99110 and the reports of every in-process
// Python profiler since). Here the frames are taken, walked and let go in C,
// between two bytecodes of the sampler, with the collector paused so that no
// finaliser runs (and gives the GIL away) in between: no other thread runs
// Python while a frame is held.
//
// Only functions of CPython's C API are used (found in the running
// interpreter by name, never linked), no structure of the interpreter is
// read: _PyThread_CurrentFrames (sys._current_frames), PyFrame_GetBack,
// PyFrame_GetCode, PyFrame_GetLineNumber, the code object's co_qualname,
// co_filename and co_firstlineno attributes, and PyGC_Disable/Enable.

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "interpose/core/io_event.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/core/real.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"

using namespace iotap::interpose;

namespace {

// Frames kept per stack, innermost first; a deeper stack is cut and marked
// with function id 0 (line 0) at its outer end, as the Python sampler does.
constexpr int kMaxDepth = 128;
constexpr size_t kMaxPyString = 8192;
// Code objects whose function ids are kept (with a reference, so that an
// address is never another code object's) before the table is emptied.
constexpr size_t kCacheSlots = 16384;
constexpr size_t kCacheMax = kCacheSlots * 3 / 4;

using Object = void;

struct PythonApi {
  Object* (*current_frames)();
  Object* (*dict_get_item)(Object*, Object*);
  Object* (*long_from_unsigned_long)(unsigned long);
  Object* (*frame_get_back)(Object*);
  Object* (*frame_get_code)(Object*);
  int (*frame_get_line_number)(Object*);
  Object* (*get_attr_string)(Object*, const char*);
  const char* (*unicode_as_utf8_and_size)(Object*, ssize_t*);
  long (*long_as_long)(Object*);
  void (*incref)(Object*);
  void (*decref)(Object*);
  void (*err_clear)();
  int (*gc_disable)();
  int (*gc_enable)();
};

constinit PythonApi g_api = {};
constinit int g_api_state = 0;  // 0: not looked up, 1: found, -1: missing

template <typename Fn>
bool Find(Fn* out, const char* name) {
  *out = reinterpret_cast<Fn>(ResolveGlobal(name));
  return *out != nullptr;
}

bool Api() {
  if (g_api_state == 0) {
    PythonApi& a = g_api;
    bool ok = Find(&a.current_frames, "_PyThread_CurrentFrames") &&
              Find(&a.dict_get_item, "PyDict_GetItem") &&
              Find(&a.long_from_unsigned_long, "PyLong_FromUnsignedLong") &&
              Find(&a.frame_get_back, "PyFrame_GetBack") &&
              Find(&a.frame_get_code, "PyFrame_GetCode") &&
              Find(&a.frame_get_line_number, "PyFrame_GetLineNumber") &&
              Find(&a.get_attr_string, "PyObject_GetAttrString") &&
              Find(&a.unicode_as_utf8_and_size, "PyUnicode_AsUTF8AndSize") &&
              Find(&a.long_as_long, "PyLong_AsLong") && Find(&a.incref, "Py_IncRef") &&
              Find(&a.decref, "Py_DecRef") && Find(&a.err_clear, "PyErr_Clear") &&
              Find(&a.gc_disable, "PyGC_Disable") && Find(&a.gc_enable, "PyGC_Enable");
    g_api_state = ok ? 1 : -1;
  }
  return g_api_state == 1;
}

// Code object -> function id, for one generation of the string table in one
// process. Touched only with the GIL held.
struct CodeCache {
  Object* code[kCacheSlots];
  uint32_t id[kCacheSlots];
  size_t used;
  uint32_t generation;
  pid_t pid;
};
constinit CodeCache g_cache = {};

void ClearCache() {
  CodeCache& c = g_cache;
  for (size_t i = 0; i < kCacheSlots; ++i) {
    if (c.code[i] != nullptr) g_api.decref(c.code[i]);
    c.code[i] = nullptr;
  }
  c.used = 0;
}

size_t Slot(Object* code) {
  uintptr_t h = reinterpret_cast<uintptr_t>(code) >> 4;
  h ^= h >> 17;
  h *= 0x9E3779B97F4A7C15ull;
  size_t i = static_cast<size_t>(h >> 40) & (kCacheSlots - 1);
  while (g_cache.code[i] != nullptr && g_cache.code[i] != code) i = (i + 1) & (kCacheSlots - 1);
  return i;
}

// Appends the UTF-8 text of attribute `name` of `code` (a string) to `out`
// at `*n`, at most `room` bytes; "?" when it has none.
void AppendText(Object* code, const char* name, char* out, size_t* n, size_t room) {
  const char* text = "?";
  ssize_t size = 1;
  Object* value = g_api.get_attr_string(code, name);
  if (value != nullptr) {
    const char* utf8 = g_api.unicode_as_utf8_and_size(value, &size);
    if (utf8 != nullptr) {
      text = utf8;
    } else {
      size = 1;
    }
  }
  size_t take = static_cast<size_t>(size) < room - *n ? static_cast<size_t>(size) : room - *n;
  memcpy(out + *n, text, take);
  *n += take;
  if (value != nullptr) g_api.decref(value);
  g_api.err_clear();
}

uint32_t Intern(const char* bytes, size_t n, StringKind kind) {
  ThreadState* ts = &tls_thread;
  bool was_busy = ts->busy;
  ts->busy = true;
  uint32_t id = InternString(bytes, n, kind);
  ts->busy = was_busy;
  return id;
}

// The function id of `code`: "QUALNAME\0FILE\0FIRSTLINE", interned once per
// generation. 0 if it cannot be interned.
uint32_t FunctionId(Object* code) {
  size_t slot = Slot(code);
  if (g_cache.code[slot] == code) return g_cache.id[slot];
  char text[kMaxPyString];
  size_t n = 0;
  constexpr size_t kLineRoom = 24;
  AppendText(code, "co_qualname", text, &n, (kMaxPyString - kLineRoom) / 2);
  text[n++] = '\0';
  AppendText(code, "co_filename", text, &n, kMaxPyString - kLineRoom);
  text[n++] = '\0';
  long first = 0;
  if (Object* line = g_api.get_attr_string(code, "co_firstlineno")) {
    first = g_api.long_as_long(line);
    g_api.decref(line);
  }
  g_api.err_clear();
  n += static_cast<size_t>(snprintf(text + n, kLineRoom, "%ld", first < 0 ? 0 : first));
  uint32_t id = Intern(text, n, kKindPyFunction);
  if (id == 0) return 0;
  if (g_cache.used < kCacheMax) {
    g_api.incref(code);
    g_cache.code[slot] = code;
    g_cache.id[slot] = id;
    ++g_cache.used;
  }
  return id;
}

size_t PutVarint(uint8_t* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  out[n++] = static_cast<uint8_t>(v);
  return n;
}

// The stack id of the thread whose current frame is `frame` (a borrowed
// reference), 0 if it cannot be interned.
uint32_t StackId(Object* frame) {
  uint32_t ids[kMaxDepth];
  uint32_t lines[kMaxDepth];
  int depth = 0;
  bool cut = false;
  g_api.incref(frame);
  while (frame != nullptr) {
    if (depth == kMaxDepth) {
      cut = true;
      g_api.decref(frame);
      break;
    }
    Object* code = g_api.frame_get_code(frame);
    int line = g_api.frame_get_line_number(frame);
    ids[depth] = code != nullptr ? FunctionId(code) : 0;
    lines[depth] = line > 0 ? static_cast<uint32_t>(line) : 0;
    if (code != nullptr) g_api.decref(code);
    if (ids[depth] == 0) {
      g_api.decref(frame);
      return 0;
    }
    ++depth;
    Object* back = g_api.frame_get_back(frame);
    g_api.decref(frame);
    frame = back;
  }
  uint8_t bytes[kMaxPyString];
  size_t n = 0;
  if (cut) {
    bytes[n++] = 0;
    bytes[n++] = 0;
  }
  for (int i = depth; i-- > 0 && n + 10 <= sizeof(bytes);) {
    n += PutVarint(bytes + n, ids[i]);
    n += PutVarint(bytes + n, lines[i]);
  }
  return n == 0 ? 0 : Intern(reinterpret_cast<const char*>(bytes), n, kKindPyStack);
}

}  // namespace

namespace {

int ReadStacks(const unsigned long* idents, int n, long long* stacks) {
  if (n < 0 || (n > 0 && (idents == nullptr || stacks == nullptr))) return -1;
  if (!Api()) return -1;
  for (int i = 0; i < n; ++i) stacks[i] = 0;
  if (n == 0 || !Recording()) return 0;
  int collecting = g_api.gc_disable();
  pid_t pid = static_cast<pid_t>(RawSyscall(SYS_getpid));
  uint32_t generation = StringGeneration();
  if (g_cache.generation != generation || g_cache.pid != pid) {
    ClearCache();
    g_cache.generation = generation;
    g_cache.pid = pid;
  }
  Object* frames = g_api.current_frames();
  int found = 0;
  for (int i = 0; frames != nullptr && i < n; ++i) {
    Object* key = g_api.long_from_unsigned_long(idents[i]);
    Object* frame = key != nullptr ? g_api.dict_get_item(frames, key) : nullptr;
    if (key != nullptr) g_api.decref(key);
    if (frame == nullptr) continue;
    uint32_t id = StackId(frame);
    // Interning may have emptied the table: ids of the earlier generation
    // are not returned, and the cache starts over.
    uint32_t now = StringGeneration();
    if (now != generation) {
      ClearCache();
      g_cache.generation = now;
      generation = now;
      id = StackId(frame);
      if (StringGeneration() != generation) id = 0;
    }
    if (id != 0) {
      stacks[i] = static_cast<long long>((static_cast<uint64_t>(generation) << 32) | id);
      ++found;
    }
  }
  if (frames != nullptr) g_api.decref(frames);
  g_api.err_clear();
  if (collecting) g_api.gc_enable();
  return found;
}

}  // namespace

IOTAP_EXPORT int iotap_py_stacks(const unsigned long* idents, int n, long long* stacks) {
  int saved = errno;  // looking the interpreter's functions up may set it
  int found = ReadStacks(idents, n, stacks);
  errno = saved;
  return found;
}
