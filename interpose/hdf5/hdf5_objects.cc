#include "interpose/hdf5/hdf5_objects.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include <atomic>

#include "interpose/core/once_set.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"
#include "interpose/file/wire_writer.h"
#include "interpose/file/writer.h"

namespace iotap::interpose {

namespace {


// --- The identifier table ------------------------------------------------------

constexpr int kSlotBits = 12;
constexpr size_t kSlots = size_t{1} << kSlotBits;

struct Slot {
  std::atomic<int64_t> key{0};     // the hid_t, 0 = empty
  std::atomic<uint64_t> value{0};  // library index << 56 | element_size << 32 | name
};

struct Table {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;  // writers only
  Slot slots[kSlots];
};
constinit Table g_table;
constinit OnceSet<4096> g_described;

// An hid_t is the identifier's type in the top bits and a per-type serial
// number below, so the hash mixes both: the first file and the first dataset
// must not share a slot. Two HDF5 libraries hand out the same identifiers,
// so the library takes part in the hash and is kept in the value.
Slot& SlotOf(const Hdf5Library* lib, hid_t id) {
  uint64_t h = (static_cast<uint64_t>(id) + lib->index()) * 0x9e3779b97f4a7c15ull;
  return g_table.slots[h >> (64 - kSlotBits)];
}

uint64_t Pack(const Hdf5Library* lib, Hdf5Object o) {
  uint64_t size = o.element_size < (1u << 24) ? o.element_size : 0;
  return uint64_t{lib->index()} << 56 | size << 32 | o.name;
}

// Writers empty the key first and publish it last, so a reader that sees the
// same key before and after reading the value has a consistent pair.
void Remember(const Hdf5Library* lib, hid_t id, Hdf5Object o) {
  Slot& s = SlotOf(lib, id);
  pthread_mutex_lock(&g_table.lock);
  s.key.store(0, std::memory_order_relaxed);
  s.value.store(Pack(lib, o), std::memory_order_release);
  s.key.store(id, std::memory_order_release);
  pthread_mutex_unlock(&g_table.lock);
}

// --- Asking HDF5 ---------------------------------------------------------------

// Turns HDF5's automatic error printing off for the scope.
class QuietErrors {
 public:
  explicit QuietErrors(Hdf5Library* lib) : lib_(lib) {
    saved_ = lib_->Get<Hdf5Fn::H5Eget_auto2>()(H5E_DEFAULT, &func_, &data_) >= 0;
    if (saved_) lib_->Get<Hdf5Fn::H5Eset_auto2>()(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietErrors() {
    if (saved_) lib_->Get<Hdf5Fn::H5Eset_auto2>()(H5E_DEFAULT, func_, data_);
  }

 private:
  Hdf5Library* lib_;
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
  bool saved_ = false;
};

// Hdf5Dataset.Layout in trace.proto.
uint32_t LayoutOf(H5D_layout_t layout) {
  switch (layout) {
    case H5D_COMPACT: return 1;
    case H5D_CONTIGUOUS: return 2;
    case H5D_CHUNKED: return 3;
#if H5_VERSION_GE(1, 10, 0)
    case H5D_VIRTUAL: return 4;
#endif
    default: return 0;
  }
}

const char* TypeClassName(H5T_class_t c) {
  switch (c) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_TIME: return "time";
    case H5T_STRING: return "string";
    case H5T_BITFIELD: return "bitfield";
    case H5T_OPAQUE: return "opaque";
    case H5T_COMPOUND: return "compound";
    case H5T_REFERENCE: return "reference";
    case H5T_ENUM: return "enum";
    case H5T_VLEN: return "vlen";
    case H5T_ARRAY: return "array";
    default: return "unknown";
  }
}

// Writes the dataset's Hdf5Dataset packet.
void Describe(Hdf5Library* lib, hid_t dset, const Hdf5Object& o, uint32_t file, const char* path, size_t path_len,
              H5T_class_t type_class) {
  uint8_t buf[4096];
  WireWriter w(buf, sizeof(buf));
  size_t packet = w.BeginNested(1);  // Trace.packet
  size_t msg = w.BeginNested(7);     // Packet.hdf5_dataset
  w.Varint(1, o.name);
  w.VarintIfNonZero(2, file);
  w.Bytes(3, path, path_len);
  w.VarintIfNonZero(4, o.element_size);
  hsize_t dims[H5S_MAX_RANK];
  hid_t space = lib->Get<Hdf5Fn::H5Dget_space>()(dset);
  if (space >= 0) {
    int rank = lib->Get<Hdf5Fn::H5Sget_simple_extent_dims>()(space, dims, nullptr);
    for (int i = 0; i < rank; ++i) w.Varint(5, dims[i]);
    lib->Get<Hdf5Fn::H5Sclose>()(space);
  }
  hid_t dcpl = lib->Get<Hdf5Fn::H5Dget_create_plist>()(dset);
  if (dcpl >= 0) {
    H5D_layout_t layout = lib->Get<Hdf5Fn::H5Pget_layout>()(dcpl);
    w.VarintIfNonZero(6, LayoutOf(layout));
    if (layout == H5D_CHUNKED) {
      int rank = lib->Get<Hdf5Fn::H5Pget_chunk>()(dcpl, H5S_MAX_RANK, dims);
      for (int i = 0; i < rank; ++i) w.Varint(7, dims[i]);
    }
    int filters = lib->Get<Hdf5Fn::H5Pget_nfilters>()(dcpl);
    for (int i = 0; i < filters; ++i) {
      unsigned flags = 0, config = 0;
      size_t values = 0;
      char name[128] = {};
      H5Z_filter_t id = lib->Get<Hdf5Fn::H5Pget_filter2>()(dcpl, static_cast<unsigned>(i), &flags, &values,
                                             nullptr, sizeof(name), name, &config);
      if (id < 0) continue;
      size_t filter = w.BeginNested(8);
      w.Varint(1, static_cast<uint64_t>(static_cast<int64_t>(id)));
      w.Bytes(2, name, strnlen(name, sizeof(name)));
      w.EndNested(filter);
    }
    lib->Get<Hdf5Fn::H5Pclose>()(dcpl);
  }
  w.String(9, TypeClassName(type_class));
  w.EndNested(msg);
  w.EndNested(packet);
  if (!w.overflow()) WritePackets(buf, w.size());
}

}  // namespace

uint32_t Hdf5NoteFile(Hdf5Library* lib, hid_t file, const char* filename) {
  uint32_t path = InternPath(AT_FDCWD, filename);
  Remember(lib, file, Hdf5Object{path, 0});
  return path;
}

Hdf5Object Hdf5NoteDataset(Hdf5Library* lib, hid_t dset) {
  QuietErrors quiet(lib);
  // "FILE:/path": the file's name as POSIX events name it, then the
  // dataset's path in the file.
  char name[PATH_MAX * 2 + 1024];
  char file_name[PATH_MAX];
  ssize_t n = lib->Get<Hdf5Fn::H5Fget_name>()(dset, file_name, sizeof(file_name));
  uint32_t file = 0;
  size_t used = 0;
  if (n > 0 && static_cast<size_t>(n) < sizeof(file_name)) {
    file = InternPath(AT_FDCWD, file_name);
    used = AbsolutePath(AT_FDCWD, file_name, name, PATH_MAX * 2);
  }
  name[used++] = ':';
  char* path = name + used;
  ssize_t p = lib->Get<Hdf5Fn::H5Iget_name>()(dset, path, sizeof(name) - used);
  size_t path_len = p > 0 ? strnlen(path, sizeof(name) - used - 1) : 0;
  Hdf5Object o;
  o.name = InternString(name, used + path_len, kKindDataset);
  hid_t type = lib->Get<Hdf5Fn::H5Dget_type>()(dset);
  H5T_class_t type_class = H5T_NO_CLASS;
  if (type >= 0) {
    o.element_size = static_cast<uint32_t>(lib->Get<Hdf5Fn::H5Tget_size>()(type));
    type_class = lib->Get<Hdf5Fn::H5Tget_class>()(type);
    lib->Get<Hdf5Fn::H5Tclose>()(type);
  }
  if (o.name != 0 && g_described.First(o.name)) {
    Describe(lib, dset, o, file, path, path_len, type_class);
  }
  Remember(lib, dset, o);
  return o;
}

Hdf5Object Hdf5DatasetForIo(Hdf5Library* lib, hid_t dset) {
  Hdf5Object o;
  if (Hdf5Find(lib, dset, &o) && g_described.Contains(o.name)) return o;
  return Hdf5NoteDataset(lib, dset);
}

bool Hdf5Find(const Hdf5Library* lib, hid_t id, Hdf5Object* out) {
  const Slot& s = SlotOf(lib, id);
  if (s.key.load(std::memory_order_acquire) != id) return false;
  uint64_t v = s.value.load(std::memory_order_acquire);
  if (s.key.load(std::memory_order_relaxed) != id || v >> 56 != lib->index()) return false;
  out->name = static_cast<uint32_t>(v);
  out->element_size = static_cast<uint32_t>(v >> 32) & ((1u << 24) - 1);
  return true;
}

void Hdf5Forget(const Hdf5Library* lib, hid_t id) {
  Slot& s = SlotOf(lib, id);
  pthread_mutex_lock(&g_table.lock);
  if (s.key.load(std::memory_order_relaxed) == id &&
      s.value.load(std::memory_order_relaxed) >> 56 == lib->index()) {
    s.key.store(0, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_table.lock);
}

void Hdf5AfterForkChild() {
  Hdf5LibrariesAfterForkChild();
  pthread_mutex_init(&g_table.lock, nullptr);
  g_described.Clear();
}

}  // namespace iotap::interpose
