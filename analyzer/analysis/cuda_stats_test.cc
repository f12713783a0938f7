#include "analyzer/analysis/cuda_stats.h"

#include <string>

#include "absl/strings/match.h"
#include "analyzer/analysis/stats.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

Event Copy(Op op, uint64_t bytes, uint32_t flags, int64_t result, int64_t ns) {
  Event e;
  e.op = op;
  e.requested = bytes;
  e.flags = flags;
  e.result = result;
  e.start_ns = 1000;
  e.end_ns = 1000 + ns;
  return e;
}

TEST(CudaStatsTest, GroupsCopiesByDirectionHostMemoryAndMode) {
  CudaStats stats;
  stats.Add(Copy(OP_CUDA_MEMCPY_HTOD, 4096, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 0, 100));
  stats.Add(Copy(OP_CUDA_MEMCPY_HTOD, 8192, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 0, 300));
  // A failed call counts as a call, not in bytes.
  stats.Add(Copy(OP_CUDA_MEMCPY_HTOD, 1 << 20, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 1, 50));
  stats.Add(Copy(OP_CUDA_MEMCPY_HTOD, 100, FLAG_CUDA_PAGEABLE, 0, 2000));
  stats.Add(Copy(OP_CUDA_MEMCPY_DTOD, 64, FLAG_CUDA_DRIVER_API, 0, 10));
  stats.Add(Copy(OP_CUDA_MEMCPY_DEFAULT, 32, 0, 0, 10));
  stats.Add(Copy(OP_CUDA_HOST_ALLOC, 65536, FLAG_HAS_OFFSET, 0, 5));
  stats.Add(Copy(OP_CUDA_HOST_REGISTER, 4096, FLAG_HAS_OFFSET, 712, 5));  // failed
  CudaReport r = stats.Finish();
  ASSERT_EQ(r.copies.size(), 4u);
  const CudaCopyStats& first = r.copies[0];  // most bytes
  EXPECT_EQ(first.direction, "HtoD");
  EXPECT_EQ(first.host_memory, "pinned");
  EXPECT_EQ(first.mode, "async");
  EXPECT_EQ(first.calls, 3u);
  EXPECT_EQ(first.failed_calls, 1u);
  EXPECT_EQ(first.bytes, 12288u);
  EXPECT_EQ(first.ns, 450);
  EXPECT_EQ(r.copies[1].host_memory, "pageable");
  EXPECT_EQ(r.copies[1].mode, "sync");
  EXPECT_EQ(r.copies[1].bytes, 100u);
  EXPECT_EQ(r.copies[2].direction, "DtoD");
  EXPECT_EQ(r.copies[2].host_memory, "none");
  EXPECT_EQ(r.copies[3].direction, "default");
  EXPECT_EQ(r.copies[3].host_memory, "unknown");
  EXPECT_EQ(r.pinned_allocations, 1u);
  EXPECT_EQ(r.pinned_bytes, 65536u);
}

TEST(CudaStatsTest, DeviceRecordsFromCupti) {
  CudaStats stats;
  stats.Add(Copy(OP_CUPTI_MEMCPY, 4096, FLAG_CUDA_PINNED, 1, 700));  // result: HtoD
  stats.Add(Copy(OP_CUPTI_MEMCPY, 4096, FLAG_CUDA_PINNED, 1, 300));
  stats.Add(Copy(OP_CUPTI_KERNEL, 0, 0, 0, 5000));
  CudaReport r = stats.Finish();
  EXPECT_TRUE(r.copies.empty());
  ASSERT_EQ(r.device_copies.size(), 1u);
  EXPECT_EQ(r.device_copies[0].direction, "HtoD");
  EXPECT_EQ(r.device_copies[0].host_memory, "pinned");
  EXPECT_EQ(r.device_copies[0].copies, 2u);
  EXPECT_EQ(r.device_copies[0].bytes, 8192u);
  EXPECT_EQ(r.device_copies[0].ns, 1000);
  EXPECT_EQ(r.kernels, 1u);
  EXPECT_EQ(r.kernel_ns, 5000);
}

TEST(CudaStatsTest, JsonCarriesTheCudaSections) {
  StatsReport report;
  CudaStats stats;
  stats.Add(Copy(OP_CUDA_MEMCPY_DTOH, 256, FLAG_CUDA_PAGEABLE, 0, 2500));
  report.cuda = stats.Finish();
  std::string json = StatsToJson(report);
  EXPECT_TRUE(absl::StrContains(json, R"("cuda_copies": [)")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("direction": "DtoH")")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("host_memory": "pageable")"));
  EXPECT_TRUE(absl::StrContains(json, R"("bytes": 256)"));
  EXPECT_TRUE(absl::StrContains(json, R"("seconds": 2.5e-06)")) << json;
  EXPECT_TRUE(absl::StrContains(json, R"("cuda_pinned": {)"));
  EXPECT_TRUE(absl::StrContains(StatsToText(report), "DtoH      pageable  sync"))
      << StatsToText(report);
  // No CUDA, no CUDA table.
  EXPECT_FALSE(absl::StrContains(StatsToText(StatsReport()), "CUDA"));
}

}  // namespace
}  // namespace iotap::analyzer
