// Mapped reads and io_uring figures on hand-made events and packets: per
// file sums and their order, how a process's faults were seen, counters'
// growth, and how processes merge (notes in the order of the trace files,
// whatever order the processes are merged in).

#include "analyzer/accumulate/mapped_accumulator.h"

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr uint32_t kData = 3;
constexpr uint32_t kOut = 4;

ProcessTrace MakeProcess() {
  ProcessTrace p("test.iotap");
  StringTable t;
  for (auto [id, path] : {std::pair<uint32_t, const char*>{kData, "/d/data.bin"},
                          {kOut, "/d/out.bin"}}) {
    InternedString* s = t.add_entry();
    s->set_id(id);
    s->set_value(path);
    s->set_kind(InternedString::KIND_PATH);
  }
  p.AddStrings(t);
  return p;
}

Event Fault(uint64_t touched, int64_t span, uint32_t flags, int64_t ns) {
  Event e;
  e.op = OP_MAPPED_READ;
  e.file = kData;
  e.requested = touched;
  e.result = span;
  e.flags = flags;
  e.start_ns = 1000;
  e.end_ns = 1000 + ns;
  return e;
}

// A failed request: `result` < 0, its errno in `error`.
Event Uring(Op op, uint32_t file, uint64_t requested, int64_t result, uint32_t flags = 0) {
  Event e;
  if (result < 0) e.error = static_cast<uint32_t>(-result);
  e.op = op;
  e.file = file;
  e.requested = requested;
  e.result = result;
  e.flags = flags;
  e.start_ns = 0;
  e.end_ns = 500;
  return e;
}

Packet Sampling(FaultSampling::Source source, const std::string& note, uint64_t lost) {
  Packet p;
  p.mutable_fault_sampling()->set_source(source);
  p.mutable_fault_sampling()->set_note(note);
  p.mutable_fault_sampling()->set_lost_faults(lost);
  return p;
}

Packet Counters(uint32_t tid, uint64_t minor, uint64_t major, uint64_t bytes) {
  Packet p;
  FaultCounters::ThreadCounters* t = p.mutable_fault_counters()->add_thread();
  t->set_tid(tid);
  t->set_minor_faults(minor);
  t->set_major_faults(major);
  t->set_read_bytes(bytes);
  return p;
}

TEST(MappedAccumulatorTest, SampledFaultsAndUringRequestsPerFile) {
  ProcessTrace p = MakeProcess();
  MappedAccumulator a;
  a.OnPacket(Sampling(FaultSampling::SOURCE_PERF_SAMPLES, "", 2));
  a.OnEvent(p, Fault(4096, 65536, 0, 10));
  a.OnEvent(p, Fault(4096, 65536, FLAG_MAJOR_FAULT, 2'000'000));
  a.OnEvent(p, Fault(4096, 65536, FLAG_MAJOR_FAULT | FLAG_INCOMPLETE, 1'000'000));
  a.OnEvent(p, Uring(OP_URING_ENTER, 0, 2, 2));
  a.OnEvent(p, Uring(OP_URING_ENTER, 0, 5, 0, FLAG_INCOMPLETE));  // at teardown: unseen
  a.OnEvent(p, Uring(OP_URING_READ, kData, 8192, 8192));
  a.OnEvent(p, Uring(OP_URING_READ, kData, 8192, -5));
  a.OnEvent(p, Uring(OP_URING_WRITE, kOut, 1000, 1000, FLAG_INCOMPLETE));
  a.OnEvent(p, Uring(OP_URING_OPENAT, kOut, 0, 7));
  a.OnFileEnd();
  MappedTotals t = a.Totals();
  EXPECT_EQ(t.processes_sampled, 1u);
  EXPECT_EQ(t.processes_counted, 0u);
  EXPECT_EQ(t.lost_faults, 2u);
  ASSERT_EQ(t.mapped.size(), 1u);
  EXPECT_EQ(t.mapped[0].path, "/d/data.bin");
  EXPECT_EQ(t.mapped[0].faults, 3u);
  EXPECT_EQ(t.mapped[0].major_faults, 2u);
  EXPECT_EQ(t.mapped[0].span_bytes, 3u * 65536);
  EXPECT_EQ(t.mapped[0].touched_bytes, 3u * 4096);
  EXPECT_EQ(t.mapped[0].estimated_spans, 1u);
  EXPECT_EQ(t.mapped[0].major_ns, 3'000'000);
  EXPECT_EQ(t.uring_calls, 1u);
  EXPECT_EQ(t.uring_unseen_requests, 5u);
  ASSERT_EQ(t.uring.size(), 2u);
  EXPECT_EQ(t.uring[0].path, "/d/data.bin");  // 8192 bytes before 1000
  EXPECT_EQ(t.uring[0].reads, 2u);
  EXPECT_EQ(t.uring[0].read_bytes, 8192u);
  EXPECT_EQ(t.uring[0].failed, 1u);
  EXPECT_EQ(t.uring[0].read_ns, 1000);
  EXPECT_EQ(t.uring[1].path, "/d/out.bin");
  EXPECT_EQ(t.uring[1].writes, 1u);
  EXPECT_EQ(t.uring[1].write_bytes, 1000u);
  EXPECT_EQ(t.uring[1].other, 1u);
  EXPECT_EQ(t.uring[1].incomplete, 1u);
}

TEST(MappedAccumulatorTest, CountedProcessesMergeInTraceFileOrder) {
  ProcessTrace p = MakeProcess();
  // Rank 0: refused, two threads' counters grow; rank 1: refused for
  // another reason, then the first reason again; rank 2: sampled.
  MappedAccumulator first;
  first.OnPacket(Sampling(FaultSampling::SOURCE_THREAD_COUNTERS, "perf refused", 0));
  first.OnPacket(Counters(10, 100, 1, 4096));
  first.OnPacket(Counters(11, 5, 0, 0));
  first.OnPacket(Counters(10, 150, 3, 12288));
  first.OnPacket(Counters(11, 9, 1, 8192));
  first.OnFileEnd();
  MappedAccumulator second;
  second.OnPacket(Sampling(FaultSampling::SOURCE_THREAD_COUNTERS, "no mmap", 0));
  second.OnPacket(Sampling(FaultSampling::SOURCE_THREAD_COUNTERS, "perf refused", 0));
  second.OnFileEnd();
  MappedAccumulator third;
  third.OnPacket(Sampling(FaultSampling::SOURCE_PERF_SAMPLES, "", 1));
  third.OnEvent(p, Fault(4096, 8192, 0, 10));
  third.OnFileEnd();
  MappedAccumulator run;
  run.Absorb(std::move(third), 2);
  run.Absorb(std::move(second), 1);
  run.Absorb(std::move(first), 0);
  MappedTotals t = run.Totals();
  EXPECT_EQ(t.processes_sampled, 1u);
  EXPECT_EQ(t.processes_counted, 2u);
  EXPECT_EQ(t.lost_faults, 1u);
  EXPECT_EQ(t.counted_minor_faults, 54u);
  EXPECT_EQ(t.counted_major_faults, 3u);
  EXPECT_EQ(t.counted_read_bytes, 16384u);
  EXPECT_EQ(t.notes, (std::vector<std::string>{"perf refused", "no mmap"}));
  ASSERT_EQ(t.mapped.size(), 1u);
  EXPECT_EQ(t.mapped[0].span_bytes, 8192u);
}

// A crafted trace's sums stop at the largest value rather than wrapping: a
// file's fault time and bytes over several processes, and counters that go
// backwards add nothing.
TEST(MappedAccumulatorTest, HostileSumsSaturate) {
  ProcessTrace p = MakeProcess();
  constexpr int64_t kHuge = INT64_MAX / 2 + 1;
  MappedAccumulator run;
  for (int rank = 0; rank < 3; ++rank) {
    MappedAccumulator a;
    a.OnEvent(p, Fault(UINT64_MAX / 2 + 1, 65536, FLAG_MAJOR_FAULT, kHuge));
    a.OnFileEnd();
    run.Absorb(std::move(a), rank);
  }
  MappedTotals t = run.Totals();
  ASSERT_EQ(t.mapped.size(), 1u);
  EXPECT_EQ(t.mapped[0].faults, 3u);
  EXPECT_EQ(t.mapped[0].major_ns, INT64_MAX);
  EXPECT_EQ(t.mapped[0].touched_bytes, UINT64_MAX);
  EXPECT_EQ(t.mapped[0].span_bytes, 3u * 65536);
}

}  // namespace
}  // namespace iotap::analyzer
