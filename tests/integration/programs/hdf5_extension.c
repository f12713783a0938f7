/* A stand-in for a Python extension module that uses HDF5, for the test of a
 * privately loaded libhdf5: it is linked against libhdf5 the ordinary way
 * (its DT_NEEDED names libhdf5's soname) and private_hdf5 loads it with
 * RTLD_LOCAL, as Python loads h5py's modules.
 *
 * run_hdf5(FILE) writes a 100 x 10 float dataset "/x" chunked 10 x 10, then
 * reads rows 20-24 back (50 elements, 200 bytes). Returns 0 on success.
 * keep_open(FILE) creates FILE and leaves it open: which library holds it
 * open shows where the shim forwarded the call. */

#include <hdf5.h>

__attribute__((visibility("default"))) int run_hdf5(const char* path) {
  float data[1000], back[50];
  for (int i = 0; i < 1000; ++i) data[i] = (float)i;
  hsize_t dims[2] = {100, 10}, chunk[2] = {10, 10}, start[2] = {20, 0}, count[2] = {5, 10};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t d = H5Dcreate2(f, "/x", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) {
    return 1;
  }
  H5Dclose(d);
  H5Fclose(f);
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t o = H5Oopen(f, "/x", H5P_DEFAULT);
  hid_t fs = H5Dget_space(o);
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
  hid_t ms = H5Screate_simple(2, count, NULL);
  if (H5Dread(o, H5T_NATIVE_FLOAT, ms, fs, H5P_DEFAULT, back) < 0 || back[49] != 249.0f) return 2;
  H5Sclose(ms);
  H5Sclose(fs);
  H5Oclose(o);
  H5Fclose(f);
  H5Pclose(dcpl);
  H5Sclose(space);
  return 0;
}

__attribute__((visibility("default"))) int keep_open(const char* path) {
  return H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT) >= 0 ? 0 : 1;
}
