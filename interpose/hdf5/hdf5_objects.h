// What the HDF5 layer knows about the identifiers a program holds.
//
// The wrappers learn about a file when H5Fopen or H5Fcreate returns it, and
// about a dataset when H5Dopen2, H5Dcreate2 or H5Oopen returns it (or, for a
// dataset opened some other way, at its first read or write). A dataset is
// named "FILE:/path/in/file" (FILE absolute, as POSIX events name it),
// interned as KIND_DATASET, and described once per trace file by an
// Hdf5Dataset packet: file, path, element size, dimensions, layout, chunk
// dimensions, filters, type class.
//
// Identifiers belong to the library that issued them (`lib`: a process may
// hold several). They live in a direct-mapped hash table of 4096 entries (HDF5
// hands out identifiers of one type in sequence, so live ones rarely
// collide); an entry that was
// evicted is found again the slow way, through the HDF5 API. Lookups take no
// lock; entering and forgetting take one, on open and close only.
//
// HDF5 functions are called only after the program's own call succeeded:
// every API entry clears HDF5's error stack, which a program (h5py does)
// reads after a failure. While the shim asks its questions, HDF5's automatic
// error printing is off, so nothing the shim does reaches stderr.

#ifndef IOTAP_INTERPOSE_HDF5_HDF5_OBJECTS_H_
#define IOTAP_INTERPOSE_HDF5_HDF5_OBJECTS_H_

#include <stdint.h>

#include "interpose/hdf5/hdf5_api.h"

namespace iotap::interpose {

struct Hdf5Object {
  uint32_t name = 0;          // the dataset's (KIND_DATASET) or the file's (path) string id
  uint32_t element_size = 0;  // bytes per element of a dataset's type (below 16 MiB); 0 for files
};

// After H5Fopen or H5Fcreate returned `file` for `filename`: interns the path
// as POSIX events name it and remembers it. Returns the path's string id.
uint32_t Hdf5NoteFile(Hdf5Library* lib, hid_t file, const char* filename);

// After a dataset identifier was returned: names it, describes it if this
// trace file has no description of it yet, and remembers it.
Hdf5Object Hdf5NoteDataset(Hdf5Library* lib, hid_t dset);

// A dataset being read or written: as remembered, or noted now; described
// again if this trace file lacks its description (in a fork child).
Hdf5Object Hdf5DatasetForIo(Hdf5Library* lib, hid_t dset);

// What `id` was remembered as; false (and `out` untouched) if unknown.
bool Hdf5Find(const Hdf5Library* lib, hid_t id, Hdf5Object* out);

// After `id` was closed.
void Hdf5Forget(const Hdf5Library* lib, hid_t id);

// In a fork child: every dataset is described anew in the child's trace.
void Hdf5AfterForkChild();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_HDF5_HDF5_OBJECTS_H_
