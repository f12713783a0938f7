// IOTAP_CUPTI=1 against the CUPTI test double (cuda_fake/fake_cupti.cc),
// which delivers two copies and a kernel at exit: device events in a chunk
// of their own, on CLOCK_MONOTONIC whichever way the clocks are aligned; and
// one line on stderr, and no device events, when another client holds CUPTI.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/cuda_expect.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

class CuptiTest : public ::testing::Test {
 protected:
  // Runs the lifecycle calls traced with IOTAP_CUPTI=1 (and `extra`); the
  // test double is found first on LD_LIBRARY_PATH.
  RunResult Run(std::map<std::string, std::string> extra) {
    RunOptions options;
    options.env = std::move(extra);
    options.env["IOTAP_CUPTI"] = "1";
    options.env["IOTAP_TIME_UNIT_NS"] = "1";
    options.env["LD_LIBRARY_PATH"] = std::string(IOTAP_BINARY_DIR) + "/cuda_fake";
    return RunPreloaded({TestProgram("cuda_calls"), "lifecycle", dir_.Sub("unused")}, trace_,
                        options);
  }

  // The device events, checked exactly against what the double delivers.
  void ExpectDeviceEvents() {
    LoadedRun run = LoadRun(trace_);
    ASSERT_EQ(run.processes.size(), 1u);
    const LoadedProcess& p = run.processes[0];
    ASSERT_TRUE(p.end.has_value());
    int64_t begin = static_cast<int64_t>(p.header.start_monotonic_ns());
    int64_t end = static_cast<int64_t>(p.end->monotonic_ns());
    std::vector<const LoadedEvent*> device;
    for (const LoadedEvent& e : p.events) {
      if (e.op == OP_CUPTI_MEMCPY || e.op == OP_CUPTI_KERNEL) device.push_back(&e);
    }
    ASSERT_EQ(device.size(), 3u);
    for (const LoadedEvent* e : device) {
      EXPECT_EQ(e->tid, 0u);
      EXPECT_EQ(e->aux, 7u);  // the stream
      // On this process's CLOCK_MONOTONIC: inside its life, not 5000 s on.
      EXPECT_GT(e->start_ns, begin);
      EXPECT_LT(e->end_ns, end);
    }
    EXPECT_EQ(device[0]->op, OP_CUPTI_MEMCPY);
    EXPECT_EQ(device[0]->requested, 4096u);
    EXPECT_EQ(device[0]->result, 1);  // CUPTI_ACTIVITY_MEMCPY_KIND_HTOD
    EXPECT_EQ(device[0]->flags, static_cast<uint32_t>(FLAG_CUDA_PINNED));
    EXPECT_EQ(device[0]->duration_ns(), 5000);
    EXPECT_EQ(device[1]->op, OP_CUPTI_KERNEL);
    EXPECT_EQ(device[1]->start_ns - device[0]->start_ns, 6000);
    EXPECT_EQ(device[1]->duration_ns(), 2000);
    EXPECT_EQ(device[2]->op, OP_CUPTI_MEMCPY);
    EXPECT_EQ(device[2]->requested, 1024u);
    EXPECT_EQ(device[2]->result, 2);  // DTOH
    EXPECT_EQ(device[2]->flags, static_cast<uint32_t>(FLAG_CUDA_PAGEABLE));
    EXPECT_EQ(device[2]->start_ns - device[0]->start_ns, 9000);
    EXPECT_EQ(device[2]->duration_ns(), 2000);
    // The host-side events are all still there.
    EXPECT_EQ(CudaEvents(run).size(), 15u + 3u);
  }

  TempDir dir_;
  std::string trace_ = dir_.Sub("trace");
};

TEST_F(CuptiTest, DeviceRecordsOnTheTraceClockThroughTheTimestampCallback) {
  RunResult r = Run({});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ExpectDeviceEvents();
}

TEST_F(CuptiTest, DeviceRecordsOnTheTraceClockThroughAnOffset) {
  RunResult r = Run({{"IOTAP_FAKE_CUPTI_OWN_CLOCK", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ExpectDeviceEvents();
}

TEST_F(CuptiTest, AnotherClientAttachedIsSaidOnceAndTracingGoesOn) {
  RunResult r = Run({{"IOTAP_FAKE_CUPTI_BUSY", "1"}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err,
            "iotap: IOTAP_CUPTI=1: another CUPTI client is already attached; recording without "
            "device-side timing\n");
  std::vector<LoadedEvent> events = CudaEvents(LoadRun(trace_));
  EXPECT_EQ(events.size(), 15u);
  for (const LoadedEvent& e : events) EXPECT_NE(e.op, OP_CUPTI_MEMCPY);
}

TEST_F(CuptiTest, OffUnlessAskedFor) {
  RunOptions options;
  options.env["LD_LIBRARY_PATH"] = std::string(IOTAP_BINARY_DIR) + "/cuda_fake";
  RunResult r =
      RunPreloaded({TestProgram("cuda_calls"), "lifecycle", dir_.Sub("unused")}, trace_, options);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(CudaEvents(LoadRun(trace_)).size(), 15u);
}

}  // namespace
}  // namespace iotap::testing
