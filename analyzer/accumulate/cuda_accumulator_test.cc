// CUDA figures on hand-made events: the groups copies count in, what a
// failed copy adds, CUPTI's device records, pinned memory, and merging.

#include "analyzer/accumulate/cuda_accumulator.h"

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

TEST(CudaAccumulatorTest, HostMemoryNamesTellNoHostSideFromAnUnknownOne) {
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_HTOD, FLAG_CUDA_PINNED).host_memory, "pinned");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_DTOH, FLAG_CUDA_PAGEABLE).host_memory, "pageable");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_DTOD, 0).host_memory, "none");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_PEER, 0).host_memory, "none");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_HTOD, 0).host_memory, "unknown");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_DEFAULT, 0).host_memory, "unknown");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_DEFAULT, 0).direction, "default");
  EXPECT_EQ(CudaCopyKeyOf(OP_CUDA_MEMCPY_PEER, 0).direction, "peer");
  EXPECT_TRUE(CudaCopyKeyOf(OP_CUDA_MEMCPY_HTOD, FLAG_CUDA_ASYNC).async);
  EXPECT_FALSE(CudaCopyKeyOf(OP_CUDA_MEMCPY_HTOD, FLAG_CUDA_PINNED).async);
}

TEST(CudaAccumulatorTest, GroupsCopiesAndCountsNoBytesOfFailedOnes) {
  CudaAccumulator cuda;
  cuda.Add(Copy(OP_CUDA_MEMCPY_HTOD, 4096, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 0, 100));
  cuda.Add(Copy(OP_CUDA_MEMCPY_HTOD, 8192, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 0, 300));
  // A failed call counts as a call, not in bytes.
  cuda.Add(Copy(OP_CUDA_MEMCPY_HTOD, 1 << 20, FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC, 1, 50));
  cuda.Add(Copy(OP_CUDA_MEMCPY_HTOD, 100, FLAG_CUDA_PAGEABLE, 0, 2000));
  cuda.Add(Copy(OP_CUDA_MEMCPY_DTOD, 64, FLAG_CUDA_DRIVER_API, 0, 10));
  cuda.Add(Copy(OP_CUDA_MEMCPY_DEFAULT, 32, 0, 0, 10));
  cuda.Add(Copy(OP_CUDA_HOST_ALLOC, 65536, FLAG_HAS_OFFSET, 0, 5));
  cuda.Add(Copy(OP_CUDA_HOST_REGISTER, 4096, FLAG_HAS_OFFSET, 712, 5));  // failed
  cuda.Add(Copy(OP_PREAD, 4096, 0, 4096, 5));                           // not CUDA
  ASSERT_EQ(cuda.copies.size(), 4u);
  const CudaCopyCounts& pinned = cuda.copies.at(CudaCopyKey{"HtoD", "pinned", true});
  EXPECT_EQ(pinned.calls, 3u);
  EXPECT_EQ(pinned.failed_calls, 1u);
  EXPECT_EQ(pinned.bytes, 12288u);
  EXPECT_EQ(pinned.ns, 450);
  const CudaCopyCounts& pageable = cuda.copies.at(CudaCopyKey{"HtoD", "pageable", false});
  EXPECT_EQ(pageable.calls, 1u);
  EXPECT_EQ(pageable.bytes, 100u);
  EXPECT_EQ(pageable.ns, 2000);
  EXPECT_EQ(cuda.copies.at(CudaCopyKey{"DtoD", "none", false}).bytes, 64u);
  EXPECT_EQ(cuda.copies.at(CudaCopyKey{"default", "unknown", false}).bytes, 32u);
  EXPECT_EQ(cuda.pinned_allocations, 1u);
  EXPECT_EQ(cuda.pinned_bytes, 65536u);
  EXPECT_FALSE(cuda.empty());
}

TEST(CudaAccumulatorTest, DeviceRecordsFromCupti) {
  CudaAccumulator cuda;
  cuda.Add(Copy(OP_CUPTI_MEMCPY, 4096, FLAG_CUDA_PINNED, 1, 700));  // result: HtoD
  cuda.Add(Copy(OP_CUPTI_MEMCPY, 4096, FLAG_CUDA_PINNED, 1, 300));
  cuda.Add(Copy(OP_CUPTI_MEMCPY, 512, 0, 8, 20));  // DtoD
  cuda.Add(Copy(OP_CUPTI_KERNEL, 0, 0, 0, 5000));
  EXPECT_TRUE(cuda.copies.empty());
  ASSERT_EQ(cuda.device_copies.size(), 2u);
  const CudaDeviceCounts& htod = cuda.device_copies.at(CudaDeviceKey{"HtoD", "pinned"});
  EXPECT_EQ(htod.copies, 2u);
  EXPECT_EQ(htod.bytes, 8192u);
  EXPECT_EQ(htod.ns, 1000);
  EXPECT_EQ(cuda.device_copies.at(CudaDeviceKey{"DtoD", "none"}).bytes, 512u);
  EXPECT_EQ(cuda.kernels, 1u);
  EXPECT_EQ(cuda.kernel_ns, 5000);
}

TEST(CudaAccumulatorTest, MergeAddsEveryGroup) {
  CudaAccumulator a, b;
  a.Add(Copy(OP_CUDA_MEMCPY_HTOD, 100, FLAG_CUDA_PINNED, 0, 10));
  b.Add(Copy(OP_CUDA_MEMCPY_HTOD, 300, FLAG_CUDA_PINNED, 0, 30));
  b.Add(Copy(OP_CUDA_MEMCPY_HTOD, 500, FLAG_CUDA_PINNED, 2, 5));
  b.Add(Copy(OP_CUPTI_KERNEL, 0, 0, 0, 70));
  b.Add(Copy(OP_CUDA_HOST_ALLOC, 1024, 0, 0, 1));
  a.Merge(b);
  const CudaCopyCounts& c = a.copies.at(CudaCopyKey{"HtoD", "pinned", false});
  EXPECT_EQ(c.calls, 3u);
  EXPECT_EQ(c.failed_calls, 1u);
  EXPECT_EQ(c.bytes, 400u);
  EXPECT_EQ(c.ns, 45);
  EXPECT_EQ(a.kernels, 1u);
  EXPECT_EQ(a.kernel_ns, 70);
  EXPECT_EQ(a.pinned_allocations, 1u);
  EXPECT_EQ(a.pinned_bytes, 1024u);
  EXPECT_TRUE(CudaAccumulator().empty());
}

}  // namespace
}  // namespace iotap::analyzer
