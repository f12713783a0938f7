// The HDF5 layer on unmodified C programs: every wrapped function, called by
// hdf5_calls, gives the event it must (op, dataset, logical bytes, elements,
// nesting); datasets are described exactly; every POSIX call on the file is
// attributed to the outermost HDF5 call it happened in, and the counts equal
// strace's; Debian's h5dump is traced as it is.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

struct Expected {
  Op op;
  std::string dataset;  // "" = the file's path, "-" = none (file 0)
  uint64_t requested;
  int64_t result;       // kHid = an identifier (> 0)
  bool nested = false;
};
constexpr int64_t kHid = -100;

class Hdf5Test : public ::testing::Test {
 protected:
  void SetUp() override { file_ = dir_.Sub("calls.h5"); }

  // The process's HDF5 events, in the order recorded.
  static std::vector<const LoadedEvent*> Hdf5Events(const LoadedProcess& p) {
    std::vector<const LoadedEvent*> out;
    for (const LoadedEvent& e : p.events) {
      if (e.op >= OP_H5F_CREATE && e.op <= OP_H5D_WRITE_CHUNK) out.push_back(&e);
    }
    return out;
  }

  // Each POSIX event on the file made during an outermost HDF5 call carries
  // that call's id, and no other does; with `all`, every one was made during
  // one. Returns how many carry an id.
  static int ExpectPosixAttribution(const LoadedProcess& p, const std::string& file, bool all) {
    std::vector<const LoadedEvent*> outermost;
    for (const LoadedEvent* h : Hdf5Events(p)) {
      if (h->parent == 0) outermost.push_back(h);
    }
    int attributed = 0;
    for (const LoadedEvent& e : p.events) {
      if (e.name != file || e.op >= OP_H5F_CREATE) continue;
      const LoadedEvent* during = nullptr;
      for (const LoadedEvent* h : outermost) {
        if (h->tid == e.tid && h->start_ns <= e.start_ns && e.end_ns <= h->end_ns) during = h;
      }
      SCOPED_TRACE(::testing::Message() << analyzer::OpName(e.op) << " at " << e.start_ns);
      if (all) {
        EXPECT_NE(during, nullptr);
      }
      EXPECT_EQ(e.parent, during == nullptr ? 0 : during->aux);
      attributed += e.parent != 0;
    }
    return attributed;
  }

  // Bytes read by POSIX calls beneath the HDF5 call with id `id`.
  static uint64_t BytesReadBeneath(const LoadedProcess& p, uint64_t id) {
    uint64_t n = 0;
    for (const LoadedEvent& e : p.events) {
      if (e.parent == id && analyzer::TransferOf(e.op) == analyzer::Transfer::kRead) {
        n += analyzer::BytesMoved(e);
      }
    }
    return n;
  }

  TempDir dir_;
  std::string file_;
};

TEST_F(Hdf5Test, EveryWrappedCallGivesItsEvent) {
  RunResult r = RunPreloaded({TestProgram("hdf5_calls"), file_}, dir_.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  const std::string c = file_ + ":/contig", k = file_ + ":/chunked", n = file_ + ":/nested";
  const std::vector<Expected> expected = {
      {OP_H5F_CREATE, "", 2 /* H5F_ACC_TRUNC */, kHid},
      {OP_H5D_CREATE, c, 0, kHid},
      {OP_H5D_WRITE, c, 4000, 1000},
      {OP_H5D_CREATE, k, 0, kHid},
      {OP_H5D_WRITE, k, 2000, 500},
      {OP_H5D_WRITE_CHUNK, k, 400, 0},
      {OP_H5F_FLUSH, "", 1 /* H5F_SCOPE_GLOBAL */, 0},
      {OP_H5D_CLOSE, k, 0, 0},
      {OP_H5D_CLOSE, c, 0, 0},
      {OP_H5F_CLOSE, "", 0, 0},
      {OP_H5F_OPEN, "", 0 /* H5F_ACC_RDONLY */, kHid},
      {OP_H5D_OPEN, c, 0, kHid},
      {OP_H5D_READ, c, 120, 30},
      {OP_H5O_OPEN, k, 0, kHid},
      {OP_H5D_READ, k, 4000, 1000},
      {OP_H5D_READ_CHUNK, k, 400, 0},
      {OP_H5O_OPEN, "-", 0, kHid},  // the root group: not a dataset
      {OP_H5O_CLOSE, "-", 0, 0},
      {OP_H5O_CLOSE, k, 0, 0},
      {OP_H5D_OPEN, "-", 0, -1},    // "/missing"
      {OP_H5D_READ, "-", 0, -1},    // a closed identifier
      {OP_H5D_CLOSE, c, 0, 0},
      {OP_H5F_CLOSE, "", 0, 0},
      {OP_H5F_OPEN, "", 1 /* H5F_ACC_RDWR */, kHid},
      {OP_H5D_CREATE, n, 0, kHid},
      {OP_H5D_WRITE, n, 4000, 1000},
      {OP_H5D_CLOSE, n, 0, 0},
      {OP_H5D_OPEN, c, 0, kHid},
      {OP_H5D_OPEN, n, 0, kHid},
      {OP_H5D_READ, c, 40, 10, /*nested=*/true},  // from the filter, recorded first
      {OP_H5D_READ, n, 400, 100},
      {OP_H5D_CLOSE, n, 0, 0},
      {OP_H5D_CLOSE, c, 0, 0},
      {OP_H5F_CLOSE, "", 0, 0},
  };
  std::vector<const LoadedEvent*> got = Hdf5Events(run.processes[0]);
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    const LoadedEvent& e = *got[i];
    const Expected& x = expected[i];
    SCOPED_TRACE(::testing::Message() << "event " << i << " " << analyzer::OpName(x.op));
    EXPECT_EQ(e.op, x.op);
    EXPECT_EQ(e.name, x.dataset.empty() ? file_ : x.dataset == "-" ? "" : x.dataset);
    EXPECT_EQ(e.requested, x.requested);
    if (x.result == kHid) {
      EXPECT_GT(e.result, 0);
    } else {
      EXPECT_EQ(e.result, x.result);
    }
    EXPECT_NE(e.aux, 0u);
    if (x.nested) {
      ASSERT_LT(i + 1, got.size());
      EXPECT_EQ(e.parent, got[i + 1]->aux);
    } else {
      EXPECT_EQ(e.parent, 0u);
    }
  }
  // hdf5_calls touches the file only through HDF5.
  EXPECT_GT(ExpectPosixAttribution(run.processes[0], file_, /*all=*/true), 0);
  // The contiguous dataset's three rows are 120 bytes of one sieve read.
  EXPECT_GE(BytesReadBeneath(run.processes[0], got[12]->aux), 120u);
}

TEST_F(Hdf5Test, DatasetsAreDescribedOnce) {
  RunResult r = RunPreloaded({TestProgram("hdf5_calls"), file_}, dir_.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  std::vector<Hdf5Dataset> described;
  for (const Packet& p : run.processes[0].packets) {
    if (p.has_hdf5_dataset()) described.push_back(p.hdf5_dataset());
  }
  ASSERT_EQ(described.size(), 3u);  // contig, chunked, nested: each once
  for (const Hdf5Dataset& d : described) {
    EXPECT_EQ(d.element_size(), 4u);
    EXPECT_EQ(d.type_class(), "integer");
    ASSERT_EQ(d.dims_size(), 2);
    EXPECT_EQ(d.dims(0), 100u);
    EXPECT_EQ(d.dims(1), 10u);
  }
  EXPECT_EQ(described[0].name(), "/contig");
  EXPECT_EQ(described[0].layout(), Hdf5Dataset::LAYOUT_CONTIGUOUS);
  EXPECT_EQ(described[0].chunk_dims_size(), 0);
  EXPECT_EQ(described[1].name(), "/chunked");
  EXPECT_EQ(described[1].layout(), Hdf5Dataset::LAYOUT_CHUNKED);
  ASSERT_EQ(described[1].chunk_dims_size(), 2);
  EXPECT_EQ(described[1].chunk_dims(0), 10u);
  EXPECT_EQ(described[1].chunk_dims(1), 10u);
  ASSERT_EQ(described[1].filter_size(), 1);
  EXPECT_EQ(described[1].filter(0).id(), 1);  // H5Z_FILTER_DEFLATE
  EXPECT_EQ(described[2].name(), "/nested");
  ASSERT_EQ(described[2].filter_size(), 1);
  EXPECT_EQ(described[2].filter(0).id(), 300);
  EXPECT_EQ(described[2].filter(0).name(), "nesting");
}

TEST_F(Hdf5Test, DumpShowsDescriptionsCallIdsAndParents) {
  RunResult r = RunPreloaded({TestProgram("hdf5_calls"), file_}, dir_.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  RunResult dump = RunProgram({IotapBinary(), "dump", dir_.Sub("trace")});
  ASSERT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("# dataset " + file_ + ":/chunked: integer, 4 B elements, dims 100x10,"
                          " layout chunked, chunks 10x10, filters deflate(1)\n"),
            std::string::npos)
      << dump.out;
  // The nested H5Dread names its enclosing call; POSIX reads name theirs.
  size_t nested = dump.out.find(file_ + ":/contig [call ");
  EXPECT_NE(nested, std::string::npos);
  EXPECT_NE(dump.out.find("] [in call "), std::string::npos);
  EXPECT_NE(dump.out.find(" H5Dread_chunk "), std::string::npos);
}

TEST_F(Hdf5Test, ErrorStackAfterAFailureIsLeftAlone) {
  RunResult plain = RunProgram({TestProgram("hdf5_calls"), dir_.Sub("plain.h5")});
  RunResult traced = RunPreloaded({TestProgram("hdf5_calls"), file_}, dir_.Sub("trace"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_NE(plain.out, "errors_after_failed_read 0\n");
  EXPECT_EQ(traced.out, plain.out);
  EXPECT_EQ(traced.err, "");
}

TEST_F(Hdf5Test, PosixCountsBeneathHdf5EqualStrace) {
  RunResult r = RunTracedUnderStrace({TestProgram("hdf5_calls"), file_}, dir_.Sub("trace"),
                                     dir_.Sub("strace.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  StraceFileCounts truth = ParseStrace(dir_.Sub("strace.log"))[file_];
  StatsSummary stats = StatsOf(dir_.Sub("trace"));
  EXPECT_EQ(stats.files[file_].reads, truth.reads);
  EXPECT_EQ(stats.files[file_].read_bytes, truth.read_bytes);
  EXPECT_EQ(stats.files[file_].writes, truth.writes);
  EXPECT_EQ(stats.files[file_].write_bytes, truth.write_bytes);
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  ExpectPosixAttribution(run.processes[0], file_, /*all=*/true);
  // So every read and write strace saw is beneath an HDF5 call.
  int reads = 0, writes = 0;
  for (const LoadedEvent& e : run.processes[0].events) {
    if (e.name != file_ || e.parent == 0) continue;
    reads += analyzer::TransferOf(e.op) == analyzer::Transfer::kRead;
    writes += analyzer::TransferOf(e.op) == analyzer::Transfer::kWrite;
  }
  EXPECT_EQ(reads, truth.reads);
  EXPECT_EQ(writes, truth.writes);
}

TEST_F(Hdf5Test, LayerOffMeansNoHdf5EventsAndNoParents) {
  RunOptions o;
  o.env["IOTAP_LAYERS"] = "posix";
  RunResult r = RunPreloaded({TestProgram("hdf5_calls"), file_}, dir_.Sub("trace"), o);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_TRUE(Hdf5Events(run.processes[0]).empty());
  int posix = 0;
  for (const LoadedEvent& e : run.processes[0].events) {
    EXPECT_EQ(e.parent, 0u);
    posix += e.name == file_;
  }
  EXPECT_GT(posix, 0);
}

TEST_F(Hdf5Test, H5dumpIsTracedUnmodified) {
  ASSERT_EQ(RunProgram({TestProgram("hdf5_calls"), file_}).exit_code, 0);
  RunResult r = RunTracedUnderStrace({"h5dump", "-d", "/contig", file_}, dir_.Sub("trace"),
                                     dir_.Sub("strace.log"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("DATASET \"/contig\""), std::string::npos);
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& p = run.processes[0];
  const std::string contig = file_ + ":/contig";
  EXPECT_EQ(p.On(file_, OP_H5F_OPEN).size(), 1u);
  EXPECT_EQ(p.On(file_, OP_H5F_CLOSE).size(), 1u);
  // h5dump 1.10 opens each dataset while it scans the file, then /contig
  // again to print it.
  EXPECT_EQ(p.On(contig, OP_H5D_OPEN).size(), 2u);
  EXPECT_EQ(p.On(contig, OP_H5D_CLOSE).size(), 2u);
  std::vector<const LoadedEvent*> reads = p.On(contig, OP_H5D_READ);
  ASSERT_EQ(reads.size(), 1u);  // 1000 elements fit h5dump's buffer: one H5Dread
  EXPECT_EQ(reads[0]->requested, 4000u);
  EXPECT_EQ(reads[0]->result, 1000);
  // Beneath it, the dataset's 4000 bytes and nothing else.
  EXPECT_EQ(BytesReadBeneath(p, reads[0]->aux), 4000u);
  // h5dump also reads metadata through calls the layer does not wrap
  // (H5Literate, H5Oget_info): those reads carry no id.
  ExpectPosixAttribution(p, file_, /*all=*/false);
  StraceFileCounts truth = ParseStrace(dir_.Sub("strace.log"))[file_];
  StatsSummary stats = StatsOf(dir_.Sub("trace"));
  EXPECT_EQ(stats.files[file_].reads, truth.reads);
  EXPECT_EQ(stats.files[file_].read_bytes, truth.read_bytes);
}

}  // namespace
}  // namespace iotap::testing
