// The layers' sections of `iotap stats`: CUDA, HDF5 datasets and TFRecord
// files, in JSON and text, from hand-filled stats.proto messages.

#include "analyzer/output/stats_sections.h"

#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer::internal {
namespace {

std::string Json(void (*write)(const stats::Stats&, JsonWriter&), const stats::Stats& s,
                 bool member) {
  JsonWriter j;
  if (member) j.BeginObject();
  write(s, j);
  if (member) j.EndObject();
  return j.Take();
}

stats::Stats Cuda() {
  stats::Stats s;
  stats::CudaCopies* c = s.add_cuda_copies();
  c->set_direction("HtoD");
  c->set_host_memory("pinned");
  c->set_mode("async");
  c->set_calls(3);
  c->set_failed_calls(1);
  c->set_bytes(8192);
  c->set_seconds(0.002);
  stats::CudaCopies* d = s.add_cuda_copies();
  d->set_direction("DtoD");
  d->set_host_memory("none");
  d->set_mode("sync");
  d->set_calls(1);
  d->set_failed_calls(1);
  d->set_seconds(0.001);
  stats::CudaDeviceCopies* dev = s.mutable_cuda_device()->add_copies();
  dev->set_direction("HtoD");
  dev->set_host_memory("pinned");
  dev->set_copies(2);
  dev->set_bytes(8192);
  dev->set_seconds(0.0005);
  s.mutable_cuda_device()->set_kernels(10);
  s.mutable_cuda_device()->set_kernel_seconds(1.5);
  s.mutable_cuda_pinned()->set_allocations(2);
  s.mutable_cuda_pinned()->set_bytes(1 << 20);
  return s;
}

TEST(StatsSectionsTest, CudaJson) {
  EXPECT_EQ(Json(CudaToJson, Cuda(), true), R"g({
  "cuda_copies": [
    {
      "direction": "HtoD",
      "host_memory": "pinned",
      "mode": "async",
      "calls": 3,
      "failed_calls": 1,
      "bytes": 8192,
      "seconds": 0.002
    },
    {
      "direction": "DtoD",
      "host_memory": "none",
      "mode": "sync",
      "calls": 1,
      "failed_calls": 1,
      "bytes": 0,
      "seconds": 0.001
    }
  ],
  "cuda_device": {
    "copies": [
      {
        "direction": "HtoD",
        "host_memory": "pinned",
        "copies": 2,
        "bytes": 8192,
        "seconds": 0.0005
      }
    ],
    "kernels": 10,
    "kernel_seconds": 1.5
  },
  "cuda_pinned": {
    "allocations": 2,
    "bytes": 1048576
  }
})g");
}

TEST(StatsSectionsTest, CudaText) {
  EXPECT_EQ(CudaToText(Cuda()), R"g(CUDA copies (host side: bytes of the calls that succeeded, time the calls took):
  direction host      mode      calls  failed        bytes       time   bytes/call
  HtoD      pinned    async         3       1     8.00 KiB     2.0 ms     4.00 KiB
  DtoD      none      sync          1       1          0 B     1.0 ms            -
  pinned host memory: 2 allocations or registrations, 1.00 MiB
CUDA on the device (CUPTI: bytes, device time):
  HtoD      pinned           2 copies     8.00 KiB   500.0 us
  kernels         10, 1.50 s
)g");
  EXPECT_EQ(CudaToText(stats::Stats()), "");
}

stats::Stats Datasets() {
  stats::Stats s;
  stats::Dataset* d = s.add_datasets();
  d->set_dataset("/d/x.h5:/images");
  d->set_file("/d/x.h5");
  d->set_name("/images");
  d->set_described(true);
  d->set_element_size(4);
  d->add_dims(1000);
  d->add_dims(256);
  d->set_layout("chunked");
  d->add_chunk_dims(10);
  d->add_chunk_dims(256);
  d->set_chunk_bytes(10240);
  stats::Filter* f = d->add_filters();
  f->set_id(1);
  f->set_name("deflate");
  d->set_type_class("float");
  d->set_opens(1);
  d->set_closes(1);
  d->set_reads(4);
  d->set_read_elements(10240);
  d->set_read_logical_bytes(40960);
  d->set_read_seconds(0.01);
  d->set_posix_reads(6);
  d->set_posix_read_bytes(30000);
  d->set_posix_reads_per_read(1.5);
  d->set_posix_read_bytes_per_logical_byte(30000.0 / 40960);
  d->set_min_posix_reads_per_read(1);
  d->set_max_posix_reads_per_read(2);
  d->set_writes(1);
  d->set_write_elements(256);
  d->set_write_logical_bytes(1024);
  d->set_write_seconds(0.001);
  d->set_posix_writes(1);
  d->set_posix_write_bytes(900);
  d->set_chunk_reads(2);
  d->set_chunk_read_bytes(5000);
  d->set_posix_other(3);
  d->set_nested_calls(1);
  d->set_failed_calls(1);
  d->set_processes(2);
  stats::Dataset* e = s.add_datasets();
  e->set_dataset("/d/x.h5:/labels");
  e->set_file("/d/x.h5");
  e->set_name("/labels");
  e->set_layout("unknown");
  e->set_opens(1);
  e->set_processes(1);
  return s;
}

TEST(StatsSectionsTest, DatasetsJson) {
  EXPECT_EQ(Json(DatasetsToJson, Datasets(), false), R"g([
  {
    "dataset": "/d/x.h5:/images",
    "file": "/d/x.h5",
    "name": "/images",
    "described": true,
    "element_size": 4,
    "dims": [
      1000,
      256
    ],
    "layout": "chunked",
    "chunk_dims": [
      10,
      256
    ],
    "chunk_bytes": 10240,
    "filters": [
      {
        "id": 1,
        "name": "deflate"
      }
    ],
    "type_class": "float",
    "opens": 1,
    "closes": 1,
    "reads": 4,
    "read_elements": 10240,
    "read_logical_bytes": 40960,
    "read_seconds": 0.01,
    "posix_reads": 6,
    "posix_read_bytes": 30000,
    "posix_reads_per_read": 1.5,
    "posix_read_bytes_per_logical_byte": 0.732422,
    "min_posix_reads_per_read": 1,
    "max_posix_reads_per_read": 2,
    "writes": 1,
    "write_elements": 256,
    "write_logical_bytes": 1024,
    "write_seconds": 0.001,
    "posix_writes": 1,
    "posix_write_bytes": 900,
    "chunk_reads": 2,
    "chunk_read_bytes": 5000,
    "chunk_writes": 0,
    "chunk_write_bytes": 0,
    "posix_other": 3,
    "nested_calls": 1,
    "failed_calls": 1,
    "processes": 2
  },
  {
    "dataset": "/d/x.h5:/labels",
    "file": "/d/x.h5",
    "name": "/labels",
    "described": false,
    "element_size": 0,
    "dims": [],
    "layout": "unknown",
    "chunk_dims": [],
    "chunk_bytes": 0,
    "filters": [],
    "type_class": "",
    "opens": 1,
    "closes": 0,
    "reads": 0,
    "read_elements": 0,
    "read_logical_bytes": 0,
    "read_seconds": 0,
    "posix_reads": 0,
    "posix_read_bytes": 0,
    "posix_reads_per_read": 0,
    "posix_read_bytes_per_logical_byte": 0,
    "min_posix_reads_per_read": 0,
    "max_posix_reads_per_read": 0,
    "writes": 0,
    "write_elements": 0,
    "write_logical_bytes": 0,
    "write_seconds": 0,
    "posix_writes": 0,
    "posix_write_bytes": 0,
    "chunk_reads": 0,
    "chunk_read_bytes": 0,
    "chunk_writes": 0,
    "chunk_write_bytes": 0,
    "posix_other": 0,
    "nested_calls": 0,
    "failed_calls": 0,
    "processes": 1
  }
])g");
}

TEST(StatsSectionsTest, DatasetsText) {
  EXPECT_EQ(DatasetsToText(Datasets()), R"g(HDF5 datasets: 2
  /d/x.h5:/images
    float, 4 B elements, 1000 x 256, chunked 10 x 256 (10.0 KiB chunks), deflate (1)
    H5Dread: 4 calls, 40.0 KiB logical in 10.0 ms; beneath them 6 POSIX reads of 29.3 KiB
    each 10.0 KiB H5Dread became 1.5 POSIX reads of 4.88 KiB (1 to 2 per call; 0.73 bytes read per logical byte)
    H5Dwrite: 1 calls, 1.00 KiB logical in 1.0 ms; beneath them 1 POSIX writes of 900 B
    H5Dread_chunk: 2 calls, 4.88 KiB; H5Dwrite_chunk: 0 calls, 0 B
    opens 1, closes 1 (3 POSIX calls beneath), failed calls 1, nested calls 1, processes 2
  /d/x.h5:/labels
    opens 1, closes 0 (0 POSIX calls beneath), failed calls 0, nested calls 0, processes 1
)g");
  EXPECT_EQ(DatasetsToText(stats::Stats()), "");
}

stats::Stats TfRecords() {
  stats::Stats s;
  stats::TfRecordFile* t = s.add_tfrecord_files();
  t->set_path("/d/train.tfrecord");
  t->set_compression("none");
  t->set_detected_by_suffix(true);
  t->set_detected_by_header(true);
  t->set_attributed(true);
  t->set_records(3);
  t->set_record_bytes(3100);
  stats::RecordSizes* sizes = t->mutable_record_size();
  sizes->set_min(0);
  sizes->set_max(3000);
  sizes->set_mean(3100.0 / 3);
  stats::SizeBucket* b = sizes->add_log2_buckets();
  b->set_from(0);
  b->set_to(1);
  b->set_records(1);
  b = sizes->add_log2_buckets();
  b->set_from(64);
  b->set_to(128);
  b->set_records(1);
  b = sizes->add_log2_buckets();
  b->set_from(2048);
  b->set_to(4096);
  b->set_records(1);
  t->set_reads(2);
  t->set_read_bytes(3148);
  t->set_reads_completing_records(2);
  t->set_records_per_read(1.5);
  t->set_spanned_records(1);
  t->set_sequential_steps(2);
  t->set_order("in order");
  t->set_processes(1);
  stats::TfRecordFile* z = s.add_tfrecord_files();
  z->set_path("/d/z.tfrecord.gz");
  z->set_compression("gzip");
  z->set_detected_by_suffix(true);
  z->set_note("compressed: records are not visible to the reads");
  z->set_processes(1);
  return s;
}

TEST(StatsSectionsTest, TfRecordFilesJson) {
  EXPECT_EQ(Json(TfRecordFilesToJson, TfRecords(), false), R"g([
  {
    "path": "/d/train.tfrecord",
    "compression": "none",
    "detected_by_suffix": true,
    "detected_by_header": true,
    "attributed": true,
    "note": "",
    "records": 3,
    "record_bytes": 3100,
    "record_size": {
      "min": 0,
      "max": 3000,
      "mean": 1033.33,
      "log2_buckets": [
        {
          "from": 0,
          "to": 1,
          "records": 1
        },
        {
          "from": 64,
          "to": 128,
          "records": 1
        },
        {
          "from": 2048,
          "to": 4096,
          "records": 1
        }
      ]
    },
    "reads": 2,
    "read_bytes": 3148,
    "reads_completing_records": 2,
    "records_per_read": 1.5,
    "spanned_records": 1,
    "index_unknown_records": 0,
    "sequential_steps": 2,
    "restarts": 0,
    "jumps": 0,
    "order": "in order",
    "processes": 1
  },
  {
    "path": "/d/z.tfrecord.gz",
    "compression": "gzip",
    "detected_by_suffix": true,
    "detected_by_header": false,
    "attributed": false,
    "note": "compressed: records are not visible to the reads",
    "records": 0,
    "record_bytes": 0,
    "record_size": {
      "min": 0,
      "max": 0,
      "mean": 0,
      "log2_buckets": []
    },
    "reads": 0,
    "read_bytes": 0,
    "reads_completing_records": 0,
    "records_per_read": 0,
    "spanned_records": 0,
    "index_unknown_records": 0,
    "sequential_steps": 0,
    "restarts": 0,
    "jumps": 0,
    "order": "",
    "processes": 1
  }
])g");
}

TEST(StatsSectionsTest, TfRecordFilesText) {
  EXPECT_EQ(TfRecordFilesToText(TfRecords()), R"g(TFRecord files: 2
  /d/train.tfrecord  (recognised by name and record header; uncompressed)
    3 records read, 3.03 KiB of data; record sizes 0 B to 2.93 KiB, mean 1.01 KiB
    2 reads of 3.07 KiB: 1.50 records per read; 2 reads completed records; 1 records took two or more reads
    order: in order (2 steps to the next record, 0 restarts at 0, 0 jumps)
    records by size: empty: 1, [64 B, 128 B): 1, [2.00 KiB, 4.00 KiB): 1
  /d/z.tfrecord.gz  (recognised by name; gzip-compressed)
    not attributed: compressed: records are not visible to the reads
)g");
  EXPECT_EQ(TfRecordFilesToText(stats::Stats()), "");
}

}  // namespace
}  // namespace iotap::analyzer::internal
