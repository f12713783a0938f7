// Ground truth for Python programs: /usr/bin/python3 reads data files the
// ways Python code does (programs/python_reads.py: open().read(), readinto,
// os.pread, os.readv, os.preadv, threads sharing a descriptor,
// numpy.fromfile), under strace -f and iotap in the same run. For
// every data file, the reads, bytes read and opens in `iotap stats --json`
// equal what strace saw, and the bytes equal the file's size.

#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

struct DataFile {
  std::string name;
  size_t size;
  int reads;  // read system calls the script's access pattern makes
};

// The files of 300,007 bytes end mid-block, so every reader's last transfer
// is a short one and its end-of-file probe returns 0.
//
// numpy.fromfile hands the file to glibc's stdio (dup, fdopen, fread), which
// reaches the kernel through internal calls no wrapper sees; iotap records the
// one fread instead (see proto/iotap/stats.proto). That equals strace's count only
// where fread makes exactly one read(2): glibc reads a request of at least a
// buffer (st_blksize, 4096 here) straight into the caller's memory, rounded
// down to whole buffers, and fetches the remainder through its buffer with a
// second read. A size that is a multiple of 4096 leaves no remainder, so one
// fread is one read of the whole file; fromfile knows the size beforehand
// (fseek/ftell), so it never asks past the end.
const std::vector<DataFile> kFiles = {
    // CPython's FileIO.readall: one read of the size fstat gave plus one byte,
    // which returns the whole file, and one more that returns 0.
    {"whole.bin", 300007, 2},
    // 64 KiB pieces: 4 full, 1 short (37,863 bytes), 1 at end of file.
    {"into.bin", 300007, 6},
    // 10,000-byte preads: 30 full, 1 of 7 bytes, 1 at end of file.
    {"pread.bin", 300007, 32},
    // readv of 15,000 bytes: 20 full, 1 of 7 bytes, 1 at end of file.
    {"readv.bin", 300007, 22},
    // preadv2 of 16,384 bytes: 18 full, 1 short, 1 at end of file.
    {"preadv.bin", 300007, 20},
    // Four threads, 10 preads of 10,000 bytes each; none past the end.
    {"threads.bin", 400000, 40},
    // One fread of 64 blocks of 4096 bytes: one read(2).
    {"numpy.bin", 64 * 4096, 1},
};

class PythonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_dir_ = dir_.Sub("data");
    ASSERT_EQ(RunProgram({"mkdir", data_dir_}).exit_code, 0);
    for (size_t i = 0; i < kFiles.size(); ++i) {
      std::string contents(kFiles[i].size, '\0');
      for (size_t k = 0; k < contents.size(); ++k) {
        contents[k] = static_cast<char>(k * 131 + i);
      }
      WriteFile(Path(kFiles[i]), contents);
    }
  }

  std::string Path(const DataFile& f) const { return data_dir_ + "/" + f.name; }

  TempDir dir_;
  std::string data_dir_;
};

TEST_F(PythonTest, ReadsMatchStrace) {
  std::string trace = dir_.Sub("trace");
  std::string log = dir_.Sub("strace.log");
  RunResult r = RunTracedUnderStrace(
      {Python(), SourcePath("tests/integration/programs/python_reads.py"), data_dir_}, trace, log);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The script saw every byte of every file.
  EXPECT_EQ(r.out,
            "whole 300007\ninto 300007\npread 300007\nreadv 300007\npreadv 300007\n"
            "threads 400000\nnumpy 262144\n");

  auto strace = ParseStrace(log);
  StatsSummary stats = StatsOf(trace);
  EXPECT_EQ(stats.processes, 1);
  EXPECT_EQ(stats.dropped_events, 0u);
  for (const DataFile& f : kFiles) {
    SCOPED_TRACE(f.name);
    const StraceFileCounts& truth = strace[Path(f)];
    const StatsFileCounts& seen = stats.files[Path(f)];
    EXPECT_EQ(seen.reads, truth.reads);
    EXPECT_EQ(seen.read_bytes, truth.read_bytes);
    EXPECT_EQ(seen.opens, truth.opens);
    EXPECT_EQ(seen.read_bytes, f.size);
    EXPECT_EQ(seen.opens, 1);
    EXPECT_EQ(seen.writes, 0);
    EXPECT_EQ(seen.reads, f.reads);
  }
}

// The same reads with each kind of call seen in the trace itself: the numpy
// file through one fread on a stream whose descriptor is a dup of the one
// Python opened, the others through read, pread, readv and preadv on
// Python's descriptor, the shared descriptor's reads on four threads.
TEST_F(PythonTest, ReadsAreAttributedToTheRightCalls) {
  std::string trace = dir_.Sub("trace");
  RunResult r = RunTraced(
      {Python(), SourcePath("tests/integration/programs/python_reads.py"), data_dir_}, trace);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_TRUE(run.issues.empty());
  const LoadedProcess& p = run.processes[0];
  ASSERT_TRUE(p.end.has_value());
  EXPECT_EQ(p.end->reason(), EndOfTrace::REASON_EXIT);
  EXPECT_EQ(p.end->exit_code(), 0);

  auto path = [](const std::string& name) {
    for (const DataFile& f : kFiles) {
      if (f.name == name) return f;
    }
    ADD_FAILURE() << name;
    return DataFile{};
  };
  EXPECT_EQ(p.On(Path(path("into.bin")), OP_READ).size(), 6u);
  EXPECT_EQ(p.On(Path(path("pread.bin")), OP_PREAD).size(), 32u);
  std::vector<const LoadedEvent*> readv = p.On(Path(path("readv.bin")), OP_READV);
  ASSERT_EQ(readv.size(), 22u);
  EXPECT_EQ(readv[0]->aux, 3u);  // buffers
  EXPECT_EQ(readv[0]->requested, 15000u);
  // CPython's os.preadv calls preadv2 (flags 0) wherever glibc has it.
  EXPECT_EQ(p.On(Path(path("preadv.bin")), OP_PREADV2).size(), 20u);
  std::map<uint32_t, int> per_thread;
  for (const LoadedEvent* e : p.On(Path(path("threads.bin")), OP_PREAD)) ++per_thread[e->tid];
  EXPECT_EQ(per_thread.size(), 4u);
  for (const auto& [tid, n] : per_thread) EXPECT_EQ(n, 10) << "thread " << tid;
  const std::string numpy = Path(path("numpy.bin"));
  std::vector<const LoadedEvent*> freads = p.On(numpy, OP_FREAD);
  ASSERT_EQ(freads.size(), 1u);
  EXPECT_EQ(freads[0]->result, 262144);
  EXPECT_EQ(p.On(numpy, OP_READ).size(), 0u);
  EXPECT_EQ(p.On(numpy, OP_FDOPEN).size(), 1u);
  // pread offsets follow the script: 0, 10000, ..., 300000, then 300007.
  std::vector<const LoadedEvent*> preads = p.On(Path(path("pread.bin")), OP_PREAD);
  for (size_t i = 0; i < preads.size(); ++i) {
    EXPECT_EQ(preads[i]->offset, i < 31 ? static_cast<int64_t>(i * 10000) : 300007) << i;
  }
}

// One descriptor read by forked children (programs/python_fork_reads.py):
// each child has its own trace holding its own reads and none of the events
// its parent still had buffered when it forked, on either of its threads.
TEST_F(PythonTest, ForkedChildrenReadAnInheritedDescriptor) {
  const std::string shared = data_dir_ + "/shared.bin";
  const std::string before = data_dir_ + "/before.bin";
  const std::string thread = data_dir_ + "/thread.bin";
  WriteFile(shared, std::string(4096 + 2 * 100000, 's'));
  WriteFile(before, std::string(100000, 'b'));
  WriteFile(thread, std::string(100000, 't'));
  std::string trace = dir_.Sub("trace");
  std::string log = dir_.Sub("strace.log");
  RunResult r = RunTracedUnderStrace(
      {Python(), SourcePath("tests/integration/programs/python_fork_reads.py"), data_dir_}, trace,
      log);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "forked 2, read 4096\n");

  auto strace = ParseStrace(log);
  StatsSummary stats = StatsOf(trace);
  EXPECT_EQ(stats.processes, 3);
  EXPECT_EQ(stats.dropped_events, 0u);
  for (const std::string& path : {shared, before, thread}) {
    SCOPED_TRACE(path);
    EXPECT_EQ(stats.files[path].reads, strace[path].reads);
    EXPECT_EQ(stats.files[path].read_bytes, strace[path].read_bytes);
    EXPECT_EQ(stats.files[path].opens, strace[path].opens);
  }
  EXPECT_EQ(stats.files[shared].read_bytes, 4096u + 2 * 100000);

  LoadedRun run = LoadRun(trace);
  ASSERT_EQ(run.processes.size(), 3u);
  const LoadedProcess* parent = nullptr;
  for (const LoadedProcess& p : run.processes) {
    if (p.header.origin() != ProcessHeader::ORIGIN_FORK) parent = &p;
  }
  ASSERT_NE(parent, nullptr);
  EXPECT_EQ(parent->On(shared, OP_READ).size(), 1u);
  EXPECT_EQ(parent->On(shared, OP_PREAD).size(), 0u);
  EXPECT_EQ(parent->On(before, OP_READ).size(), 100u);
  EXPECT_EQ(parent->On(thread, OP_READ).size(), 100u);
  for (const LoadedProcess& child : run.processes) {
    if (&child == parent) continue;
    SCOPED_TRACE(child.trace_file);
    EXPECT_EQ(child.header.ppid(), parent->header.pid());
    EXPECT_EQ(child.On(shared, OP_PREAD).size(), 10u);
    EXPECT_EQ(child.On(shared, OP_READ).size(), 0u);
    EXPECT_EQ(child.On(before).size(), 0u);
    EXPECT_EQ(child.On(thread).size(), 0u);
    for (const LoadedEvent& e : child.events) {
      EXPECT_EQ(e.tid, static_cast<uint32_t>(child.header.pid())) << e.name;
    }
    ASSERT_TRUE(child.end.has_value());
    EXPECT_EQ(child.end->reason(), EndOfTrace::REASON_UNDERSCORE_EXIT);
    EXPECT_EQ(child.end->exit_code(), 0);
  }
}

}  // namespace
}  // namespace iotap::testing
