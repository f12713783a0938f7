// h5py training-style reads against strace: 10,000 samples of 40 KiB read in
// shuffled order, one dataset[i] each, from datasets stored with 2 KiB
// chunks, 64 KiB chunks and contiguously. For every H5Dread, iotap's logical
// bytes are the sample's 40,960 bytes, and the POSIX reads and bytes it
// attributes to that H5Dread equal those strace saw between the markers the
// reader issues around it. `iotap stats` then shows how each layout turns a
// sample into POSIX reads.

#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

constexpr int kSamples = 10000;
constexpr uint64_t kSampleBytes = 160 * 256;  // uint8

struct Reads {
  int count = 0;
  uint64_t bytes = 0;
  bool operator==(const Reads& o) const { return count == o.count && bytes == o.bytes; }
};

std::ostream& operator<<(std::ostream& os, const Reads& r) {
  return os << r.count << " reads of " << r.bytes << " bytes";
}

bool IsReadCall(const std::string& name) {
  return name == "read" || name == "pread64" || name == "readv" || name == "preadv" ||
         name == "preadv2";
}

// strace's reads of `file`, cut at the reader's markers: element k holds
// what happened between "sample-k" and the next marker.
std::vector<Reads> StracePerSample(const std::string& log, const std::string& file,
                                   const std::string& marker_dir) {
  std::vector<Reads> samples;
  bool in_sample = false;
  for (const StraceCall& c : ParseStraceCalls(log)) {
    if (c.args.size() > 1 && c.args[1].find(marker_dir + "/") != std::string::npos) {
      in_sample = c.args[1].find(marker_dir + "/sample-") != std::string::npos;
      if (in_sample) samples.emplace_back();
      continue;
    }
    if (in_sample && IsReadCall(c.name) && c.fd_path == file) {
      ++samples.back().count;
      if (c.result > 0) samples.back().bytes += static_cast<uint64_t>(c.result);
    }
  }
  return samples;
}

class H5pyTest : public ::testing::TestWithParam<const char*> {
 protected:
  TempDir dir_;
};

TEST_P(H5pyTest, EachH5DreadMatchesStrace) {
  const std::string layout = GetParam();
  const std::string file = dir_.Sub(layout + ".h5");
  const std::string script = SourcePath("tests/integration/programs/h5py_train.py");
  RunResult made = RunProgram({Python(), script, "create", file, layout, std::to_string(kSamples)});
  ASSERT_EQ(made.exit_code, 0) << made.err;

  const std::string markers = dir_.Sub("markers");
  RunResult r = RunTracedUnderStrace(
      {Python(), script, "read", file, "1", std::to_string(kSamples), markers}, dir_.Sub("trace"),
      dir_.Sub("strace.log"));
  ASSERT_EQ(r.exit_code, 0) << "signal " << r.signal << ": " << r.err;
  ASSERT_EQ(r.out, std::to_string(kSamples * kSampleBytes) + "\n");  // every sample checked

  std::vector<Reads> truth = StracePerSample(dir_.Sub("strace.log"), file, markers);
  ASSERT_EQ(truth.size(), static_cast<size_t>(kSamples));

  LoadedRun run = LoadRun(dir_.Sub("trace"));
  const LoadedProcess* reader = nullptr;
  for (const LoadedProcess& p : run.processes) {
    if (!p.On(file + ":/images", OP_H5D_READ).empty()) reader = &p;
  }
  ASSERT_NE(reader, nullptr);
  EXPECT_EQ(reader->dropped, 0u);
  std::vector<const LoadedEvent*> h5dreads = reader->On(file + ":/images", OP_H5D_READ);
  ASSERT_EQ(h5dreads.size(), static_cast<size_t>(kSamples));
  const int64_t chunk = layout == "chunk2k" ? 2048 : 65536;
  std::map<uint64_t, Reads> beneath;    // call id -> POSIX reads it caused
  std::map<uint64_t, int> chunk_reads;  // call id -> reads of one whole chunk
  for (const LoadedEvent& e : reader->events) {
    if (e.parent == 0 || e.name != file) continue;
    if (analyzer::TransferOf(e.op) != analyzer::Transfer::kRead) continue;
    ++beneath[e.parent].count;
    beneath[e.parent].bytes += analyzer::BytesMoved(e);
    chunk_reads[e.parent] += e.result == chunk;
  }
  Reads total;
  for (int k = 0; k < kSamples; ++k) {
    const LoadedEvent& h = *h5dreads[k];
    ASSERT_EQ(h.requested, kSampleBytes) << "sample " << k;
    ASSERT_EQ(h.result, static_cast<int64_t>(kSampleBytes)) << "sample " << k;  // 1-byte elements
    ASSERT_EQ(beneath[h.aux], truth[k]) << "sample " << k;
    total.count += truth[k].count;
    total.bytes += truth[k].bytes;
    // What each layout must do to one sample.
    if (layout == "chunk2k") {
      ASSERT_EQ(chunk_reads[h.aux], 20) << "sample " << k;  // 20 chunks, none cached before
    } else if (layout == "chunk64k") {
      ASSERT_LE(chunk_reads[h.aux], 5) << "sample " << k;  // 5 chunks, some still cached
    } else {
      ASSERT_EQ(truth[k].count, 1) << "sample " << k;  // one sieve-buffer read
    }
  }

  // The stats say the same, per dataset.
  RunResult stats = RunProgram({IotapBinary(), "stats", "--json", dir_.Sub("trace")});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(stats.out, &root).ok());
  const auto& datasets = root.fields().at("datasets").list_value().values();
  ASSERT_EQ(datasets.size(), 1);
  const auto& d = datasets[0].struct_value().fields();
  EXPECT_EQ(d.at("dataset").string_value(), file + ":/images");
  EXPECT_EQ(d.at("layout").string_value(), layout == "contiguous" ? "contiguous" : "chunked");
  EXPECT_EQ(d.at("chunk_bytes").number_value(), layout == "chunk2k"    ? 2048
                                                : layout == "chunk64k" ? 65536
                                                                       : 0);
  EXPECT_EQ(d.at("reads").number_value(), kSamples);
  EXPECT_EQ(d.at("read_logical_bytes").number_value(), kSamples * kSampleBytes);
  EXPECT_EQ(d.at("posix_reads").number_value(), total.count);
  EXPECT_EQ(d.at("posix_read_bytes").number_value(), total.bytes);
  RunResult text = RunProgram({IotapBinary(), "stats", dir_.Sub("trace")});
  EXPECT_NE(text.out.find("each 40.0 KiB H5Dread became "), std::string::npos) << text.out;
  size_t from = text.out.find("HDF5 datasets");
  std::cout << text.out.substr(from, text.out.find("\nprocesses:") - from) << "\n";
}

TEST(H5pyForkTest, AForkedWorkerDescribesTheDatasetInItsOwnTrace) {
  TempDir dir;
  const std::string file = dir.Sub("small.h5");
  const std::string script = SourcePath("tests/integration/programs/h5py_train.py");
  ASSERT_EQ(RunProgram({Python(), script, "create", file, "chunk2k", "16"}).exit_code, 0);
  RunResult r = RunTraced({Python(), script, "forked", file}, dir.Sub("trace"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  LoadedRun run = LoadRun(dir.Sub("trace"));
  ASSERT_EQ(run.processes.size(), 2u);
  for (const LoadedProcess& p : run.processes) {
    bool worker = p.header.origin() == ProcessHeader::ORIGIN_FORK;
    SCOPED_TRACE(worker ? "worker" : "parent");
    // The parent opened the dataset; the worker's trace describes it anyway.
    int described = 0;
    for (const Packet& packet : p.packets) described += packet.has_hdf5_dataset();
    EXPECT_EQ(described, 1);
    std::vector<const LoadedEvent*> reads = p.On(file + ":/images", OP_H5D_READ);
    ASSERT_EQ(reads.size(), worker ? 3u : 2u);
    for (const LoadedEvent* h : reads) {
      EXPECT_EQ(h->requested, kSampleBytes);
      int chunks = 0;
      for (const LoadedEvent& e : p.events) chunks += e.parent == h->aux && e.result == 2048;
      EXPECT_EQ(chunks, 20);  // each sample's 20 chunks, none cached before
    }
  }
  RunResult stats = RunProgram({IotapBinary(), "stats", "--json", dir.Sub("trace")});
  ASSERT_EQ(stats.exit_code, 0) << stats.err;
  google::protobuf::Struct root;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(stats.out, &root).ok());
  const auto& datasets = root.fields().at("datasets").list_value().values();
  ASSERT_EQ(datasets.size(), 1);
  const auto& d = datasets[0].struct_value().fields();
  EXPECT_EQ(d.at("reads").number_value(), 5);
  EXPECT_EQ(d.at("processes").number_value(), 2);
  EXPECT_TRUE(d.at("described").bool_value());
}

INSTANTIATE_TEST_SUITE_P(Layouts, H5pyTest,
                         ::testing::Values("chunk2k", "chunk64k", "contiguous"));

}  // namespace
}  // namespace iotap::testing
