// The HDF5 section of `iotap stats` on hand-made events: what is counted
// beneath which call, and how processes merge.

#include "analyzer/analysis/hdf5_stats.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr uint32_t kFile = 1, kDataset = 2;

ProcessTrace MakeProcess() {
  ProcessTrace p("test.iotap");
  StringTable t;
  auto add = [&](uint32_t id, const char* value, InternedString::Kind kind) {
    InternedString* s = t.add_entry();
    s->set_id(id);
    s->set_value(value);
    s->set_kind(kind);
  };
  add(kFile, "/d/x.h5", InternedString::KIND_PATH);
  add(kDataset, "/d/x.h5:/images", InternedString::KIND_DATASET);
  p.AddStrings(t);
  return p;
}

Event Make(Op op, uint32_t file, uint64_t requested, int64_t result, uint64_t aux,
           uint64_t parent, int64_t offset = 0) {
  Event e;
  e.op = op;
  e.file = file;
  e.requested = requested;
  e.result = result;
  e.aux = aux;
  e.parent = parent;
  e.offset = offset;
  e.flags = FLAG_HAS_OFFSET;
  return e;
}

TEST(Hdf5CollectorTest, PosixReadsBeneathEachH5DreadGoToItsDataset) {
  ProcessTrace p = MakeProcess();
  EventBatch b;
  b.events = {
      Make(OP_PREAD, kFile, 512, 512, 0, 1),          // beneath the open (call 1)
      Make(OP_H5O_OPEN, kDataset, 0, 99, 1, 0),
      Make(OP_PREAD, kFile, 2048, 2048, 0, 2),        // beneath call 2
      Make(OP_PREAD, kFile, 2048, 2048, 0, 2),
      Make(OP_H5D_READ, kDataset, 80, 80, 3, 2),      // nested in call 2: no reads of its own
      Make(OP_H5D_READ, kDataset, 4096, 4096, 2, 0),
      Make(OP_PREAD, kFile, 2048, 2048, 0, 4),
      Make(OP_H5D_READ, kDataset, 4096, 4096, 4, 0),
      Make(OP_H5D_READ, kDataset, 0, -1, 5, 0),       // failed
  };
  Hdf5Dataset d;
  d.set_id(kDataset);
  d.set_element_size(1);
  d.add_dims(10);
  d.add_dims(4096);
  d.set_layout(Hdf5Dataset::LAYOUT_CHUNKED);
  d.add_chunk_dims(1);
  d.add_chunk_dims(2048);
  Packet packet;
  *packet.mutable_hdf5_dataset() = d;
  Hdf5Collector c;
  for (int process = 0; process < 2; ++process) {  // the same dataset in two processes
    c.OnProcess(p);
    c.OnEvents(p, b);
    c.OnPacket(p, packet);
    c.OnFileEnd(p);
  }
  std::vector<DatasetStats> out = c.Finish();
  ASSERT_EQ(out.size(), 1u);
  const DatasetStats& s = out[0];
  EXPECT_EQ(s.file, "/d/x.h5");
  EXPECT_EQ(s.name, "/images");
  EXPECT_EQ(s.layout, "chunked");
  EXPECT_EQ(s.ChunkBytes(), 2048u);
  EXPECT_EQ(s.opens, 2u);
  EXPECT_EQ(s.reads, 8u);
  EXPECT_EQ(s.read_bytes, 2 * (80u + 4096u + 4096u));
  EXPECT_EQ(s.read_elements, 2 * (80u + 4096u + 4096u));
  EXPECT_EQ(s.posix_reads, 2 * 3u);
  EXPECT_EQ(s.posix_read_bytes, 2 * 3 * 2048u);
  EXPECT_EQ(s.posix_other, 2u);
  EXPECT_EQ(s.min_posix_reads_per_read, 0u);  // the nested and the failed call
  EXPECT_EQ(s.max_posix_reads_per_read, 2u);
  EXPECT_EQ(s.nested_calls, 2u);
  EXPECT_EQ(s.failed_calls, 2u);
  EXPECT_EQ(s.processes, 2u);
}

}  // namespace
}  // namespace iotap::analyzer
