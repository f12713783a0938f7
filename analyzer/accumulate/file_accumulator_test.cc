// A file's counts on hand-made events: the POSIX, STDIO and GDS split of
// reads and writes, opens, metadata, mmaps, errors, and merging.

#include "analyzer/accumulate/file_accumulator.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

Event Make(Op op, int64_t result, uint64_t requested = 0, uint32_t error = 0, int64_t ns = 10) {
  Event e;
  e.op = op;
  e.result = result;
  e.requested = requested;
  e.error = error;
  e.start_ns = 1000;
  e.end_ns = 1000 + ns;
  return e;
}

void Count(FileCounts& c, const Event& e) { c.Count(e, TraitsOf(e.op), BytesMoved(e)); }

TEST(FileCountsTest, SplitsReadsAndWritesByLayer) {
  FileCounts c;
  Count(c, Make(OP_OPENAT, 3, 0, 0, 5));
  Count(c, Make(OP_PREAD, 4096, 4096, 0, 100));
  Count(c, Make(OP_READ, 10, 4096, 0, 20));       // short: 10 bytes moved
  Count(c, Make(OP_FREAD, 512, 512, 0, 7));
  Count(c, Make(OP_CUFILE_READ, 1 << 20, 1 << 20, 0, 50));
  Count(c, Make(OP_PWRITE, 100, 100, 0, 3));
  Count(c, Make(OP_FWRITE, 200, 200, 0, 4));
  Count(c, Make(OP_CUFILE_WRITE, 300, 300, 0, 5));
  Count(c, Make(OP_STAT, 0, 0, 0, 9));
  Count(c, Make(OP_CLOSE, 0, 0, 0, 1));
  EXPECT_EQ(c.opens, 1u);
  EXPECT_EQ(c.posix_reads, 2u);
  EXPECT_EQ(c.stdio_reads, 1u);
  EXPECT_EQ(c.gds_reads, 1u);
  EXPECT_EQ(c.reads(), 4u);
  EXPECT_EQ(c.read_bytes, 4096u + 10 + 512 + (1 << 20));
  EXPECT_EQ(c.read_ns, 177);
  EXPECT_EQ(c.posix_writes, 1u);
  EXPECT_EQ(c.stdio_writes, 1u);
  EXPECT_EQ(c.gds_writes, 1u);
  EXPECT_EQ(c.writes(), 3u);
  EXPECT_EQ(c.write_bytes, 600u);
  EXPECT_EQ(c.write_ns, 12);
  EXPECT_EQ(c.metadata_ops, 3u);  // open, stat and close
  EXPECT_EQ(c.metadata_ns, 15);
  EXPECT_EQ(c.errors, 0u);
}

TEST(FileCountsTest, FailedCallsCountAsCallsAndErrorsButMoveNothing) {
  FileCounts c;
  Count(c, Make(OP_OPENAT, -1, 0, /*ENOENT*/ 2));
  Count(c, Make(OP_PREAD, -1, 4096, /*EIO*/ 5));
  Count(c, Make(OP_MMAP, 0x7f0000000000, 8192));
  Count(c, Make(OP_MMAP, -1, 4096, /*ENOMEM*/ 12));
  EXPECT_EQ(c.opens, 1u);
  EXPECT_EQ(c.posix_reads, 1u);
  EXPECT_EQ(c.read_bytes, 0u);
  EXPECT_EQ(c.mmaps, 2u);
  EXPECT_EQ(c.mmap_bytes, 8192u);  // the failed one mapped nothing
  EXPECT_EQ(c.errors, 3u);
}

TEST(FileCountsTest, MergeAddsEveryCount) {
  FileCounts a, b;
  Count(a, Make(OP_PREAD, 100, 100));
  Count(a, Make(OP_MMAP, 1, 4096));
  Count(b, Make(OP_FREAD, 50, 50));
  Count(b, Make(OP_PWRITE, -1, 10, 28));
  Count(b, Make(OP_STAT, 0));
  a.Merge(b);
  EXPECT_EQ(a.posix_reads, 1u);
  EXPECT_EQ(a.stdio_reads, 1u);
  EXPECT_EQ(a.read_bytes, 150u);
  EXPECT_EQ(a.posix_writes, 1u);
  EXPECT_EQ(a.write_bytes, 0u);
  EXPECT_EQ(a.mmaps, 1u);
  EXPECT_EQ(a.mmap_bytes, 4096u);
  EXPECT_EQ(a.errors, 1u);
  EXPECT_EQ(a.metadata_ops, 1u);
  EXPECT_EQ(a.read_ns, 20);
  EXPECT_EQ(a.write_ns, 10);
  EXPECT_EQ(a.metadata_ns, 10);
}

TEST(FileDetailTest, MergeKeepsTheLargestSizeAndAddsTheRest) {
  FileDetail a, b;
  a.size_bytes = 100;
  a.direct_opens = 1;
  b.size_bytes = 50;
  b.dontneed_advice = 2;
  b.hdf5_reads = 3;
  b.read_ranges.Add(0, 10);
  a.Merge(b);
  EXPECT_EQ(a.size_bytes, 100);
  EXPECT_EQ(a.direct_opens, 1u);
  EXPECT_EQ(a.dontneed_advice, 2u);
  EXPECT_EQ(a.hdf5_reads, 3u);
  EXPECT_EQ(a.read_ranges.covered(), 10u);
}

TEST(FileKindNameTest, OneWordPerKind) {
  EXPECT_STREQ(FileKindName(InternedString::KIND_PATH), "file");
  EXPECT_STREQ(FileKindName(InternedString::KIND_DEVICE), "device");
  EXPECT_STREQ(FileKindName(InternedString::KIND_PIPE), "pipe");
  EXPECT_STREQ(FileKindName(InternedString::KIND_SOCKET), "socket");
  EXPECT_STREQ(FileKindName(InternedString::KIND_ANON), "anonymous");
  EXPECT_STREQ(FileKindName(InternedString::KIND_UNSPECIFIED), "unknown");
}

}  // namespace
}  // namespace iotap::analyzer
