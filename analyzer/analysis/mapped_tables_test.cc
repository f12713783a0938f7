// The report's mapped reads and io_uring requests (mapped_tables.cc), and
// the layers' units and busy time (tables.cc), on a synthetic run whose
// every figure is known: a process whose faults were sampled, one whose
// faults were only counted, one that used io_uring.

#include <filesystem>
#include <string>
#include <vector>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;

int64_t At(double ms) { return kT0 + static_cast<int64_t>(ms * 1e6); }

// pid 100: perf samples (3 faults lost). /data/a.bin: a major fault of
// 2 ms (64 KiB span) and one of 1 ms on another thread, overlapping it
// (64 KiB), and a minor fault whose span was estimated (16 KiB);
// /data/b.bin: one minor fault (32 KiB). A pread of a.bin, 1 ms.
void WriteSampled(const std::string& file) {
  SyntheticProcess p(100, 1, "/usr/bin/python3", {"python3", "load.py"}, kT0);
  Packet sampling;
  sampling.mutable_fault_sampling()->set_source(FaultSampling::SOURCE_PERF_SAMPLES);
  sampling.mutable_fault_sampling()->set_lost_faults(3);
  p.Packet(sampling);
  uint32_t a = p.Path("/data/a.bin"), b = p.Path("/data/b.bin");
  auto fault = [&](uint32_t f, double start, double end, int64_t offset, int64_t span,
                   uint32_t flags, uint32_t tid) {
    p.Add({.op = OP_MAPPED_READ, .start_ns = At(start), .end_ns = At(end), .file = f,
           .offset = offset, .requested = 4096, .result = span, .flags = flags,
           .aux = static_cast<uint64_t>(offset), .tid = tid});
  };
  fault(a, 10, 12, 0, 65536, FLAG_MAJOR_FAULT, 100);
  fault(a, 11, 12, 65536, 65536, FLAG_MAJOR_FAULT, 101);
  fault(a, 13, 13, 131072, 16384, FLAG_INCOMPLETE, 100);
  fault(b, 14, 14, 0, 32768, 0, 100);
  p.Read(OP_PREAD, At(20), At(21), a, 0, 4096);
  p.End(EndOfTrace::REASON_EXIT, 0, At(50));
  p.WriteTo(file);
}

// pid 200: the kernel refused the samples; two threads' counters, read
// twice each (minor +50 and +10, major +2 and +1, read bytes +8 KiB and
// +4 KiB). A pread of a.bin that overlaps pid 100's by 0.5 ms.
void WriteCounted(const std::string& file) {
  SyntheticProcess p(200, 1, "/usr/bin/python3", {"python3", "load.py"}, kT0);
  Packet sampling;
  sampling.mutable_fault_sampling()->set_source(FaultSampling::SOURCE_THREAD_COUNTERS);
  sampling.mutable_fault_sampling()->set_note("perf_event_open refused: perf_event_paranoid 3");
  p.Packet(sampling);
  for (int reading = 0; reading < 2; ++reading) {
    Packet counters;
    auto* t = counters.mutable_fault_counters()->add_thread();
    t->set_tid(200);
    t->set_minor_faults(100 + 50 * reading);
    t->set_major_faults(5 + 2 * reading);
    t->set_read_bytes(8192 * reading);
    t = counters.mutable_fault_counters()->add_thread();
    t->set_tid(201);
    t->set_minor_faults(10 + 10 * reading);
    t->set_major_faults(reading);
    t->set_read_bytes(4096 * reading);
    p.Packet(counters);
  }
  p.Read(OP_PREAD, At(20.5), At(22), p.Path("/data/a.bin"), 4096, 4096);
  p.End(EndOfTrace::REASON_EXIT, 0, At(50));
  p.WriteTo(file);
}

// pid 300: an io_uring openat of c.bin (0.5 ms); two calls, the first
// carrying two 8 KiB reads of c.bin (2 and 3 ms), the second a write of
// 1000 bytes to out.bin, a read that failed and one whose completion was
// never seen; and 4 requests the kernel took from calls the shim did not
// see.
void WriteUring(const std::string& file) {
  SyntheticProcess p(300, 1, "/usr/bin/fio", {"fio"}, kT0);
  uint32_t ring = p.Path("anon_inode:[io_uring]");
  uint32_t c = p.Path("/data/c.bin"), out = p.Path("/data/out.bin");
  p.Add({.op = OP_URING_OPENAT, .start_ns = At(29), .end_ns = At(29.5), .file = c, .result = 5,
         .aux = 18});
  p.Add({.op = OP_URING_ENTER, .start_ns = At(30), .end_ns = At(31), .file = ring,
         .requested = 2, .result = 2});
  p.Add({.op = OP_URING_READ, .start_ns = At(30), .end_ns = At(32), .file = c, .offset = 0,
         .requested = 8192, .result = 8192, .aux = 22});
  p.Add({.op = OP_URING_READ, .start_ns = At(30), .end_ns = At(33), .file = c, .offset = 8192,
         .requested = 8192, .result = 8192, .aux = 22});
  p.Add({.op = OP_URING_ENTER, .start_ns = At(40), .end_ns = At(41), .file = ring,
         .requested = 3, .result = 3});
  p.Add({.op = OP_URING_WRITE, .start_ns = At(40), .end_ns = At(40.5), .file = out, .offset = 0,
         .requested = 1000, .result = 1000, .aux = 23});
  p.Add({.op = OP_URING_READ, .start_ns = At(40), .end_ns = At(41), .file = c, .offset = 1 << 30,
         .requested = 8192, .result = -1, .error = 5, .aux = 22});
  p.Add({.op = OP_URING_READ, .start_ns = At(40), .end_ns = At(40), .file = c, .offset = 16384,
         .requested = 8192, .flags = FLAG_INCOMPLETE, .aux = 22});
  p.Add({.op = OP_URING_ENTER, .start_ns = At(45), .end_ns = At(45), .file = ring,
         .requested = 4, .result = 4, .flags = FLAG_INCOMPLETE});
  p.End(EndOfTrace::REASON_EXIT, 0, At(50));
  p.WriteTo(file);
}

class MappedTablesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("iotap-mapped-tables-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    files_ = {(dir_ / "sampled.iotap").string(), (dir_ / "counted.iotap").string(),
              (dir_ / "uring.iotap").string()};
    WriteSampled(files_[0]);
    WriteCounted(files_[1]);
    WriteUring(files_[2]);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  report::Report Analyze(int top_files = 50) {
    AnalysisOptions options;
    options.top_files = top_files;
    absl::StatusOr<report::Report> r = AnalyzeTraceFiles(files_, options);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : report::Report();
  }

  std::filesystem::path dir_;
  std::vector<std::string> files_;
};

const report::Layer* LayerNamed(const report::Report& r, const std::string& name) {
  for (const report::Layer& l : r.layers()) {
    if (l.name() == name) return &l;
  }
  return nullptr;
}

TEST_F(MappedTablesTest, MappedReadsSayHowTheyWereSeen) {
  report::Report r = Analyze();
  ASSERT_TRUE(r.has_mapped_reads());
  const report::MappedReads& m = r.mapped_reads();
  EXPECT_EQ(m.source(), "perf samples and thread counters");
  EXPECT_EQ(m.processes_sampled(), 1);
  EXPECT_EQ(m.processes_counted(), 1);
  EXPECT_EQ(m.lost_faults(), 3);
  EXPECT_EQ(m.faults(), 4);
  EXPECT_EQ(m.major_faults(), 2);
  EXPECT_EQ(m.span_bytes(), 65536 + 65536 + 16384 + 32768);
  EXPECT_EQ(m.touched_bytes(), 4 * 4096);
  EXPECT_EQ(m.estimated_spans(), 1);
  EXPECT_DOUBLE_EQ(m.major_s(), 0.003);
  EXPECT_EQ(m.counted_minor_faults(), 60);
  EXPECT_EQ(m.counted_major_faults(), 3);
  EXPECT_EQ(m.counted_read_bytes(), 12288);
  ASSERT_EQ(m.notes_size(), 1);
  EXPECT_EQ(m.notes(0), "perf_event_open refused: perf_event_paranoid 3");
  EXPECT_EQ(m.file_count(), 2);
  ASSERT_EQ(m.files_size(), 2);
  EXPECT_EQ(m.files(0).path(), "/data/a.bin");  // most span first
  EXPECT_EQ(m.files(0).faults(), 3);
  EXPECT_EQ(m.files(0).major_faults(), 2);
  EXPECT_EQ(m.files(0).span_bytes(), 147456);
  EXPECT_EQ(m.files(0).touched_bytes(), 12288);
  EXPECT_EQ(m.files(0).estimated_spans(), 1);
  EXPECT_DOUBLE_EQ(m.files(0).major_s(), 0.003);
  EXPECT_EQ(m.files(1).path(), "/data/b.bin");
  EXPECT_EQ(m.files(1).faults(), 1);
  EXPECT_EQ(m.files(1).major_faults(), 0);
  EXPECT_EQ(m.files(1).span_bytes(), 32768);
  EXPECT_EQ(m.files(1).major_s(), 0);
  EXPECT_EQ(std::vector<std::string>(m.caveats().begin(), m.caveats().end()),
            std::vector<std::string>(
                {"re-reads of pages already mapped and the kernel's own access to a mapping (a "
                 "write() from mapped memory) cause no page fault: they are not seen",
                 "3 page faults were lost (the kernel's sample buffers were full): the fault "
                 "figures are lower bounds",
                 "in 1 process the kernel refused the page-fault samples (perf_event_open "
                 "refused: perf_event_paranoid 3): their faults are only counted, per thread, "
                 "in any memory while data files were mapped, with no file named"}));
}

TEST_F(MappedTablesTest, UringRequestsCountWhatTheirCompletionsSaid) {
  report::Report r = Analyze();
  ASSERT_TRUE(r.has_io_uring());
  const report::UringRequests& u = r.io_uring();
  EXPECT_EQ(u.calls(), 2);
  EXPECT_EQ(u.requests(), 6);
  EXPECT_EQ(u.reads(), 4);
  EXPECT_EQ(u.read_bytes(), 16384);  // the failed and the incomplete read moved nothing known
  EXPECT_EQ(u.writes(), 1);
  EXPECT_EQ(u.write_bytes(), 1000);
  EXPECT_EQ(u.other(), 1);
  EXPECT_EQ(u.failed(), 1);
  EXPECT_EQ(u.incomplete(), 1);
  EXPECT_DOUBLE_EQ(u.read_seconds(), 0.006);
  EXPECT_EQ(u.unseen_requests(), 4);
  EXPECT_EQ(u.file_count(), 2);
  ASSERT_EQ(u.files_size(), 2);
  EXPECT_EQ(u.files(0).path(), "/data/c.bin");
  EXPECT_EQ(u.files(0).reads(), 4);
  EXPECT_EQ(u.files(0).read_bytes(), 16384);
  EXPECT_EQ(u.files(0).other(), 1);
  EXPECT_EQ(u.files(0).failed(), 1);
  EXPECT_EQ(u.files(0).incomplete(), 1);
  EXPECT_EQ(u.files(1).path(), "/data/out.bin");
  EXPECT_EQ(u.files(1).writes(), 1);
  EXPECT_EQ(u.files(1).write_bytes(), 1000);
  EXPECT_EQ(std::vector<std::string>(u.caveats().begin(), u.caveats().end()),
            std::vector<std::string>(
                {"1 of 6 requests had no completion the tracer saw: they are counted, their "
                 "results and durations are unknown (none is assumed)",
                 "4 requests were submitted by system calls the tracer cannot see (the "
                 "program's own syscall instruction): counted when their ring went away, their "
                 "files, sizes and completions unknown, and in no other figure"}));
}

TEST_F(MappedTablesTest, FilesBeyondTopAreInTheSumsOnly) {
  report::Report r = Analyze(/*top_files=*/1);
  ASSERT_EQ(r.mapped_reads().files_size(), 1);
  EXPECT_EQ(r.mapped_reads().files(0).path(), "/data/a.bin");
  EXPECT_EQ(r.mapped_reads().file_count(), 2);
  EXPECT_EQ(r.mapped_reads().faults(), 4);
  ASSERT_EQ(r.io_uring().files_size(), 1);
  EXPECT_EQ(r.io_uring().file_count(), 2);
  EXPECT_EQ(r.io_uring().requests(), 6);
}

TEST_F(MappedTablesTest, LayersCountInTheirUnitsAndTheirBusyTimeIsAUnion) {
  report::Report r = Analyze();
  const report::Layer* mapped = LayerNamed(r, "MAPPED");
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(mapped->unit(), "faults");
  EXPECT_EQ(mapped->reads(), 4);
  EXPECT_EQ(mapped->read_bytes(), 180224);
  EXPECT_DOUBLE_EQ(mapped->time_s(), 0.003);
  EXPECT_DOUBLE_EQ(mapped->busy_s(), 0.002);  // two threads' faults overlap by 1 ms
  const report::Layer* uring = LayerNamed(r, "URING");
  ASSERT_NE(uring, nullptr);
  EXPECT_EQ(uring->unit(), "requests");
  EXPECT_EQ(uring->reads(), 4);
  EXPECT_EQ(uring->writes(), 1);
  // [29, 29.5] and [30, 33] and [40, 41] ms.
  EXPECT_DOUBLE_EQ(uring->busy_s(), 0.0045);
  const report::Layer* posix = LayerNamed(r, "POSIX");
  ASSERT_NE(posix, nullptr);
  EXPECT_EQ(posix->unit(), "calls");
  EXPECT_DOUBLE_EQ(posix->time_s(), 0.0025);
  EXPECT_DOUBLE_EQ(posix->busy_s(), 0.002);  // two processes' reads, [20, 22] ms
}

TEST_F(MappedTablesTest, ARunWithNeitherHasNeitherSection) {
  SyntheticProcess p(400, 1, "/bin/cat", {"cat"}, kT0);
  p.Read(OP_READ, At(1), At(2), p.Path("/data/x"), -1, 10);
  p.End(EndOfTrace::REASON_EXIT, 0, At(3));
  const std::string file = (dir_ / "plain.iotap").string();
  p.WriteTo(file);
  absl::StatusOr<report::Report> r = AnalyzeTraceFiles({file}, AnalysisOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->has_mapped_reads());
  EXPECT_FALSE(r->has_io_uring());
  ASSERT_EQ(r->layers_size(), 1);
  EXPECT_DOUBLE_EQ(r->layers(0).busy_s(), 0.001);
}

}  // namespace
}  // namespace iotap::analyzer
