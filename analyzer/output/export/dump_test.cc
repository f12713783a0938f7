#include "analyzer/output/export/dump.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

// A call of `op` that moved `bytes`, 10 ns long.
Event Call(Op op, uint64_t bytes, uint32_t flags) {
  Event e;
  e.op = op;
  e.requested = bytes;
  e.flags = flags;
  e.start_ns = 1000;
  e.end_ns = 1010;
  return e;
}

// What `iotap dump` prints for `batch`.
std::string Dump(const ProcessTrace& process, const EventBatch& batch) {
  char* text = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&text, &size);
  DumpWriter dump(out);
  dump.OnEvents(process, batch);
  std::fclose(out);
  std::string lines(text, size);
  std::free(text);
  return lines;
}

TEST(DumpWriterTest, SaysWhatEachCudaCopyWas) {
  ProcessTrace process("/trace/p.iotap");
  EventBatch batch;
  Event copy = Call(OP_CUDA_MEMCPY_HTOD, 4096,
                    FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC | FLAG_CUDA_DRIVER_API);
  copy.aux = 0x1006;
  Event alloc = Call(OP_CUDA_HOST_ALLOC, 65536, FLAG_HAS_OFFSET);
  alloc.offset = 0x7f0000001000;
  alloc.aux = 1;
  batch.events = {copy, alloc};
  std::string lines = Dump(process, batch);
  EXPECT_TRUE(absl::StrContains(lines, "cudaMemcpyHtoD")) << lines;
  EXPECT_TRUE(absl::StrContains(lines, "[pinned, async, stream 0x1006, driver API]")) << lines;
  EXPECT_TRUE(absl::StrContains(lines, "cudaHostAlloc 0x7f0000001000       65536")) << lines;
  EXPECT_TRUE(absl::StrContains(lines, "[flags 0x1]")) << lines;
}

TEST(DumpWriterTest, SaysWhereEachFaultWasAndHowItsSpanIsKnown) {
  ProcessTrace process("/trace/p.iotap");
  EventBatch batch;
  Event minor = Call(OP_MAPPED_READ, 4096, FLAG_HAS_OFFSET);
  minor.offset = 65536;
  minor.result = 65536;
  minor.aux = 73728;
  Event major = Call(OP_MAPPED_READ, 4096, FLAG_HAS_OFFSET | FLAG_MAJOR_FAULT | FLAG_INCOMPLETE);
  major.offset = 131072;
  major.result = 65536;
  major.aux = 131072;
  batch.events = {minor, major};
  std::string lines = Dump(process, batch);
  EXPECT_TRUE(absl::StrContains(lines, "65536        4096       65536 -        [fault at 73728]\n"))
      << lines;
  EXPECT_TRUE(absl::StrContains(lines, "[fault at 131072, major, span estimated]\n")) << lines;
}

}  // namespace
}  // namespace iotap::analyzer
