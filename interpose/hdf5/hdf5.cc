// The HDF5 layer: files, datasets and the reads and writes of datasets.
//
// Each call gets an id, a process-wide counter from 1, recorded in the
// event's `aux`. While the outermost HDF5 call of a thread runs, its id is the
// thread's `parent`, so every POSIX and STDIO event it causes carries it: the
// analyzer counts the POSIX reads beneath each H5Dread. HDF5 calls made from
// inside another one (a filter callback that reads a second dataset, a
// library calling its own public API) are recorded too, with `parent` = the
// outermost call's id; they leave the thread's `parent` alone, so the POSIX
// events beneath them are attributed to the outermost call.
//
// Each call goes to the library its caller would have reached without the
// shim (Hdf5LibraryFor, hdf5_api.h), found before the call's start time.
//
// Events: `file` = the dataset (KIND_DATASET) or the HDF5 file's path,
// `aux` = the call's id, `parent` = the enclosing call's id (0 = outermost).
// See enum Op in trace.proto for the other columns of each op.

#include <fcntl.h>

#include <atomic>

#include "interpose/core/io_event.h"
#include "interpose/core/strings.h"
#include "interpose/core/trace_call.h"
#include "interpose/hdf5/hdf5_api.h"
#include "interpose/hdf5/hdf5_objects.h"

namespace iotap::interpose {
namespace {


constinit std::atomic<uint64_t> g_last_call_id{0};

// TraceCall for HDF5: also hands out the call's id and makes it the thread's
// parent while the outermost call runs.
class Hdf5Call {
 public:
  // `fn` is the wrapped function, `caller` the wrapper's return address:
  // together they name the library to forward to (hdf5_api.h).
  Hdf5Call(Hdf5Fn fn, const void* caller) : lib_(Hdf5LibraryFor(caller, fn)), call_(kLayerHdf5) {
    if (!call_.active()) return;
    outer_ = tls_thread.parent;
    id_ = g_last_call_id.fetch_add(1, std::memory_order_relaxed) + 1;
    if (outer_ == 0) tls_thread.parent = id_;
  }

  bool active() const { return call_.active(); }
  Hdf5Library* lib() const { return lib_; }

  // As TraceCall::Finish; the event's parent is the enclosing call (0 for
  // the outermost) and its aux this call's id.
  RawEvent* Finish(Op op, bool failed) {
    if (!call_.active()) return nullptr;
    if (outer_ == 0) tls_thread.parent = 0;
    RawEvent* e = call_.Finish(op, failed);
    if (e != nullptr) e->aux = id_;
    return e;
  }

 private:
  Hdf5Library* lib_;  // first: found before the call's start time is taken
  TraceCall call_;
  uint64_t id_ = 0;
  uint64_t outer_ = 0;
};

// The number of elements an H5Dread or H5Dwrite transferred: the file
// selection's, else the memory selection's, else the whole dataset's
// (H5S_ALL for both).
hssize_t SelectedElements(Hdf5Library* lib, hid_t dset, hid_t mem_space, hid_t file_space) {
  if (file_space != H5S_ALL) return lib->Get<Hdf5Fn::H5Sget_select_npoints>()(file_space);
  if (mem_space != H5S_ALL) return lib->Get<Hdf5Fn::H5Sget_select_npoints>()(mem_space);
  hid_t space = lib->Get<Hdf5Fn::H5Dget_space>()(dset);
  if (space < 0) return -1;
  hssize_t n = lib->Get<Hdf5Fn::H5Sget_simple_extent_npoints>()(space);
  lib->Get<Hdf5Fn::H5Sclose>()(space);
  return n;
}

// H5Fcreate and H5Fopen: file = the path; requested = the access flags.
void RecordFileOpen(Hdf5Call& call, Op op, const char* filename, unsigned flags, hid_t r) {
  RawEvent* e = call.Finish(op, r < 0);
  if (!call.active()) return;
  uint32_t file = r >= 0 ? Hdf5NoteFile(call.lib(), r, filename) : InternPath(AT_FDCWD, filename);
  if (e == nullptr) return;
  e->file = file;
  e->requested = flags;
  e->result = r;
}

// Calls that end with an identifier's life (H5Fclose, H5Dclose, H5Oclose).
void RecordClose(Hdf5Call& call, Op op, hid_t id, herr_t r) {
  RawEvent* e = call.Finish(op, r < 0);
  if (!call.active()) return;
  Hdf5Object o;
  bool known = Hdf5Find(call.lib(), id, &o);
  if (r >= 0 && known) Hdf5Forget(call.lib(), id);
  if (e == nullptr) return;
  e->file = o.name;
  e->result = r;
}

// Calls that return a dataset (H5Dcreate2, H5Dopen2, and H5Oopen when the
// object is a dataset).
void RecordDatasetOpen(Hdf5Call& call, Op op, hid_t r, bool maybe_not_dataset) {
  RawEvent* e = call.Finish(op, r < 0);
  if (!call.active()) return;
  Hdf5Object o;
  if (r >= 0 && (!maybe_not_dataset || call.lib()->Get<Hdf5Fn::H5Iget_type>()(r) == H5I_DATASET)) {
    o = Hdf5NoteDataset(call.lib(), r);
  }
  if (e == nullptr) return;
  e->file = o.name;
  e->result = r;
}

// H5Dread and H5Dwrite: requested = logical bytes (elements x element size),
// result = elements on success, else the herr_t.
void RecordTransfer(Hdf5Call& call, Op op, hid_t dset, hid_t mem_space, hid_t file_space,
                    herr_t r) {
  RawEvent* e = call.Finish(op, r < 0);
  if (e == nullptr) return;
  Hdf5Object o;
  if (r < 0) {
    Hdf5Find(call.lib(), dset, &o);  // no HDF5 call after a failure: see hdf5_objects.h
    e->result = r;
  } else {
    o = Hdf5DatasetForIo(call.lib(), dset);
    hssize_t n = SelectedElements(call.lib(), dset, mem_space, file_space);
    e->result = n;
    if (n > 0) e->requested = static_cast<uint64_t>(n) * o.element_size;
  }
  e->file = o.name;
}

}  // namespace
}  // namespace iotap::interpose

using namespace iotap::interpose;

IOTAP_EXPORT hid_t H5Fcreate(const char* filename, unsigned flags, hid_t fcpl_id,
                             hid_t fapl_id) {
  Hdf5Call call(Hdf5Fn::H5Fcreate, __builtin_return_address(0));
  hid_t r = call.lib()->Get<Hdf5Fn::H5Fcreate>()(filename, flags, fcpl_id, fapl_id);
  RecordFileOpen(call, kOpH5fCreate, filename, flags, r);
  return r;
}

IOTAP_EXPORT hid_t H5Fopen(const char* filename, unsigned flags, hid_t fapl_id) {
  Hdf5Call call(Hdf5Fn::H5Fopen, __builtin_return_address(0));
  hid_t r = call.lib()->Get<Hdf5Fn::H5Fopen>()(filename, flags, fapl_id);
  RecordFileOpen(call, kOpH5fOpen, filename, flags, r);
  return r;
}

// file = what object_id names (the file, or a dataset); requested = scope.
IOTAP_EXPORT herr_t H5Fflush(hid_t object_id, H5F_scope_t scope) {
  Hdf5Call call(Hdf5Fn::H5Fflush, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Fflush>()(object_id, scope);
  if (RawEvent* e = call.Finish(kOpH5fFlush, r < 0)) {
    Hdf5Object o;
    Hdf5Find(call.lib(), object_id, &o);
    e->file = o.name;
    e->requested = static_cast<uint64_t>(scope);
    e->result = r;
  }
  return r;
}

IOTAP_EXPORT herr_t H5Fclose(hid_t file_id) {
  Hdf5Call call(Hdf5Fn::H5Fclose, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Fclose>()(file_id);
  RecordClose(call, kOpH5fClose, file_id, r);
  return r;
}

IOTAP_EXPORT hid_t H5Dcreate2(hid_t loc_id, const char* name, hid_t type_id, hid_t space_id,
                              hid_t lcpl_id, hid_t dcpl_id, hid_t dapl_id) {
  Hdf5Call call(Hdf5Fn::H5Dcreate2, __builtin_return_address(0));
  hid_t r = call.lib()->Get<Hdf5Fn::H5Dcreate2>()(loc_id, name, type_id, space_id, lcpl_id, dcpl_id, dapl_id);
  RecordDatasetOpen(call, kOpH5dCreate, r, false);
  return r;
}

IOTAP_EXPORT hid_t H5Dopen2(hid_t loc_id, const char* name, hid_t dapl_id) {
  Hdf5Call call(Hdf5Fn::H5Dopen2, __builtin_return_address(0));
  hid_t r = call.lib()->Get<Hdf5Fn::H5Dopen2>()(loc_id, name, dapl_id);
  RecordDatasetOpen(call, kOpH5dOpen, r, false);
  return r;
}

// h5py opens every object, datasets included, with H5Oopen.
IOTAP_EXPORT hid_t H5Oopen(hid_t loc_id, const char* name, hid_t lapl_id) {
  Hdf5Call call(Hdf5Fn::H5Oopen, __builtin_return_address(0));
  hid_t r = call.lib()->Get<Hdf5Fn::H5Oopen>()(loc_id, name, lapl_id);
  RecordDatasetOpen(call, kOpH5oOpen, r, true);
  return r;
}

IOTAP_EXPORT herr_t H5Oclose(hid_t object_id) {
  Hdf5Call call(Hdf5Fn::H5Oclose, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Oclose>()(object_id);
  RecordClose(call, kOpH5oClose, object_id, r);
  return r;
}

IOTAP_EXPORT herr_t H5Dclose(hid_t dset_id) {
  Hdf5Call call(Hdf5Fn::H5Dclose, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Dclose>()(dset_id);
  RecordClose(call, kOpH5dClose, dset_id, r);
  return r;
}

IOTAP_EXPORT herr_t H5Dread(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id,
                            hid_t file_space_id, hid_t dxpl_id, void* buf) {
  Hdf5Call call(Hdf5Fn::H5Dread, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Dread>()(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
  RecordTransfer(call, kOpH5dRead, dset_id, mem_space_id, file_space_id, r);
  return r;
}

IOTAP_EXPORT herr_t H5Dwrite(hid_t dset_id, hid_t mem_type_id, hid_t mem_space_id,
                             hid_t file_space_id, hid_t dxpl_id, const void* buf) {
  Hdf5Call call(Hdf5Fn::H5Dwrite, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Dwrite>()(dset_id, mem_type_id, mem_space_id, file_space_id, dxpl_id, buf);
  RecordTransfer(call, kOpH5dWrite, dset_id, mem_space_id, file_space_id, r);
  return r;
}

#if IOTAP_HDF5_HAS_CHUNK_IO
// requested = the chunk's stored bytes (as H5Dget_chunk_storage_size gives
// them), result = the herr_t.
IOTAP_EXPORT herr_t H5Dread_chunk(hid_t dset_id, hid_t dxpl_id, const hsize_t* offset,
                                  uint32_t* filters, void* buf) {
  Hdf5Call call(Hdf5Fn::H5Dread_chunk, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Dread_chunk>()(dset_id, dxpl_id, offset, filters, buf);
  if (RawEvent* e = call.Finish(kOpH5dReadChunk, r < 0)) {
    Hdf5Object o;
    hsize_t bytes = 0;
    if (r >= 0) {
      o = Hdf5DatasetForIo(call.lib(), dset_id);
      if (call.lib()->Get<Hdf5Fn::H5Dget_chunk_storage_size>()(dset_id, offset, &bytes) < 0) bytes = 0;
    } else {
      Hdf5Find(call.lib(), dset_id, &o);
    }
    e->file = o.name;
    e->requested = bytes;
    e->result = r;
  }
  return r;
}

// requested = data_size, the bytes handed over as the stored chunk.
IOTAP_EXPORT herr_t H5Dwrite_chunk(hid_t dset_id, hid_t dxpl_id, uint32_t filters,
                                   const hsize_t* offset, size_t data_size, const void* buf) {
  Hdf5Call call(Hdf5Fn::H5Dwrite_chunk, __builtin_return_address(0));
  herr_t r = call.lib()->Get<Hdf5Fn::H5Dwrite_chunk>()(dset_id, dxpl_id, filters, offset, data_size, buf);
  if (RawEvent* e = call.Finish(kOpH5dWriteChunk, r < 0)) {
    Hdf5Object o;
    if (r >= 0) {
      o = Hdf5DatasetForIo(call.lib(), dset_id);
    } else {
      Hdf5Find(call.lib(), dset_id, &o);
    }
    e->file = o.name;
    e->requested = data_size;
    e->result = r;
  }
  return r;
}
#endif
