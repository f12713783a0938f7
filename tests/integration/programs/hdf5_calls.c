/* Calls every HDF5 function libiotap.so wraps, in a fixed order, for the HDF5
 * layer's tests (hdf5_test.cc lists the events it must produce).
 *
 *   hdf5_calls FILE
 *
 * Part 1 writes FILE: a contiguous and a chunked (deflate) dataset of 100 x 10
 * int32, written whole, by hyperslab and by a raw chunk. Part 2 reads them
 * back through H5Dopen2, H5Oopen and H5Dread_chunk, opens a group and a
 * missing dataset, and makes an H5Dread fail. Part 3 reads a dataset whose
 * filter reads another dataset: an H5Dread inside an H5Dread.
 *
 * Prints "errors_after_failed_read N": HDF5's error stack depth right after
 * the failed H5Dread, which the shim must leave as it was. */

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>

#define NESTING_FILTER 300

static hid_t g_inner = -1; /* the dataset the nesting filter reads */

/* An identity filter that, when data is read, first reads row 7 of g_inner. */
static size_t NestingFilter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                            size_t nbytes, size_t* buf_size, void** buf) {
  (void)cd_nelmts;
  (void)cd_values;
  (void)buf_size;
  (void)buf;
  if ((flags & H5Z_FLAG_REVERSE) && g_inner >= 0) {
    int row[10];
    hsize_t start[2] = {7, 0}, count[2] = {1, 10}, n = 10;
    hid_t fs = H5Dget_space(g_inner);
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t ms = H5Screate_simple(1, &n, NULL);
    if (H5Dread(g_inner, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) < 0 || row[3] != 73) return 0;
    H5Sclose(ms);
    H5Sclose(fs);
  }
  return nbytes;
}

static const H5Z_class2_t kNestingClass = {H5Z_CLASS_T_VERS, NESTING_FILTER, 1, 1, "nesting",
                                           NULL, NULL, NestingFilter};

/* A selection of rows [first, first + rows) of a 100 x 10 dataspace, and a
 * memory space of the same shape. */
static void Rows(hid_t space, hsize_t first, hsize_t rows, hid_t* fs, hid_t* ms) {
  hsize_t start[2] = {first, 0}, count[2] = {rows, 10};
  *fs = H5Scopy(space);
  H5Sselect_hyperslab(*fs, H5S_SELECT_SET, start, NULL, count, NULL);
  *ms = H5Screate_simple(2, count, NULL);
}

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "hdf5_calls: %s failed\n", what);
    exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: hdf5_calls FILE\n");
    return 2;
  }
  const char* path = argv[1];
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the failures below print nothing */
  int data[1000], back[1000];
  for (int i = 0; i < 1000; ++i) data[i] = i;
  hsize_t dims[2] = {100, 10}, chunk[2] = {10, 10}, raw_at[2] = {50, 0};
  hid_t space = H5Screate_simple(2, dims, NULL), fs, ms;

  /* Part 1: write. */
  hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  Check(f >= 0, "H5Fcreate");
  hid_t contig = H5Dcreate2(f, "/contig", H5T_STD_I32LE, space, H5P_DEFAULT, H5P_DEFAULT,
                            H5P_DEFAULT);
  Check(H5Dwrite(contig, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "write all");
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  H5Pset_deflate(dcpl, 6);
  hid_t chunked = H5Dcreate2(f, "/chunked", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  Rows(space, 0, 50, &fs, &ms);
  Check(H5Dwrite(chunked, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, data) >= 0, "write rows");
  H5Sclose(fs);
  H5Sclose(ms);
  /* Rows 50-59 as a raw chunk of 400 bytes, deflate skipped (filter mask 1). */
  Check(H5Dwrite_chunk(chunked, H5P_DEFAULT, 1, raw_at, 400, data) >= 0, "H5Dwrite_chunk");
  Check(H5Fflush(f, H5F_SCOPE_GLOBAL) >= 0, "H5Fflush");
  H5Dclose(chunked);
  H5Dclose(contig);
  H5Fclose(f);

  /* Part 2: read. */
  f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  contig = H5Dopen2(f, "/contig", H5P_DEFAULT);
  Rows(space, 10, 3, &fs, &ms);
  Check(H5Dread(contig, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, back) >= 0 && back[0] == 100,
        "read rows");
  H5Sclose(fs);
  H5Sclose(ms);
  hid_t obj = H5Oopen(f, "/chunked", H5P_DEFAULT);
  Check(H5Dread(obj, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0 && back[499] == 499,
        "read all");
  uint32_t filters = 0;
  Check(H5Dread_chunk(obj, H5P_DEFAULT, raw_at, &filters, back) >= 0 && filters == 1,
        "H5Dread_chunk");
  hid_t group = H5Oopen(f, "/", H5P_DEFAULT);
  H5Oclose(group);
  H5Oclose(obj);
  Check(H5Dopen2(f, "/missing", H5P_DEFAULT) < 0, "failing H5Dopen2");
  Check(H5Dread(obj, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0, "failing H5Dread");
  printf("errors_after_failed_read %d\n", (int)H5Eget_num(H5E_DEFAULT));
  H5Dclose(contig);
  H5Fclose(f);

  /* Part 3: an H5Dread inside an H5Dread. */
  Check(H5Zregister(&kNestingClass) >= 0, "H5Zregister");
  f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t dcpl2 = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl2, 2, chunk);
  H5Pset_filter(dcpl2, NESTING_FILTER, H5Z_FLAG_MANDATORY, 0, NULL);
  hid_t nested = H5Dcreate2(f, "/nested", H5T_STD_I32LE, space, H5P_DEFAULT, dcpl2, H5P_DEFAULT);
  Check(H5Dwrite(nested, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0, "write nested");
  H5Dclose(nested);
  g_inner = H5Dopen2(f, "/contig", H5P_DEFAULT);
  nested = H5Dopen2(f, "/nested", H5P_DEFAULT);
  Rows(space, 0, 10, &fs, &ms);
  Check(H5Dread(nested, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, back) >= 0 && back[99] == 99,
        "read nested");
  H5Sclose(fs);
  H5Sclose(ms);
  H5Dclose(nested);
  H5Dclose(g_inner);
  H5Fclose(f);
  H5Pclose(dcpl);
  H5Pclose(dcpl2);
  H5Sclose(space);
  return 0;
}
