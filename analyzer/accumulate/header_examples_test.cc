// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <map>
#include <string>
#include <vector>

#include "analyzer/accumulate/cuda_accumulator.h"
#include "analyzer/accumulate/file_accumulator.h"
#include "analyzer/accumulate/hdf5_accumulator.h"
#include "analyzer/accumulate/interval_union.h"
#include "analyzer/accumulate/tfrecord_accumulator.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

TEST(HeaderExamplesTest, IntervalUnion) {
  // interval_union.h
  IntervalUnion u(/*horizon_ns=*/2'000'000'000);
  u.Add(100, 250);
  u.Add(200, 300);   // overlaps: the union is [100, 300)
  u.Finish();
  EXPECT_EQ(u.total_ns(), 200);
}

TEST(HeaderExamplesTest, TimeBitmap) {
  const int64_t run_start_ns = 1'000'000'000;
  const int64_t start_ns = run_start_ns + 5'000, end_ns = run_start_ns + 9'000;
  const int64_t window_start = run_start_ns + 7'000, window_end = run_start_ns + 20'000;
  // time_bitmap.h
  TimeBitmap io(run_start_ns, /*resolution_ns=*/1000);
  io.Set(start_ns, end_ns);              // any order, overlaps fine
  EXPECT_EQ(io.Count(window_start, window_end), 2'000);  // busy ns inside the window
}

TEST(HeaderExamplesTest, CudaAccumulator) {
  EventBatch batch;
  Event copy;
  copy.op = OP_CUDA_MEMCPY_HTOD;
  copy.requested = 4096;
  copy.flags = FLAG_CUDA_PINNED;
  batch.events = {copy, copy};
  std::vector<std::string> directions;
  // cuda_accumulator.h
  CudaAccumulator cuda;
  for (const Event& e : batch.events) cuda.Add(e);  // anything but CUDA is ignored
  for (const auto& [key, copies] : cuda.copies) directions.push_back(key.direction);

  EXPECT_EQ(directions, std::vector<std::string>{"HtoD"});
  EXPECT_EQ(cuda.copies.begin()->second.bytes, 8192u);
}

TEST(HeaderExamplesTest, FileAccumulator) {
  Event e;
  e.op = OP_PREAD;
  e.result = 100;
  // file_accumulator.h
  FileCounts counts;
  const OpTraits& op = TraitsOf(e.op);
  counts.Count(e, op, BytesMoved(e));
  counts.reads();  // POSIX, STDIO and GDS reads

  EXPECT_EQ(counts.reads(), 1u);
  EXPECT_EQ(counts.read_bytes, 100u);
}

TEST(HeaderExamplesTest, Hdf5Accumulator) {
  ProcessTrace process("p.iotap");
  process.AddString(7, InternedString::KIND_DATASET, "/d/x.h5:/images");
  Event e;
  e.op = OP_PREAD;
  e.result = 512;
  e.parent = 1;
  const OpTraits& op = TraitsOf(e.op);
  Packet packet;
  packet.mutable_hdf5_dataset()->set_id(7);
  // hdf5_accumulator.h
  Hdf5Accumulator hdf5;                      // one per process
  hdf5.OnBeneath(e, op, BytesMoved(e));      // a POSIX or STDIO event with a parent
  e = Event();
  e.op = OP_H5D_READ;
  e.file = 7;
  e.aux = 1;
  hdf5.OnCall(process, e);                   // an HDF5 event
  hdf5.OnDescription(packet.hdf5_dataset()); // an Hdf5Dataset packet
  std::map<std::string, DatasetAccumulator> datasets = hdf5.Finish(process);

  ASSERT_EQ(datasets.size(), 1u);
  EXPECT_EQ(datasets.at("/d/x.h5:/images").posix_read_bytes, 512u);
}

TEST(HeaderExamplesTest, TfRecordAccumulator) {
  ProcessTrace process("p.iotap");
  process.AddString(3, InternedString::KIND_PATH, "/d/train.tfrecord");
  Event e;
  e.op = OP_TFRECORD_RECORD;
  e.file = 3;
  e.requested = 100;
  Packet packet;
  TfRecordAccumulator run;
  const int rank = 0;
  // tfrecord_accumulator.h
  TfRecordAccumulator tf;          // one per process
  tf.OnRecord(e);                  // each event; anything but a record is ignored
  tf.OnPacket(process, packet);    // each packet: TfRecordFile descriptions
  tf.OnFileEnd(process);           // the process's files, by path
  run.Absorb(std::move(tf), rank); // into the run's
  std::vector<TfRecordFileAccumulator> files = run.Files();

  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].records, 1u);
}

}  // namespace
}  // namespace iotap::analyzer
