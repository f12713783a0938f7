// A privately loaded libhdf5, as h5py wheels load theirs: a renamed copy of
// the system library opened with RTLD_LOCAL, used by a module opened with
// RTLD_LOCAL. The shim cannot find HDF5 through RTLD_NEXT and must resolve
// the real functions in the copy; the calls are recorded as usual.

#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;

class Hdf5PrivateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The library the module was linked against, wherever the system keeps it.
    RunResult ldd = RunProgram({"ldd", Module()});
    size_t at = ldd.out.find("libhdf5_serial.so");
    ASSERT_NE(at, std::string::npos) << ldd.out;
    size_t from = ldd.out.find("=> ", at) + 3;
    std::string system_lib = ldd.out.substr(from, ldd.out.find(' ', from) - from);
    fs::create_directories(dir_.Sub("h5py.libs"));
    copy_ = dir_.Sub("h5py.libs/libhdf5-1a2b3c4d.so.103.3.1");
    fs::copy_file(fs::canonical(system_lib), copy_);
    soname_ = system_lib.substr(system_lib.rfind('/') + 1);
  }

  // Writes `from` to `to` with the NUL-terminated string `soname_` replaced
  // by a name of the same length, once: a second library with its own
  // soname, or a module that needs it (what patchelf would do).
  std::string Renamed(const std::string& from, const std::string& to) {
    std::string bytes = ReadFile(from);
    std::string old_name = soname_ + '\0';
    std::string new_name = old_name;
    new_name[new_name.size() - 3] = 'B';  // libhdf5_serial.so.103 -> .1B3
    size_t at = bytes.find(old_name);
    EXPECT_NE(at, std::string::npos) << from;
    if (at == std::string::npos) return "";
    EXPECT_EQ(bytes.find(old_name, at + 1), std::string::npos) << from;
    bytes.replace(at, old_name.size(), new_name);
    WriteFile(to, bytes);
    return to;
  }

  static std::string Module() { return std::string(IOTAP_BINARY_DIR) + "/lib/hdf5_extension.so"; }

  TempDir dir_;
  std::string copy_;
  std::string soname_;  // of the system library, as modules name it
};

TEST_F(Hdf5PrivateTest, CallsAreResolvedInTheRenamedCopy) {
  std::string data = dir_.Sub("x.h5");
  RunResult r =
      RunPreloaded({TestProgram("private_hdf5"), copy_, Module(), data}, dir_.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Only the copy is loaded, and nothing of it is global.
  EXPECT_EQ(r.out, "loaded " + copy_ + "\nglobal H5open no\nrun_hdf5 0\n");
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  const LoadedProcess& p = run.processes[0];
  const std::string x = data + ":/x";
  EXPECT_EQ(p.On(data, OP_H5F_CREATE).size(), 1u);
  EXPECT_EQ(p.On(x, OP_H5D_CREATE).size(), 1u);
  EXPECT_EQ(p.On(x, OP_H5D_CLOSE).size(), 1u);
  EXPECT_EQ(p.On(data, OP_H5F_OPEN).size(), 1u);
  EXPECT_EQ(p.On(x, OP_H5O_OPEN).size(), 1u);
  EXPECT_EQ(p.On(x, OP_H5O_CLOSE).size(), 1u);
  EXPECT_EQ(p.On(data, OP_H5F_CLOSE).size(), 2u);
  std::vector<const LoadedEvent*> writes = p.On(x, OP_H5D_WRITE);
  ASSERT_EQ(writes.size(), 1u);
  EXPECT_EQ(writes[0]->requested, 4000u);
  EXPECT_EQ(writes[0]->result, 1000);
  std::vector<const LoadedEvent*> reads = p.On(x, OP_H5D_READ);
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0]->requested, 200u);
  EXPECT_EQ(reads[0]->result, 50);
  // Rows 20-24 lie in the chunk of rows 20-29: the chunk index's B-tree
  // node (2616 bytes in HDF5 1.10's format) and that 400-byte chunk.
  uint64_t beneath = 0;
  int preads = 0;
  for (const LoadedEvent& e : p.events) {
    if (e.parent == reads[0]->aux && e.name == data && e.op == OP_PREAD) {
      ++preads;
      beneath += static_cast<uint64_t>(e.result);
    }
  }
  EXPECT_EQ(preads, 2);
  EXPECT_EQ(beneath, 2616u + 400u);
  // The dataset was described from the copy's functions too.
  int described = 0;
  for (const Packet& packet : p.packets) {
    if (!packet.has_hdf5_dataset()) continue;
    ++described;
    EXPECT_EQ(packet.hdf5_dataset().element_size(), 4u);
    EXPECT_EQ(packet.hdf5_dataset().layout(), Hdf5Dataset::LAYOUT_CHUNKED);
  }
  EXPECT_EQ(described, 1);
}

TEST_F(Hdf5PrivateTest, UntracedRunIsTheSame) {
  RunResult r = RunProgram({TestProgram("private_hdf5"), copy_, Module(), dir_.Sub("x.h5")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "loaded " + copy_ + "\nglobal H5open no\nrun_hdf5 0\n");
}

TEST_F(Hdf5PrivateTest, TwoLibrariesEachServeTheirOwnModule) {
  // A second copy of libhdf5 under another soname, and a module bound to it:
  // two HDF5 libraries in one process, as an h5py wheel and a PyTables wheel
  // bring. Each module's calls must reach its own library, whose
  // identifiers the other does not know.
  std::string copy_b = Renamed(copy_, dir_.Sub("h5py.libs/libhdf5-5e6f7a8b.so.103.3.1"));
  std::string module_b = Renamed(Module(), dir_.Sub("module_b.so"));
  ASSERT_FALSE(copy_b.empty() || module_b.empty());
  std::string a = dir_.Sub("a.h5"), b = dir_.Sub("b.h5");
  std::vector<std::string> argv = {TestProgram("private_hdf5"), copy_, Module(), a,
                                   copy_b, module_b, b};
  const std::string expected = "loaded " + copy_ + "\nloaded " + copy_b +
                               "\nglobal H5open no\nrun_hdf5 0\nrun_hdf5 0\n"
                               "open files: a 1 b 1\n";
  RunResult plain = RunProgram(argv);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(plain.out, expected);
  RunResult traced = RunPreloaded(argv, dir_.Sub("trace"));
  ASSERT_EQ(traced.exit_code, 0) << traced.err;
  EXPECT_EQ(traced.out, expected);
  LoadedRun run = LoadRun(dir_.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 1u);
  for (const std::string& file : {a, b}) {
    std::vector<const LoadedEvent*> reads = run.processes[0].On(file + ":/x", OP_H5D_READ);
    ASSERT_EQ(reads.size(), 1u) << file;
    EXPECT_EQ(reads[0]->requested, 200u);
    EXPECT_EQ(run.processes[0].On(file + ".kept", OP_H5F_CREATE).size(), 1u);
  }
}

}  // namespace
}  // namespace iotap::testing
