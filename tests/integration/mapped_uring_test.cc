// Reads no wrapper sees (issue 15), by real programs, against ground truth:
//   - numpy.memmap (programs/mapped_reader.py) reading one byte per 64 KiB
//     window of a cold file: one OP_MAPPED_READ per window, at its offset,
//     and as many major faults as the thread's own counters
//     (/proc/thread-self/stat) say it took during the pass, the page tables
//     scanned (PAGEMAP_SCAN) or, as on older kernels, read;
//   - a DataLoader over a memmap, with 0 and 2 workers (forked children
//     fault on the inherited mapping);
//   - the memmap pass with perf_event_open refused (IOTAP_TEST_NO_PERF=1):
//     no mapped reads, the per-thread counters instead, covering the pass;
//   - LMDB random gets of a cold database (python3-lmdb): mapped reads of
//     data.mdb inside the file, majors as the thread counted them;
//   - a liburing program (programs/uring_reader.c): every request, with its
//     file (fixed files resolved), offset, size and result, exactly as
//     issued;
//   - a C program (programs/mapped_storm.c) whose data faults come between
//     bursts of thousands of anonymous ones: no sample lost;
//   - a C program (programs/mapped_fds.c) that maps a file in its main
//     thread, a later thread and a forked child, and closes every descriptor
//     (close_range): the descriptors it gets are those of an untraced run,
//     though the shim opened perf events on each of those threads;
//   - fio: --ioengine=mmap reading a cold file through its mapping (faults
//     covering every byte, no window counted twice), and --ioengine=io_uring,
//     whose io_uring_enter calls are its own syscall instructions on x86-64:
//     exactly its requests counted as the ring goes, files unknown.
// Each also checks what `iotap report` makes of the run (its JSON and its
// text): faults, major faults and spans, the sampling source, io_uring
// requests, and the caveats said where the figures cannot be complete.
// One file, past 800 lines, because every case shares its helpers (the cold
// file, the thread counters, the report's mapped-read figures), which a
// split would have to export; each case is a block of its own.

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "iotap/report.pb.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

constexpr int kWindow = 64 * 1024;
constexpr int kFileBytes = 8 << 20;

// An 8 MiB file of known bytes, out of the page cache.
std::string ColdFile(const TempDir& dir) {
  std::string path = dir.Sub("data.bin");
  std::string bytes(kFileBytes, '\0');
  for (int i = 0; i < kFileBytes; ++i) bytes[i] = static_cast<char>(i % 251);
  WriteFile(path, bytes);
  int fd = open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  fdatasync(fd);
  EXPECT_EQ(posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
  close(fd);
  return path;
}

struct Printed {
  long minor = -1, major = -1, sum = -1;
};

Printed ParseReader(const std::string& out) {
  Printed p;
  std::istringstream in(out);
  for (std::string word; in >> word;) {
    if (word == "faults") in >> p.minor >> p.major;
    if (word == "sum") in >> p.sum;
  }
  return p;
}

// `iotap report` of a trace: its JSON, parsed, and its text.
struct ReportOutputs {
  report::Report json;
  std::string text;
};

ReportOutputs ReportOf(const std::string& trace) {
  ReportOutputs out;
  RunResult json = RunProgram({IotapBinary(), "report", trace, "--format", "json"});
  EXPECT_EQ(json.exit_code, 0) << json.err;
  auto status = google::protobuf::util::JsonStringToMessage(json.out, &out.json);
  EXPECT_TRUE(status.ok()) << status.ToString();
  RunResult text = RunProgram({IotapBinary(), "report", trace});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  out.text = text.out;
  return out;
}

const report::Layer* LayerNamed(const report::Report& r, const std::string& name) {
  for (const report::Layer& l : r.layers()) {
    if (l.name() == name) return &l;
  }
  return nullptr;
}

bool Says(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

long ExpectedSum() {
  long sum = 0;
  for (int i = 0; i < kFileBytes; i += kWindow) sum += i % 251;
  return sum;
}

// A pass over a cold memmap, one byte per window, pausing after every
// `pause_every` windows (0: never): each window is one fault of the reader
// whose span covers its window's first byte, whenever the writer drained.
// `scan`: the writer looks at the page tables with PAGEMAP_SCAN where the
// kernel has it (pagemap.h), else by reading the pagemap file.
void CheckMemmapPass(int pause_every, bool scan = true) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  RunOptions options;
  if (!scan) options.env["IOTAP_TEST_NO_PAGEMAP_SCAN"] = "1";
  RunResult r = RunPreloaded({Python(), SourcePath("tests/integration/programs/mapped_reader.py"),
                              data, std::to_string(kWindow), std::to_string(pause_every)},
                             trace, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Printed p = ParseReader(r.out);
  EXPECT_EQ(p.sum, ExpectedSum());
  // The thread's counters hold one fault per window and any the interpreter
  // takes beside them (a page of its heap touched for the first time): run
  // untraced under load, the same pass counted 129 in 6 runs of 25.
  EXPECT_GE(p.minor + p.major, kFileBytes / kWindow) << r.out;
  EXPECT_LE(p.minor + p.major, kFileBytes / kWindow + 4) << r.out;

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& proc = run.processes[0];
  std::vector<const LoadedEvent*> faults = proc.On(data, OP_MAPPED_READ);
  ASSERT_EQ(faults.size(), static_cast<size_t>(kFileBytes / kWindow));
  std::map<uint64_t, int> by_offset;
  int majors = 0;
  uint64_t span = 0;
  for (const LoadedEvent* e : faults) {
    ++by_offset[e->aux];
    EXPECT_EQ(e->tid, static_cast<uint32_t>(proc.header.pid()));
    EXPECT_EQ(e->requested, 4096u);
    EXPECT_TRUE(e->HasOffset());
    EXPECT_LE(e->offset, static_cast<int64_t>(e->aux));
    EXPECT_GT(e->offset + e->result, static_cast<int64_t>(e->aux));
    span += static_cast<uint64_t>(e->result);
    if (e->flags & FLAG_MAJOR_FAULT) {
      ++majors;
      EXPECT_GT(e->end_ns, e->start_ns);
    } else {
      EXPECT_EQ(e->end_ns, e->start_ns);
    }
  }
  for (int i = 0; i < kFileBytes; i += kWindow) EXPECT_EQ(by_offset[i], 1) << "offset " << i;
  EXPECT_EQ(majors, p.major) << r.out;
  EXPECT_GE(majors, 1);  // the file was cold
  // The spans cover what was touched, and no more than the file.
  EXPECT_GE(span, static_cast<uint64_t>(kFileBytes / kWindow) * 4096);
  EXPECT_LE(span, static_cast<uint64_t>(kFileBytes) + kWindow);

  bool sampled = false;
  for (const Packet& packet : proc.packets) {
    if (packet.has_fault_sampling()) {
      sampled = packet.fault_sampling().source() == FaultSampling::SOURCE_PERF_SAMPLES;
      EXPECT_EQ(packet.fault_sampling().lost_faults(), 0u);
    }
    EXPECT_FALSE(packet.has_fault_counters());
  }
  EXPECT_TRUE(sampled);

  // The report: one fault per window, the majors the thread counted, the
  // spans of the faults, said to come from perf samples.
  ReportOutputs report = ReportOf(trace);
  const report::MappedReads& m = report.json.mapped_reads();
  EXPECT_EQ(m.source(), "perf samples");
  EXPECT_EQ(m.processes_sampled(), 1);
  EXPECT_EQ(m.processes_counted(), 0);
  EXPECT_EQ(m.lost_faults(), 0);
  EXPECT_EQ(m.faults(), kFileBytes / kWindow);
  EXPECT_EQ(m.major_faults(), p.major);
  EXPECT_EQ(m.touched_bytes(), static_cast<double>(kFileBytes / kWindow) * 4096);
  EXPECT_EQ(m.span_bytes(), static_cast<double>(span));
  ASSERT_EQ(m.files_size(), 1);
  EXPECT_EQ(m.files(0).path(), data);
  EXPECT_EQ(m.files(0).faults(), kFileBytes / kWindow);
  EXPECT_EQ(m.files(0).major_faults(), p.major);
  const report::Layer* layer = LayerNamed(report.json, "MAPPED");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->unit(), "faults");
  EXPECT_EQ(layer->reads(), kFileBytes / kWindow);
  EXPECT_EQ(layer->read_bytes(), static_cast<double>(span));
  // Only the major faults take time; their union is at most their sum, each
  // rounded outward to the busy bitmap's microseconds.
  EXPECT_GT(layer->busy_s(), 0);
  EXPECT_LE(layer->busy_s(), layer->time_s() + 2e-6 * majors);
  EXPECT_TRUE(Says(report.text, "seen by perf samples in 1 process)")) << report.text;
  EXPECT_TRUE(Says(report.text, "  MAPPED          128 faults mapping ")) << report.text;
  // The file's row counts its reads as faults (numpy.memmap made no read
  // call), in the JSON and the text.
  const report::File* row = nullptr;
  for (const report::File& f : report.json.files()) {
    if (f.path() == data) row = &f;
  }
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->reads(), kFileBytes / kWindow);
  EXPECT_EQ(row->mapped_faults(), kFileBytes / kWindow);
  EXPECT_EQ(row->uring_reads(), 0);
  EXPECT_TRUE(Says(report.text, absl::StrCat(" read in     128 faults,        0 B written,      1 "
                                             "opens  ",
                                             data, "\n")))
      << report.text;
  EXPECT_TRUE(Says(report.text, absl::StrCat("128 faults, ", p.major, " major ("))) << report.text;
  EXPECT_TRUE(Says(report.text,
                   "re-reads of pages already mapped and the kernel's own access to "
                   "a mapping (a write() from mapped memory) cause no page fault: "
                   "they are not seen"))
      << report.text;
}

TEST(MappedReadsTest, MemmapFaultsAreMappedReadsOfTheirWindows) { CheckMemmapPass(0); }

// Paused every 8 windows, the pass is drained while it runs (every few ms),
// with the last fault before each pause held for its major sample: the
// fault before it must not take the held fault's window.
TEST(MappedReadsTest, FaultsDrainedWhileThePassRunsKeepTheirWindows) { CheckMemmapPass(8); }
TEST(MappedReadsTest, PageTablesReadNotScannedKeepTheWindowsToo) { CheckMemmapPass(8, false); }

// A DataLoader over a numpy.memmap made before its workers fork: with 0
// workers the trainer faults, with 2 the workers fault on the inherited
// mapping; either way each 64 KiB window once, in the process that read it.
class MemmapLoaderTest : public ::testing::TestWithParam<int> {};

TEST_P(MemmapLoaderTest, EveryWindowIsOneFaultOfTheProcessThatReadIt) {
  int workers = GetParam();
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  RunOptions options;
  options.timeout_seconds = 120;
  RunResult r = RunPreloaded({Python(), SourcePath("tests/integration/programs/memmap_loader.py"),
                              data, std::to_string(kWindow), std::to_string(workers)},
                             trace, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseReader(r.out).sum, ExpectedSum()) << r.out;
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), static_cast<size_t>(1 + workers));
  std::map<uint64_t, int> by_offset;
  int faulting_processes = 0;
  uint64_t lost = 0;  // fault samples the kernel dropped, all processes
  for (const LoadedProcess& p : run.processes) {
    uint64_t process_lost = 0;
    for (const Packet& packet : p.packets) {
      if (packet.has_fault_sampling()) process_lost = packet.fault_sampling().lost_faults();
    }
    lost += process_lost;
    std::vector<const LoadedEvent*> faults = p.On(data, OP_MAPPED_READ);
    if (!faults.empty()) ++faulting_processes;
    bool trainer =
        p.header.ppid() != run.processes[0].header.pid() && run.ByPid(p.header.ppid()) == nullptr;
    if (workers > 0 && trainer) {
      EXPECT_TRUE(faults.empty()) << "the trainer read no sample";
    }
    for (const LoadedEvent* e : faults) ++by_offset[e->aux];
  }
  // Every window once. (The workers wait out the copy-on-write storm that
  // follows their fork, in which the kernel drops samples: `lost` says how
  // many it dropped, should a window be missing.)
  EXPECT_EQ(by_offset.size(), static_cast<size_t>(kFileBytes / kWindow))
      << lost << " fault samples dropped by the kernel";
  for (int i = 0; i < kFileBytes; i += kWindow) EXPECT_EQ(by_offset[i], 1) << "offset " << i;
  EXPECT_EQ(faulting_processes, workers == 0 ? 1 : workers);
}

INSTANTIATE_TEST_SUITE_P(Workers, MemmapLoaderTest, ::testing::Values(0, 2));

// LMDB reads values through its memory map: random gets of a cold
// database are mapped reads of data.mdb, and the major ones are those the
// reading thread's counters saw.
TEST(MappedReadsTest, LmdbRandomGetsAreMappedReads) {
  TempDir dir;
  std::string db = dir.Sub("db");
  std::filesystem::create_directory(db);
  std::string trace = dir.Sub("trace");
  RunResult r =
      RunPreloaded({Python(), SourcePath("tests/integration/programs/lmdb_reader.py"), db}, trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Printed p = ParseReader(r.out);
  EXPECT_EQ(p.sum, 51386) << r.out;  // values k % 251 at 400 keys of a fixed order
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  std::string data = db + "/data.mdb";
  uint64_t size = std::filesystem::file_size(data);
  std::vector<const LoadedEvent*> faults = run.processes[0].On(data, OP_MAPPED_READ);
  ASSERT_FALSE(faults.empty());
  long majors = 0;
  for (const LoadedEvent* e : faults) {
    EXPECT_LT(e->aux, size);
    EXPECT_LE(static_cast<uint64_t>(e->offset + e->result), size + kWindow);
    if (e->flags & FLAG_MAJOR_FAULT) ++majors;
  }
  EXPECT_LE(faults.size(), size / 4096);
  // The database was written with write(), so every major fault of data.mdb
  // is one of the reads.
  EXPECT_EQ(majors, p.major) << r.out;
}

TEST(MappedReadsTest, WithoutPerfTheThreadCountersCoverThePass) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  RunOptions options;
  options.env["IOTAP_TEST_NO_PERF"] = "1";
  RunResult r = RunPreloaded({Python(), SourcePath("tests/integration/programs/mapped_reader.py"),
                              data, std::to_string(kWindow)},
                             trace, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Printed p = ParseReader(r.out);
  EXPECT_EQ(p.sum, ExpectedSum());
  // One warning line says why.
  EXPECT_NE(r.err.find("page faults cannot be sampled (perf_event_open refused)"),
            std::string::npos)
      << r.err;

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& proc = run.processes[0];
  EXPECT_TRUE(proc.On(data, OP_MAPPED_READ).empty());
  FaultSampling::Source source = FaultSampling::SOURCE_UNSPECIFIED;
  std::vector<FaultCounters::ThreadCounters> main_thread;
  for (const Packet& packet : proc.packets) {
    if (packet.has_fault_sampling()) source = packet.fault_sampling().source();
    if (!packet.has_fault_counters()) continue;
    for (const auto& t : packet.fault_counters().thread()) {
      if (static_cast<int>(t.tid()) == proc.header.pid()) main_thread.push_back(t);
    }
  }
  EXPECT_EQ(source, FaultSampling::SOURCE_THREAD_COUNTERS);
  // Sampled when the file was mapped and as the trace ended: the growth
  // holds the pass's faults (and the interpreter's own after it).
  ASSERT_GE(main_thread.size(), 2u);
  const auto& first = main_thread.front();
  const auto& last = main_thread.back();
  EXPECT_GE(last.major_faults() - first.major_faults(), static_cast<uint64_t>(p.major));
  EXPECT_GE(last.minor_faults() + last.major_faults() - first.minor_faults() - first.major_faults(),
            static_cast<uint64_t>(kFileBytes / kWindow));

  // The report says the run had counters only, why, and their growth over
  // every thread (here the main thread's, and any other's).
  ReportOutputs report = ReportOf(trace);
  const report::MappedReads& m = report.json.mapped_reads();
  EXPECT_EQ(m.source(), "thread counters");
  EXPECT_EQ(m.processes_sampled(), 0);
  EXPECT_EQ(m.processes_counted(), 1);
  EXPECT_EQ(m.faults(), 0);
  EXPECT_EQ(m.files_size(), 0);
  EXPECT_GE(m.counted_major_faults(),
            static_cast<double>(last.major_faults() - first.major_faults()));
  EXPECT_GE(m.counted_minor_faults() + m.counted_major_faults(), kFileBytes / kWindow);
  ASSERT_EQ(m.notes_size(), 1);
  EXPECT_TRUE(Says(m.notes(0), "perf_event_open refused")) << m.notes(0);
  EXPECT_EQ(LayerNamed(report.json, "MAPPED"), nullptr);
  EXPECT_TRUE(Says(report.text, "seen by thread counters in 1 process)")) << report.text;
  EXPECT_TRUE(Says(report.text, "in 1 process the kernel refused the page-fault samples ("))
      << report.text;
}

struct Request {
  Op op;
  std::string file;
  int64_t offset;  // -1: none
  uint64_t requested;
  int64_t result;
  uint64_t aux;  // IORING_OP_*
  bool operator==(const Request&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Request& q) {
  return os << q.op << " " << q.file << " @" << q.offset << " req " << q.requested << " res "
            << q.result << " opcode " << q.aux;
}

TEST(UringTest, LiburingRequestsAreRecordedAsIssued) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string out = dir.Sub("out.bin");
  std::string trace = dir.Sub("trace");
  RunResult r = RunPreloaded({TestProgram("uring_reader"), data, out}, trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult plain = RunProgram({TestProgram("uring_reader"), data, out});
  EXPECT_EQ(r.out, plain.out);

  // IORING_OP_READV 1, WRITE 23, READ 22, OPENAT 18, CLOSE 19.
  std::vector<Request> expected;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 4; ++i) {
      int64_t offset = (round * 4 + i) * 8192;
      uint64_t size = i == 3 ? 8192 : 4096 * (i + 1);
      expected.push_back({OP_URING_READ, data, offset, size, static_cast<int64_t>(size), 22});
    }
  }
  expected.push_back({OP_URING_READ, data, 65536, 8192, 8192, 1});
  expected.push_back({OP_URING_WRITE, out, 0, 1000, 1000, 23});
  int opened = -1;
  {
    std::istringstream in(r.out);
    for (std::string word; in >> word;) {
      if (word == "openat") in >> opened;
    }
  }
  ASSERT_GE(opened, 0) << r.out;
  expected.push_back({OP_URING_OPENAT, data, -1, 0, opened, 18});
  expected.push_back({OP_URING_CLOSE, data, -1, 0, 0, 19});

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  std::vector<Request> recorded;
  int enters = 0, setups = 0, registers = 0;
  for (const LoadedEvent& e : run.processes[0].events) {
    if (e.op == OP_URING_ENTER) ++enters;
    if (e.op == OP_URING_SETUP) ++setups;
    if (e.op == OP_URING_REGISTER) ++registers;
    if (e.op < OP_URING_READ || e.op > OP_URING_STATX) continue;
    EXPECT_EQ(e.flags & FLAG_INCOMPLETE, 0u);
    EXPECT_GE(e.end_ns, e.start_ns);
    recorded.push_back({e.op, e.name, e.HasOffset() ? e.offset : -1, e.requested, e.result, e.aux});
  }
  EXPECT_EQ(recorded, expected);
  EXPECT_EQ(setups, 1);     // io_uring_queue_init
  EXPECT_EQ(registers, 1);  // io_uring_register_files
  // Five submit_and_wait calls, and a submit and a wait per later request
  // (a wait finds its completion ready in the queue without a call: not an
  // event, unless the kernel had not posted it yet).
  EXPECT_GE(enters, 5 + 4);

  // The report: the program's 24 requests, the bytes they moved, every
  // completion seen, nothing unseen.
  uint64_t read_bytes = 8192;  // the readv
  for (int round = 0; round < 5; ++round) read_bytes += 4096 + 8192 + 12288 + 8192;
  ReportOutputs report = ReportOf(trace);
  const report::UringRequests& u = report.json.io_uring();
  EXPECT_EQ(u.calls(), enters);
  EXPECT_EQ(u.requests(), 24);
  EXPECT_EQ(u.reads(), 21);
  EXPECT_EQ(u.read_bytes(), static_cast<double>(read_bytes));
  EXPECT_EQ(u.writes(), 1);
  EXPECT_EQ(u.write_bytes(), 1000);
  EXPECT_EQ(u.other(), 2);
  EXPECT_EQ(u.failed(), 0);
  EXPECT_EQ(u.incomplete(), 0);
  EXPECT_EQ(u.unseen_requests(), 0);
  EXPECT_EQ(u.caveats_size(), 0);
  EXPECT_EQ(u.file_count(), 2);
  // The files' rows split their reads and writes by unit.
  for (const report::File& f : report.json.files()) {
    if (f.path() == data) {
      EXPECT_EQ(f.uring_reads(), 21);
      EXPECT_EQ(f.mapped_faults(), 0);
      EXPECT_TRUE(Says(report.text, absl::StrCat(static_cast<int64_t>(f.reads()) - 21,
                                                 " calls, 21 requests,")) ||
                  (f.reads() == 21 && Says(report.text, " read in      21 requests,")))
          << report.text;
    }
    if (f.path() == out) {
      EXPECT_EQ(f.uring_writes(), 1);
    }
  }
  const report::Layer* layer = LayerNamed(report.json, "URING");
  ASSERT_NE(layer, nullptr);
  EXPECT_EQ(layer->unit(), "requests");
  EXPECT_EQ(layer->reads(), 21);
  EXPECT_EQ(layer->read_bytes(), static_cast<double>(read_bytes));
  EXPECT_TRUE(Says(report.text,
                   absl::StrCat("io_uring requests (24, in ", enters, " calls into the kernel)")))
      << report.text;
  EXPECT_TRUE(Says(report.text, "  URING            24 requests,        21 reads")) << report.text;
  EXPECT_TRUE(Says(report.text, "0 without a completion seen")) << report.text;
}

// The shim opens each thread's perf events and closes the descriptors once
// their buffers are mapped (interpose/README.md, "Page-fault samples"): the
// job's descriptor numbers are those of an untraced run, before and after
// the events of the main thread, of a thread started later, of a forked
// child, and after the job closed every descriptor.
TEST(MappedReadsTest, DescriptorNumbersAreThoseOfAnUntracedRun) {
  TempDir dir;
  std::string data = dir.Sub("data.bin");
  WriteFile(data, std::string(kFileBytes, 'x'));
  std::string trace = dir.Sub("trace");
  RunResult traced = RunPreloaded({TestProgram("mapped_fds"), data}, trace);
  RunResult plain = RunProgram({TestProgram("mapped_fds"), data});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, plain.out);
  // (The first numbers depend on what the test runner left open; after
  // close_range, none does.)
  EXPECT_NE(plain.out.find("after close_range open 3\n"), std::string::npos) << plain.out;

  // The shim did sample there: faults of the main thread, of the other
  // thread and of the child, each in the data file.
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 2u);
  std::map<std::pair<int, uint32_t>, int> faults;  // (pid, tid) -> mapped reads
  std::string seen;  // what each process's sampler said, should one be missing
  for (const LoadedProcess& p : run.processes) {
    for (const LoadedEvent* e : p.On(data, OP_MAPPED_READ)) ++faults[{p.header.pid(), e->tid}];
    for (const Packet& packet : p.packets) {
      if (!packet.has_fault_sampling()) continue;
      const FaultSampling& f = packet.fault_sampling();
      absl::StrAppend(&seen, "pid ", p.header.pid(), ": mode ", f.source(), " threads ",
                      f.threads_sampled(), " lost ", f.lost_faults(), " ", f.note(), "\n");
    }
  }
  for (const auto& [who, n] : faults) {
    absl::StrAppend(&seen, "pid ", who.first, " tid ", who.second, ": ", n, " faults\n");
  }
  EXPECT_EQ(faults.size(), 3u) << seen << traced.err;
}

// A forked child that reads the mapping it inherited, after a storm of
// copy-on-write faults that fills its sample buffer many times over, and
// records no call before: its writer thread must be draining the buffers
// already (started with the child's events, not with its first recorded
// call, which comes after the reads). Every window once, in the child.
TEST(MappedReadsTest, ForkedChildReadingOnlyThroughItsMappingHasEveryFault) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  RunResult r = RunPreloaded({TestProgram("mapped_child"), data}, trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseReader(r.out).sum, ExpectedSum()) << r.out;
  EXPECT_NE(r.out.find("child status 0\n"), std::string::npos) << r.out;
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 2u);
  std::map<uint64_t, int> by_offset;
  for (const LoadedProcess& p : run.processes) {
    std::vector<const LoadedEvent*> faults = p.On(data, OP_MAPPED_READ);
    if (run.ByPid(p.header.ppid()) != nullptr) {  // the child
      for (const LoadedEvent* e : faults) ++by_offset[e->aux];
    } else {
      EXPECT_TRUE(faults.empty()) << "the parent read nothing";
    }
  }
  EXPECT_EQ(by_offset.size(), static_cast<size_t>(kFileBytes / kWindow));
  for (int i = 0; i < kFileBytes; i += kWindow) EXPECT_EQ(by_offset[i], 1) << "offset " << i;
}

// A data file mapped by a raw mmap system call, which no wrapper sees,
// while a mapping made through libc keeps sampling on: its faults miss the
// shim's table, and the writer finds the mapping from the kernel, by asking
// about the one address (PROCMAP_QUERY) or, as on a kernel before 6.11, by
// reading the whole of /proc/self/maps. Either way every window is one
// fault of that file, at its offset. `late`: the program first faults in
// anonymous memory and waits, so that the writer has read the whole list
// before the raw mapping is made; the list is read again within the second
// for the new mapping's faults (before, they were all dropped, as in a run
// of the first case in 2026-12-07's suite).
void CheckRawMapping(bool ask_kernel, bool late) {
  TempDir dir;
  std::string raw = ColdFile(dir);
  std::string seen = dir.Sub("seen.bin");
  WriteFile(seen, std::string(4096, 's'));
  std::string trace = dir.Sub("trace");
  RunOptions options;
  if (!ask_kernel) options.env["IOTAP_TEST_NO_MAPS_QUERY"] = "1";
  std::vector<std::string> argv = {TestProgram("mapped_raw"), seen, raw};
  if (late) argv.push_back("late");
  RunResult r = RunPreloaded(argv, trace, options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseReader(r.out).sum, ExpectedSum()) << r.out;
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  std::map<uint64_t, int> by_offset;
  for (const LoadedEvent* e : run.processes[0].On(raw, OP_MAPPED_READ)) ++by_offset[e->aux];
  EXPECT_EQ(by_offset.size(), static_cast<size_t>(kFileBytes / kWindow));
  for (int i = 0; i < kFileBytes; i += kWindow) EXPECT_EQ(by_offset[i], 1) << "offset " << i;
}

class RawMappingTest : public ::testing::TestWithParam<bool> {};

TEST_P(RawMappingTest, FaultsOfAMappingNoWrapperSawAreItsFiles) {
  CheckRawMapping(GetParam(), /*late=*/false);
}

INSTANTIATE_TEST_SUITE_P(Lookups, RawMappingTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "AskingTheKernel" : "ReadingProcMaps";
                         });

TEST(MappedReadsTest, ARawMappingMadeAfterTheWholeListWasReadIsFoundWithinTheSecond) {
  CheckRawMapping(/*ask_kernel=*/false, /*late=*/true);
}

// Every window of a cold file a major fault (MADV_RANDOM: no readahead),
// 128 in a row within one poll of the writer, some of them begun and not
// yet completed when it drains. Each is one event with its time, as many
// majors as the thread counted. Two faults broke this: a drain's clock was
// read before it emptied the buffers, so a fault begun since seemed held for
// ages and was written at once as a minor fault, its major sample later
// alone (two faults of one window, in some 3% of runs of the test above);
// and the major buffer held 127 samples, so the 128th fault came out minor,
// without its time, in every run.
TEST(MappedReadsTest, EveryMajorFaultIsOneEventWithItsDuration) {
  for (int run = 0; run < 5; ++run) {
    SCOPED_TRACE(run);
    TempDir dir;
    std::string raw = ColdFile(dir);
    std::string seen = dir.Sub("seen.bin");
    WriteFile(seen, std::string(4096, 's'));
    std::string trace = dir.Sub("trace");
    RunResult r = RunPreloaded({TestProgram("mapped_raw"), seen, raw, "random"}, trace);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    Printed p = ParseReader(r.out);
    EXPECT_EQ(p.sum, ExpectedSum()) << r.out;
    LoadedRun run_trace = LoadRun(trace);
    ASSERT_EQ(run_trace.processes.size(), 1u);
    std::map<uint64_t, int> by_offset;
    long majors = 0;
    for (const LoadedEvent* e : run_trace.processes[0].On(raw, OP_MAPPED_READ)) {
      ++by_offset[e->aux];
      if (e->flags & FLAG_MAJOR_FAULT) {
        ++majors;
        EXPECT_GT(e->end_ns, e->start_ns) << "offset " << e->aux;
      }
    }
    EXPECT_EQ(by_offset.size(), static_cast<size_t>(kFileBytes / kWindow));
    for (int i = 0; i < kFileBytes; i += kWindow) EXPECT_EQ(by_offset[i], 1) << "offset " << i;
    EXPECT_EQ(majors, p.major) << r.out;
    EXPECT_GE(p.major, kFileBytes / kWindow / 2) << r.out;  // the file was cold
  }
}

// Each window's read comes right after a burst of 2,048 anonymous faults
// within a few milliseconds (programs/mapped_storm.c), as a DataLoader
// worker's after it collates a batch: a thread's first begin buffer (1,024
// samples) overflowed on such bursts, and the kernel dropped samples, data
// faults among them. The mapping thread's buffer is opened larger, and a
// thread started later has its buffer grown once a drain finds it a quarter
// full (the
// two buffers sample together for a moment: no fault may come out twice);
// a writer already running is woken when sampling begins (it slept up to
// 100 ms, and half the windows' faults were lost in a buffer full long
// before its first drain). No sample is lost, and every window is one fault
// of the file.
class FaultBurstTest : public ::testing::TestWithParam<bool> {};

TEST_P(FaultBurstTest, BurstsOfAnonymousFaultsLoseNoSample) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  std::vector<std::string> argv = {TestProgram("mapped_storm"), data};
  if (GetParam()) argv.push_back("thread");
  RunResult r = RunPreloaded(argv, trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseReader(r.out).sum, ExpectedSum()) << r.out;
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& proc = run.processes[0];
  std::map<uint64_t, int> by_offset;
  for (const LoadedEvent* e : proc.On(data, OP_MAPPED_READ)) ++by_offset[e->aux];
  EXPECT_EQ(by_offset.size(), static_cast<size_t>(kFileBytes / kWindow));
  for (int i = 0; i < kFileBytes; i += kWindow) EXPECT_EQ(by_offset[i], 1) << "offset " << i;
  int statuses = 0;
  for (const Packet& packet : proc.packets) {
    if (!packet.has_fault_sampling()) continue;
    ++statuses;
    EXPECT_EQ(packet.fault_sampling().source(), FaultSampling::SOURCE_PERF_SAMPLES);
    EXPECT_EQ(packet.fault_sampling().lost_faults(), 0u);
  }
  EXPECT_GE(statuses, 1);
  EXPECT_EQ(ReportOf(trace).json.mapped_reads().lost_faults(), 0);
}

INSTANTIATE_TEST_SUITE_P(Readers, FaultBurstTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "ALaterThread" : "TheMappingThread";
                         });

// A file mapped, read page by page and unmapped, round after round: the
// mappings come and go at the same addresses while their faults wait to be
// written, and a drain may learn a new mapping in the middle of placing its
// faults. The job runs as untraced, and every fault written lies in the
// mapping it was placed in, its span holding it.
TEST(MappedReadsTest, MappingsReplacedRoundAfterRoundKeepTheirFaults) {
  TempDir dir;
  std::string data = dir.Sub("data.bin");
  constexpr int kRounds = 64;
  WriteFile(data, std::string(kFileBytes, 'y'));
  std::string trace = dir.Sub("trace");
  RunResult traced =
      RunPreloaded({TestProgram("fault_worker"), data, std::to_string(kRounds)}, trace);
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_NE(traced.out.find("\nsum " +
                            std::to_string(uint64_t{'y'} * kRounds * (kFileBytes / 4096)) + "\n"),
            std::string::npos)
      << traced.out;
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  std::vector<const LoadedEvent*> faults = run.processes[0].On(data, OP_MAPPED_READ);
  EXPECT_FALSE(faults.empty());
  for (const LoadedEvent* e : faults) {
    ASSERT_LT(e->aux, static_cast<uint64_t>(kFileBytes));
    ASSERT_EQ(e->aux % 4096, 0u);
    ASSERT_LE(e->offset, static_cast<int64_t>(e->aux));
    if ((e->flags & FLAG_INCOMPLETE) == 0 && e->result > 0) {
      ASSERT_GT(e->offset + e->result, static_cast<int64_t>(e->aux));
    }
    ASSERT_LE(e->offset + e->result, kFileBytes);
  }
}

// fio's job runs in a child process; its events are in that trace.
std::vector<const LoadedEvent*> AllEvents(const LoadedRun& run, Op op) {
  std::vector<const LoadedEvent*> out;
  for (const LoadedProcess& p : run.processes) {
    for (const LoadedEvent& e : p.events) {
      if (e.op == op) out.push_back(&e);
    }
  }
  return out;
}

TEST(FioTest, MmapEngineReadsAreFaultsCoveringTheFile) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  RunResult r = RunPreloaded({"fio", "--name=m", "--ioengine=mmap", "--filename=" + data,
                              "--rw=read", "--bs=64k", "--size=8M", "--output=/dev/null"},
                             trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(trace);
  uint64_t span = 0, faults = 0, estimated = 0;
  std::map<uint64_t, int> pages;
  for (const LoadedEvent* e : AllEvents(run, OP_MAPPED_READ)) {
    if (e->name != data) continue;
    ++faults;
    if (e->flags & FLAG_INCOMPLETE) ++estimated;
    span += static_cast<uint64_t>(e->result);
    ++pages[e->aux / 4096];
  }
  // fio copies each 64 KiB block whole: every byte is touched once, so the
  // spans cover the file, and no page is given to two faults, however the
  // writer's looks at the page tables fall among the faults: the spans add
  // up to the file exactly. A fault whose page the shim found not yet mapped
  // (a loaded machine) is given the nominal fault-around window instead
  // (FLAG_INCOMPLETE), which may overlap a measured span: at most one window
  // per such fault more.
  EXPECT_GE(faults, static_cast<uint64_t>(kFileBytes / kWindow));
  EXPECT_GE(span, static_cast<uint64_t>(kFileBytes));
  EXPECT_LE(span, static_cast<uint64_t>(kFileBytes) + estimated * kWindow)
      << faults << " faults, " << estimated << " estimated";
  for (const auto& [page, n] : pages) EXPECT_EQ(n, 1) << "page " << page;

  // The report's figures of the file are the trace's, within the same bounds.
  ReportOutputs report = ReportOf(trace);
  const report::MappedReads& m = report.json.mapped_reads();
  const report::MappedFile* file = nullptr;
  for (const report::MappedFile& f : m.files()) {
    if (f.path() == data) file = &f;
  }
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->faults(), static_cast<double>(faults));
  EXPECT_EQ(file->span_bytes(), static_cast<double>(span));
  EXPECT_EQ(file->estimated_spans(), static_cast<double>(estimated));
  EXPECT_EQ(file->touched_bytes(), static_cast<double>(faults) * 4096);
  EXPECT_EQ(m.source(), "perf samples");
  EXPECT_TRUE(Says(report.text, "re-reads of pages already mapped")) << report.text;
}

TEST(FioTest, IoUringEngineRequestsAreCountedAsTheRingGoes) {
  TempDir dir;
  std::string data = ColdFile(dir);
  std::string trace = dir.Sub("trace");
  RunResult r =
      RunPreloaded({"fio", "--name=u", "--ioengine=io_uring", "--filename=" + data, "--rw=randread",
                    "--bs=4k", "--size=8M", "--io_size=1M", "--iodepth=8", "--output=/dev/null"},
                   trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(trace);
  EXPECT_EQ(AllEvents(run, OP_URING_SETUP).size(), 1u);
  uint64_t unseen = 0, completions = 0;
  for (const LoadedEvent* e : AllEvents(run, OP_URING_ENTER)) {
    if ((e->flags & FLAG_INCOMPLETE) == 0) continue;
    EXPECT_EQ(e->name, "anon_inode:[io_uring]");
    unseen += e->requested;
    completions += static_cast<uint64_t>(e->result);
  }
  // 1 MiB in 4 KiB reads.
  EXPECT_EQ(unseen, 256u);
  EXPECT_EQ(completions, 256u);
  EXPECT_TRUE(AllEvents(run, OP_URING_READ).empty());

  // The report counts them apart and says why nothing more is known, rather
  // than inventing files or sizes.
  ReportOutputs report = ReportOf(trace);
  const report::UringRequests& u = report.json.io_uring();
  EXPECT_EQ(u.unseen_requests(), 256);
  EXPECT_EQ(u.requests(), 0);
  EXPECT_EQ(u.read_bytes(), 0);
  EXPECT_EQ(u.files_size(), 0);
  ASSERT_EQ(u.caveats_size(), 1);
  EXPECT_TRUE(Says(u.caveats(0),
                   "256 requests were submitted by system calls the tracer cannot "
                   "see"))
      << u.caveats(0);
  EXPECT_TRUE(Says(report.text,
                   "  - 256 requests were submitted by system calls the tracer "
                   "cannot see"))
      << report.text;
}

}  // namespace
}  // namespace iotap::testing
