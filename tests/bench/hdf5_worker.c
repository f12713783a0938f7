/* The HDF5 program the overhead harness runs, traced and untraced: a tight
 * loop of H5Dread calls, timed from inside.
 *
 *   hdf5_worker h5dread FILE CALLS   H5Dread of one 64-byte row of a chunked
 *                                    dataset whose chunks sit in HDF5's chunk
 *                                    cache: no I/O beneath, so the difference
 *                                    is the wrapper's own cost
 *
 * FILE is created first (untimed). Prints the harness's key=value line. */

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double Seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 4 || strcmp(argv[1], "h5dread") != 0) {
    fprintf(stderr, "usage: hdf5_worker h5dread FILE CALLS\n");
    return 1;
  }
  long calls = atol(argv[3]);
  static int data[1024 * 16];
  for (int i = 0; i < 1024 * 16; ++i) data[i] = i;
  hsize_t dims[2] = {1024, 16}, chunk[2] = {256, 16}, one[2] = {1, 16};
  hid_t space = H5Screate_simple(2, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  hid_t f = H5Fcreate(argv[2], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  hid_t d = H5Dcreate2(f, "/rows", H5T_NATIVE_INT, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0) return 2;
  hid_t ms = H5Screate_simple(2, one, NULL);
  hid_t fs = H5Scopy(space);
  int row[16];
  /* Rows of the first chunk only: after the first read it is cached. */
  hsize_t start[2] = {0, 0};
  H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, one, NULL);
  if (H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) < 0) return 2;
  double w0 = Seconds(CLOCK_MONOTONIC), c0 = Seconds(CLOCK_PROCESS_CPUTIME_ID);
  hssize_t shift[2] = {0, 0};
  for (long i = 0; i < calls; ++i) {
    shift[0] = i & 255;
    H5Soffset_simple(fs, shift);
    if (H5Dread(d, H5T_NATIVE_INT, ms, fs, H5P_DEFAULT, row) < 0) return 3;
  }
  double wall = Seconds(CLOCK_MONOTONIC) - w0, cpu = Seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
  H5Sclose(fs);
  H5Sclose(ms);
  H5Dclose(d);
  H5Fclose(f);
  printf("ns_per_call=%.2f cpu_ns_per_call=%.2f calls=%ld rss_growth_kib=0\n", wall / calls * 1e9,
         cpu / calls * 1e9, calls);
  return 0;
}
