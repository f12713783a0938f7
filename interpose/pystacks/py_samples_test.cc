// The Python sampler's entry points (py_samples.cc), called as the helper
// calls them, with the events they leave in the calling thread's ring.

#include <string.h>

#include <string>

#include "gtest/gtest.h"
#include "interpose/core/ops.h"
#include "interpose/core/recorder.h"
#include "interpose/core/strings.h"

extern "C" {
long long iotap_py_intern(int kind, const char* bytes, size_t size);
int iotap_py_sample(int tid, unsigned stack, long long cpu_ns, long long start_monotonic_ns,
                    long long end_monotonic_ns, unsigned generation);
int iotap_py_sampler(int state, long long samples_per_cpu_second, const char* note);
}

namespace iotap::interpose {
namespace {

// The string table is emptied when full: the writer's part, done here by
// taking every pending string and emptying the table.
bool Discard(const StringRecord&, void*) { return true; }
void DrainStrings() {
  TakePendingStrings(Discard, nullptr);
  ResetStringsIfFull();
}

class PySamplesTest : public ::testing::Test {
 protected:
  // The key a thread's ring is filed under, as the shim's start creates it;
  // without it the first event would file its ring under key 0, which is
  // another library's (googletest's, in some links).
  static void SetUpTestSuite() { ASSERT_TRUE(PrepareRings()); }

  void SetUp() override {
    SetWriterHooks({.ring_taken = [] {}, .ring_full = nullptr, .strings_full = DrainStrings});
    g_active_layers.store(kLayerAll);
  }
  void TearDown() override { g_active_layers.store(0); }

  // How many events this thread has recorded (its ring's head).
  static uint64_t Head() {
    return tls_thread.ring == nullptr ? 0 : tls_thread.ring->head.load();
  }
  static const RawEvent& EventAt(uint64_t index) {
    const Ring* r = tls_thread.ring;
    return r->events[index & (r->capacity - 1)];
  }
};

constexpr char kFunction[] = "Worker.load\0/srv/worker.py\0" "12";

TEST_F(PySamplesTest, InternsOncePerKindAndBytes) {
  long long f = iotap_py_intern(kKindPyFunction, kFunction, sizeof(kFunction) - 1);
  ASSERT_GT(f & 0xffffffff, 0);
  EXPECT_EQ(static_cast<uint32_t>(f >> 32), StringGeneration());
  EXPECT_EQ(iotap_py_intern(kKindPyFunction, kFunction, sizeof(kFunction) - 1), f);
  // The same bytes as a stack are another string.
  long long s = iotap_py_intern(kKindPyStack, kFunction, sizeof(kFunction) - 1);
  EXPECT_EQ(s, f + 1);

  EXPECT_EQ(iotap_py_intern(kKindPath, "/a", 2), 0);
  EXPECT_EQ(iotap_py_intern(kKindPyStack, "x", 0), 0);
  EXPECT_EQ(iotap_py_intern(kKindPyStack, nullptr, 4), 0);
  std::string big(8193, 'x');
  EXPECT_EQ(iotap_py_intern(kKindPyStack, big.data(), big.size()), 0);
  EXPECT_GT(iotap_py_intern(kKindPyStack, big.data(), 8192), 0);

  g_active_layers.store(0);
  EXPECT_EQ(iotap_py_intern(kKindPyStack, "\x01\x02", 2), 0);
}

TEST_F(PySamplesTest, RecordsASampleWithItsWindowThreadAndCpu) {
  const char stack_bytes[] = {3, 40, 4, 41};
  long long s = iotap_py_intern(kKindPyStack, stack_bytes, sizeof(stack_bytes));
  ASSERT_GT(s, 0);
  unsigned stack = static_cast<unsigned>(s), generation = static_cast<unsigned>(s >> 32);
  uint64_t before = Head();
  ASSERT_EQ(iotap_py_sample(4242, stack, 1500000, 1000000000, 1010000000, generation), 0);
  ASSERT_EQ(Head(), before + 1);
  const RawEvent& e = EventAt(before);
  EXPECT_EQ(e.op, kOpPySample);
  EXPECT_EQ(e.t0, 1000000000u);
  EXPECT_EQ(e.t1, 1010000000u);
  EXPECT_EQ(e.file, stack);
  EXPECT_EQ(e.aux, 4242u);
  EXPECT_EQ(e.requested, 1500000u);
  EXPECT_EQ(e.flags, kFlagExplicitTimes);
  EXPECT_EQ(e.result, 0);
  EXPECT_EQ(e.offset, 0);

  // Refused, recording nothing: a stale generation (1), bad arguments (-1).
  EXPECT_EQ(iotap_py_sample(4242, stack, 1, 10, 20, generation + 1), 1);
  EXPECT_EQ(iotap_py_sample(0, stack, 1, 10, 20, generation), -1);
  EXPECT_EQ(iotap_py_sample(4242, 0, 1, 10, 20, generation), -1);
  EXPECT_EQ(iotap_py_sample(4242, stack, -1, 10, 20, generation), -1);
  EXPECT_EQ(iotap_py_sample(4242, stack, 1, 0, 20, generation), -1);
  EXPECT_EQ(iotap_py_sample(4242, stack, 1, 30, 20, generation), -1);
  g_active_layers.store(0);
  EXPECT_EQ(iotap_py_sample(4242, stack, 1, 10, 20, generation), -1);
  EXPECT_EQ(Head(), before + 1);
}

TEST_F(PySamplesTest, RecordsTheSamplerStateWithItsNote) {
  uint64_t before = Head();
  ASSERT_EQ(iotap_py_sampler(1, 100, "CPython 3.11"), 0);
  ASSERT_EQ(iotap_py_sampler(2, 0, nullptr), 0);
  ASSERT_EQ(iotap_py_sampler(3, 100, nullptr), 0);
  ASSERT_EQ(iotap_py_sampler(4, 100, "no free signal"), 0);
  EXPECT_EQ(iotap_py_sampler(0, 100, nullptr), -1);
  EXPECT_EQ(iotap_py_sampler(5, 100, nullptr), -1);
  EXPECT_EQ(iotap_py_sampler(1, -1, nullptr), -1);
  ASSERT_EQ(Head(), before + 4);
  const RawEvent& started = EventAt(before);
  EXPECT_EQ(started.op, kOpPySampler);
  EXPECT_EQ(started.result, 1);
  EXPECT_EQ(started.aux, 100u);
  EXPECT_EQ(started.file, InternString("CPython 3.11", 12, kKindMark));
  const RawEvent& unavailable = EventAt(before + 1);
  EXPECT_EQ(unavailable.result, 2);
  EXPECT_EQ(unavailable.file, 0u);
  EXPECT_EQ(EventAt(before + 2).result, 3);
  EXPECT_EQ(EventAt(before + 2).file, 0u);
  const RawEvent& with_gil = EventAt(before + 3);
  EXPECT_EQ(with_gil.result, 4);
  EXPECT_EQ(with_gil.file, InternString("no free signal", 14, kKindMark));
}

// Filling the string table empties it: the generation goes up by one, ids go
// on counting, and a sample naming an id of the old generation is refused
// until the caller interns its stack again.
TEST_F(PySamplesTest, AFullTableStartsANewGeneration) {
  long long old = iotap_py_intern(kKindPyStack, "\x07\x08", 2);
  ASSERT_GT(old, 0);
  uint32_t generation = StringGeneration();
  uint32_t last_id = static_cast<uint32_t>(old);
  long long fresh = 0;
  for (uint32_t i = 0; i < (1u << 19) && StringGeneration() == generation; ++i) {
    std::string bytes = "fill " + std::to_string(i);
    fresh = iotap_py_intern(kKindPyFunction, bytes.data(), bytes.size());
    ASSERT_GT(static_cast<uint32_t>(fresh), last_id);
    last_id = static_cast<uint32_t>(fresh);
  }
  ASSERT_EQ(StringGeneration(), generation + 1);
  EXPECT_EQ(static_cast<uint32_t>(fresh >> 32), generation + 1);
  EXPECT_EQ(iotap_py_sample(1, static_cast<unsigned>(old), 1, 10, 20, generation), 1);
  long long again = iotap_py_intern(kKindPyStack, "\x07\x08", 2);
  EXPECT_GT(static_cast<uint32_t>(again), static_cast<uint32_t>(fresh));
  EXPECT_EQ(iotap_py_sample(1, static_cast<unsigned>(again), 1, 10, 20,
                            static_cast<unsigned>(again >> 32)),
            0);
}

}  // namespace
}  // namespace iotap::interpose
