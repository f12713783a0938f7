// HDF5 datasets' figures on hand-made events: what is counted beneath which
// call, how datasets are named, and how processes merge.

#include "analyzer/accumulate/hdf5_accumulator.h"

#include <map>
#include <string>

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
           uint64_t parent, int64_t ns = 0) {
  Event e;
  e.op = op;
  e.file = file;
  e.requested = requested;
  e.result = result;
  e.aux = aux;
  e.parent = parent;
  e.end_ns = ns;
  return e;
}

// Feeds `e` as the per-process analysis does: I/O events beneath a call to
// OnBeneath, HDF5 events to OnCall.
void Feed(Hdf5Accumulator& h, const ProcessTrace& p, const Event& e) {
  const OpTraits& op = TraitsOf(e.op);
  if (op.layer == Layer::kHdf5) {
    h.OnCall(p, e);
  } else if (e.parent != 0) {
    h.OnBeneath(e, op, BytesMoved(e));
  }
}

Hdf5Dataset Description() {
  Hdf5Dataset d;
  d.set_id(kDataset);
  d.set_element_size(1);
  d.add_dims(10);
  d.add_dims(4096);
  d.set_layout(Hdf5Dataset::LAYOUT_CHUNKED);
  d.add_chunk_dims(1);
  d.add_chunk_dims(2048);
  return d;
}

TEST(Hdf5AccumulatorTest, IoBeneathEachOutermostCallGoesToItsDataset) {
  ProcessTrace p = MakeProcess();
  const Event events[] = {
      Make(OP_PREAD, kFile, 512, 512, 0, 1),          // beneath the open (call 1)
      Make(OP_H5O_OPEN, kDataset, 0, 99, 1, 0),
      Make(OP_PREAD, kFile, 2048, 2048, 0, 2),        // beneath call 2
      Make(OP_FREAD, kFile, 2048, 2048, 0, 2),        // STDIO counts too
      Make(OP_H5D_READ, kDataset, 80, 80, 3, 2, 5),   // nested in call 2: no reads of its own
      Make(OP_H5D_READ, kDataset, 4096, 4096, 2, 0, 100),
      Make(OP_PREAD, kFile, 2048, 2048, 0, 4),
      Make(OP_H5D_READ, kDataset, 4096, 4096, 4, 0, 50),
      Make(OP_H5D_READ, kDataset, 4096, -1, 5, 0, 7),  // failed: no elements, no bytes
      Make(OP_PREAD, kFile, 1000, 1000, 0, 6),
      Make(OP_H5D_READ_CHUNK, kDataset, 1000, 0, 6, 0, 9),
      Make(OP_PWRITE, kFile, 300, 300, 0, 7),
      Make(OP_H5D_WRITE, kDataset, 300, 300, 7, 0, 11),
      Make(OP_PREAD, kFile, 64, 64, 0, 8),            // beneath a file's H5Fclose: no dataset
      Make(OP_H5F_CLOSE, kFile, 0, 0, 8, 0),
      Make(OP_CLOSE, kFile, 0, 0, 0, 9),
      Make(OP_H5D_CLOSE, kDataset, 0, 0, 9, 0),
  };
  Hdf5Accumulator h;
  for (const Event& e : events) Feed(h, p, e);
  h.OnDescription(Description());
  std::map<std::string, DatasetAccumulator> out = h.Finish(p);
  ASSERT_EQ(out.size(), 1u);
  const DatasetAccumulator& d = out.at("/d/x.h5:/images");
  EXPECT_TRUE(d.described);
  EXPECT_EQ(LayoutName(d.description.layout()), std::string("chunked"));
  EXPECT_EQ(d.ChunkBytes(), 2048u);
  EXPECT_EQ(d.opens, 1u);
  EXPECT_EQ(d.closes, 1u);
  EXPECT_EQ(d.posix_other, 2u);  // the pread beneath the open, the close beneath the close
  EXPECT_EQ(d.reads, 4u);
  EXPECT_EQ(d.read_elements, 80u + 4096u + 4096u);
  EXPECT_EQ(d.read_bytes, 80u + 4096u + 4096u);
  EXPECT_EQ(d.read_ns, 5 + 100 + 50 + 7);
  EXPECT_EQ(d.posix_reads, 4u);  // 2 beneath call 2, 1 beneath call 4, 1 beneath the chunk read
  EXPECT_EQ(d.posix_read_bytes, 3 * 2048u + 1000u);
  EXPECT_EQ(d.min_posix_reads_per_read, 0u);  // the nested and the failed call
  EXPECT_EQ(d.max_posix_reads_per_read, 2u);
  EXPECT_EQ(d.chunk_reads, 1u);
  EXPECT_EQ(d.chunk_read_bytes, 1000u);
  EXPECT_EQ(d.writes, 1u);
  EXPECT_EQ(d.write_bytes, 300u);
  EXPECT_EQ(d.write_elements, 300u);
  EXPECT_EQ(d.write_ns, 11);
  EXPECT_EQ(d.posix_writes, 1u);
  EXPECT_EQ(d.posix_write_bytes, 300u);
  EXPECT_EQ(d.nested_calls, 1u);
  EXPECT_EQ(d.failed_calls, 1u);
  EXPECT_EQ(d.processes, 1u);
}

TEST(Hdf5AccumulatorTest, ProcessesMergeAndTheLastRankedDescriptionSays) {
  ProcessTrace p = MakeProcess();
  DatasetAccumulator run;
  for (int rank : {1, 0}) {  // merged out of order
    Hdf5Accumulator h;
    Feed(h, p, Make(OP_PREAD, kFile, 100, 100, 0, 1));
    Feed(h, p, Make(OP_PREAD, kFile, 100, 100, 0, 1));
    Feed(h, p, Make(OP_H5D_READ, kDataset, 200, 200, 1, 0));
    Feed(h, p, Make(OP_H5D_READ, kDataset, 200, 200, 2, 0));
    Hdf5Dataset d = Description();
    d.set_element_size(rank == 1 ? 4 : 1);
    h.OnDescription(d);
    DatasetAccumulator one = h.Finish(p).at("/d/x.h5:/images");
    one.described_rank = rank;
    run.Merge(one);
  }
  EXPECT_EQ(run.description.element_size(), 4u);  // rank 1's
  EXPECT_EQ(run.ChunkBytes(), 4u * 2048u);
  EXPECT_EQ(run.reads, 4u);
  EXPECT_EQ(run.posix_reads, 4u);
  EXPECT_EQ(run.min_posix_reads_per_read, 0u);
  EXPECT_EQ(run.max_posix_reads_per_read, 2u);
  EXPECT_EQ(run.processes, 2u);
}

TEST(Hdf5AccumulatorTest, NamesSplitAtTheLastColonBeforeASlash) {
  EXPECT_EQ(DatasetNameParts("/d/x.h5:/images").first, "/d/x.h5");
  EXPECT_EQ(DatasetNameParts("/d/x.h5:/images").second, "/images");
  // A colon inside the dataset's name, or the file's, stays where it is.
  EXPECT_EQ(DatasetNameParts("/d/x.h5:/grp:1/y").first, "/d/x.h5");
  EXPECT_EQ(DatasetNameParts("/d/x.h5:/grp:1/y").second, "/grp:1/y");
  EXPECT_EQ(DatasetNameParts("/d/a:b.h5:/y").first, "/d/a:b.h5");
  EXPECT_EQ(DatasetNameParts("/d/x.h5:").first, "/d/x.h5");  // the path was not known
  EXPECT_EQ(DatasetNameParts("/d/x.h5:").second, "");
  EXPECT_EQ(DatasetNameParts("images").first, "");
  EXPECT_EQ(DatasetNameParts("images").second, "images");
}

TEST(Hdf5AccumulatorTest, LayoutNames) {
  EXPECT_EQ(std::string(LayoutName(Hdf5Dataset::LAYOUT_COMPACT)), "compact");
  EXPECT_EQ(std::string(LayoutName(Hdf5Dataset::LAYOUT_CONTIGUOUS)), "contiguous");
  EXPECT_EQ(std::string(LayoutName(Hdf5Dataset::LAYOUT_CHUNKED)), "chunked");
  EXPECT_EQ(std::string(LayoutName(Hdf5Dataset::LAYOUT_VIRTUAL)), "virtual");
  EXPECT_EQ(std::string(LayoutName(Hdf5Dataset::LAYOUT_UNKNOWN)), "unknown");
}

}  // namespace
}  // namespace iotap::analyzer
