// Pinned ranges over their life, and the edges of a copy's description, step
// by step (programs/cuda_calls/lifecycle.cc). Each runtime call here runs
// driver calls inside the fake cudart; each must still be one event.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/cuda_expect.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

struct Expected {
  const char* step;
  Op op;
  uint64_t requested;
  int64_t result;
  uint64_t aux;
  uint32_t flags;
  // Which address the event's offset must be: 'R' the registered buffer,
  // 'A' the allocation, '-' none (no FLAG_HAS_OFFSET).
  char offset;
};

constexpr uint32_t kPinned = FLAG_CUDA_PINNED;
constexpr uint32_t kPageable = FLAG_CUDA_PAGEABLE;
constexpr uint32_t kAsync = FLAG_CUDA_ASYNC;
constexpr uint32_t kDriver = FLAG_CUDA_DRIVER_API;
constexpr uint32_t kAt = FLAG_HAS_OFFSET;

const Expected kSteps[] = {
    {"register", OP_CUDA_HOST_REGISTER, 8192, 0, 0, kAt, 'R'},
    // 100 bytes into the registered buffer: pinned.
    {"copy-registered", OP_CUDA_MEMCPY_HTOD, 300, 0, 0x77, kAsync | kPinned, '-'},
    {"unregister", OP_CUDA_HOST_UNREGISTER, 8192, 0, 0, kAt, 'R'},
    {"copy-unregistered", OP_CUDA_MEMCPY_HTOD, 301, 0, 0x77, kAsync | kPageable, '-'},
    {"alloc", OP_CUDA_HOST_ALLOC, 4096, 0, 0, kAt, 'A'},
    {"copy-last-byte", OP_CUDA_MEMCPY_HTOD, 1, 0, 0, kPinned, '-'},
    {"free", OP_CUDA_HOST_FREE, 4096, 0, 0, kAt, 'A'},
    // Freeing again fails (cudaErrorInvalidValue) and knows no range.
    {"free-again", OP_CUDA_HOST_FREE, 0, 1, 0, kAt, 'A'},
    // A failed allocation (cudaErrorMemoryAllocation) has no address.
    {"alloc-failing", OP_CUDA_HOST_ALLOC, 8192, 2, 0, 0, '-'},
    {"driver-register", OP_CUDA_HOST_REGISTER, 8192, 0, 0, kDriver | kAt, 'R'},
    // CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED: the range stays pinned.
    {"driver-register-again", OP_CUDA_HOST_REGISTER, 8192, 712, 0, kDriver, '-'},
    {"driver-copy-registered", OP_CUDA_MEMCPY_HTOD, 302, 0, 0, kDriver | kPinned, '-'},
    {"driver-unregister", OP_CUDA_HOST_UNREGISTER, 8192, 0, 0, kDriver | kAt, 'R'},
    // A CUDA array takes part: the extent (16 x 2 x 3) counts elements. The
    // double refuses arrays (cudaErrorInvalidValue).
    {"copy-3d-array", OP_CUDA_MEMCPY_DTOH, 96, 1, 0, FLAG_CUDA_ELEMENTS | kPageable, '-'},
    // A kind that is none: the call's cudaErrorInvalidMemcpyDirection.
    {"copy-bad-kind", OP_CUDA_MEMCPY_DEFAULT, 303, 21, 0, 0, '-'},
};

TEST(CudaPinnedTest, RangesOverTheirLife) {
  TempDir dir;
  std::vector<std::string> argv = {TestProgram("cuda_calls"), "lifecycle", dir.Sub("unused")};
  RunResult plain = RunProgram(argv);
  RunResult traced = RunPreloaded(argv, dir.Sub("trace"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  std::string expected_out;
  for (const Expected& s : kSteps) {
    expected_out += "lifecycle " + std::string(s.step) + " rc=" + std::to_string(s.result) + "\n";
  }
  EXPECT_EQ(plain.out, expected_out);

  std::vector<LoadedEvent> events = CudaEvents(LoadRun(dir.Sub("trace")));
  ASSERT_EQ(events.size(), std::size(kSteps));
  int64_t registered = events[0].offset;
  int64_t allocated = events[4].offset;
  EXPECT_NE(registered, 0);
  EXPECT_NE(allocated, 0);
  for (size_t i = 0; i < events.size(); ++i) {
    const Expected& s = kSteps[i];
    const LoadedEvent& e = events[i];
    SCOPED_TRACE(s.step);
    EXPECT_EQ(e.op, s.op);
    EXPECT_EQ(e.requested, s.requested);
    EXPECT_EQ(e.result, s.result);
    EXPECT_EQ(e.aux, s.aux);
    EXPECT_EQ(e.flags, s.flags);
    EXPECT_EQ(e.error, 0u);
    if (s.offset == 'R') {
      EXPECT_EQ(e.offset, registered);
    } else if (s.offset == 'A') {
      EXPECT_EQ(e.offset, allocated);
    }
  }
}

// examples/cuda/check_trace.py, which checks traces taken on a GPU, reads
// these traces as it reads those: it accepts what the run did and names what
// it did not do.
TEST(CudaPinnedTest, GpuCheckScriptReadsTheTrace) {
  TempDir dir;
  std::string trace = dir.Sub("trace");
  ASSERT_EQ(
      RunPreloaded({TestProgram("cuda_calls"), "lifecycle", dir.Sub("unused")}, trace).exit_code,
      0);
  auto check = [&](const std::string& manifest) {
    WriteFile(dir.Sub("manifest.json"), manifest);
    return RunProgram({Python(), SourcePath("examples/cuda/check_trace.py"), "--iotap",
                       IotapBinary(), "--trace", trace, "--manifest", dir.Sub("manifest.json")});
  };
  RunResult good = check(R"({"moved": [{"bytes": 300, "pinned": true, "count": 1},
                                       {"bytes": 301, "pinned": false, "count": 1}]})");
  EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
  EXPECT_EQ(good.out,
            "  ok: 1 copies of 300 bytes from pinned memory\n"
            "  ok: 1 copies of 301 bytes from pageable memory\n");
  RunResult driver =
      check(R"({"driver": true, "moved": [{"bytes": 302, "pinned": true, "count": 1}]})");
  EXPECT_EQ(driver.exit_code, 0) << driver.out << driver.err;
  RunResult bad = check(R"({"driver": true, "moved": [{"bytes": 300, "pinned": false, "count": 1},
                                                      {"bytes": 999, "pinned": true, "count": 2}]})");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_EQ(bad.out,
            "  FAIL: 1 copies of 300 bytes from pageable memory: recorded as "
            "[async, pinned, stream 0x77]\n"
            "  FAIL: 1 copies of 300 bytes from pageable memory: not recorded as a driver API "
            "call\n"
            "  FAIL: 2 copies of 999 bytes from pinned memory: the trace has 0 copies of that "
            "size\n");
}

}  // namespace
}  // namespace iotap::testing
