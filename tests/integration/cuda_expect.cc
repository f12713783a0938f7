#include "tests/integration/cuda_expect.h"

#include <cstdlib>
#include <sstream>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace iotap::testing {

namespace {

using K = SymbolKind;

std::map<std::string, SymbolFacts> BuildSymbols() {
  std::map<std::string, SymbolFacts> s;
  // The runtime's copies and their per-thread twins.
  for (const char* name : {"cudaMemcpy", "cudaMemcpy2D", "cudaMemcpy3D", "cudaMemcpyToSymbol",
                           "cudaMemcpyFromSymbol"}) {
    s[name] = {K::kCopy};
    s[std::string(name) + "_ptds"] = {K::kCopy, false, false, true};
  }
  for (const char* name : {"cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpy3DAsync",
                           "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbolAsync"}) {
    s[name] = {K::kCopy, false, true};
    s[std::string(name) + "_ptsz"] = {K::kCopy, false, true, true};
  }
  s["cudaMemcpyPeer"] = {K::kCopy};
  s["cudaMemcpyPeerAsync"] = {K::kCopy, false, true};
  // The driver's, whose per-thread forms put _ptds/_ptsz after the version.
  for (const char* name : {"cuMemcpy", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2",
                           "cuMemcpy2D_v2", "cuMemcpy3D_v2", "cuMemcpyPeer"}) {
    s[name] = {K::kCopy, true};
    s[std::string(name) + "_ptds"] = {K::kCopy, true, false, true};
  }
  for (const char* name :
       {"cuMemcpyAsync", "cuMemcpyHtoDAsync_v2", "cuMemcpyDtoHAsync_v2", "cuMemcpyDtoDAsync_v2",
        "cuMemcpy2DAsync_v2", "cuMemcpy3DAsync_v2", "cuMemcpyPeerAsync"}) {
    s[name] = {K::kCopy, true, true};
    s[std::string(name) + "_ptsz"] = {K::kCopy, true, true, true};
  }
  // cuGetProcAddress records nothing itself; the line is the copy made with
  // the cuMemcpyHtoD it returned.
  s["cuGetProcAddress"] = {K::kCopy, true};
  s["cuGetProcAddress_v2"] = {K::kCopy, true};
  s["cudaHostAlloc"] = {K::kHostAlloc};
  s["cudaMallocHost"] = {K::kHostAlloc};
  s["cudaHostRegister"] = {K::kHostRegister};
  s["cudaHostUnregister"] = {K::kHostUnregister};
  s["cudaFreeHost"] = {K::kHostFree};
  s["cuMemHostAlloc"] = {K::kHostAlloc, true};
  s["cuMemAllocHost_v2"] = {K::kHostAlloc, true};
  s["cuMemHostRegister_v2"] = {K::kHostRegister, true};
  s["cuMemHostUnregister"] = {K::kHostUnregister, true};
  s["cuMemFreeHost"] = {K::kHostFree, true};
  s["cuFileHandleRegister"] = {K::kCufileRegister};
  s["cuFileHandleDeregister"] = {K::kCufileDeregister};
  s["cuFileRead"] = {K::kCufileRead};
  s["cuFileWrite"] = {K::kCufileWrite};
  s["cuFileReadAsync"] = {K::kCufileRead, false, true};
  s["cuFileWriteAsync"] = {K::kCufileWrite, false, true};
  s["cuFileBatchIOSubmit"] = {K::kCufileBatch, false, true};
  return s;
}

Op CopyOp(const std::string& kind) {
  if (kind == "HtoD") return OP_CUDA_MEMCPY_HTOD;
  if (kind == "DtoH") return OP_CUDA_MEMCPY_DTOH;
  if (kind == "DtoD") return OP_CUDA_MEMCPY_DTOD;
  if (kind == "HtoH") return OP_CUDA_MEMCPY_HTOH;
  if (kind == "Peer") return OP_CUDA_MEMCPY_PEER;
  return OP_CUDA_MEMCPY_DEFAULT;
}

uint32_t HostFlag(const CallLine& line) {
  const std::string& host = line.Field("host");
  if (host == "pinned") return FLAG_CUDA_PINNED;
  // A pageable pointer says nothing of a copy whose direction is unknown.
  if (host == "pageable" && line.Field("kind") != "Default") return FLAG_CUDA_PAGEABLE;
  return 0;
}

// Where allocations and releases met, to check that they name one address.
struct Pairing {
  std::map<std::string, int> seen;              // release symbol -> times
  std::map<std::string, int64_t> alloc_offset;  // release key -> offset
};

std::string ReleaseKey(const std::string& symbol, int nth) {
  return nth == 0 ? symbol : symbol + "#" + std::to_string(nth + 1);
}

// The release call that frees what `alloc` allocated (calls.h's pairing).
std::string ReleaserOf(const std::string& alloc) {
  static const std::map<std::string, std::string> kReleaser = {
      {"cudaHostAlloc", "cudaFreeHost"},          {"cudaMallocHost", "cudaFreeHost#2"},
      {"cudaHostRegister", "cudaHostUnregister"}, {"cuMemHostAlloc", "cuMemFreeHost"},
      {"cuMemAllocHost_v2", "cuMemFreeHost#2"},   {"cuMemHostRegister_v2", "cuMemHostUnregister"}};
  return kReleaser.at(alloc);
}

}  // namespace

const std::string& CallLine::Field(const std::string& name) const {
  static const std::string kNone;
  auto it = fields.find(name);
  return it == fields.end() ? kNone : it->second;
}

uint64_t CallLine::Number(const std::string& name) const {
  const std::string& v = Field(name);
  return std::strtoull(v.c_str(), nullptr, absl::StartsWith(v, "0x") ? 16 : 10);
}

std::vector<CallLine> ParseCallLines(const std::string& out) {
  std::vector<CallLine> lines;
  for (absl::string_view text : absl::StrSplit(out, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(text, "procaddress ") || absl::StartsWith(text, "lifecycle ")) continue;
    std::vector<std::string> words = absl::StrSplit(text, ' ');
    CallLine line;
    line.text = std::string(text);
    line.symbol = words[0];
    for (size_t i = 1; i < words.size(); ++i) {
      std::vector<std::string> kv = absl::StrSplit(words[i], absl::MaxSplits('=', 1));
      if (kv.size() == 2) line.fields[kv[0]] = kv[1];
    }
    line.rc = std::strtol(line.Field("rc").c_str(), nullptr, 10);
    line.data = line.Field("data");
    lines.push_back(line);
  }
  return lines;
}

const std::map<std::string, SymbolFacts>& CudaSymbols() {
  static const auto* symbols = new std::map<std::string, SymbolFacts>(BuildSymbols());
  return *symbols;
}

std::vector<LoadedEvent> CudaEvents(const LoadedRun& run) {
  std::vector<LoadedEvent> events;
  for (const LoadedProcess& p : run.processes) {
    for (const LoadedEvent& e : p.events) {
      analyzer::Layer layer = analyzer::LayerOf(e.op);
      if (layer == analyzer::Layer::kCuda || layer == analyzer::Layer::kGds) events.push_back(e);
    }
  }
  return events;
}

void ExpectEventsMatch(const std::vector<CallLine>& lines, const std::vector<LoadedEvent>& events,
                       const std::string& file, int64_t fd) {
  Pairing pairing;
  size_t next = 0;
  for (const CallLine& line : lines) {
    SCOPED_TRACE(line.text);
    auto facts_it = CudaSymbols().find(line.symbol);
    ASSERT_NE(facts_it, CudaSymbols().end()) << "unknown symbol " << line.symbol;
    const SymbolFacts& facts = facts_it->second;
    EXPECT_NE(line.data, "bad") << "the call's data did not arrive";
    int count = facts.kind == K::kCufileBatch ? 2 : 1;
    ASSERT_LE(next + count, events.size()) << "no event for the call";
    const LoadedEvent& e = events[next];
    next += count;
    uint32_t style =
        (facts.driver ? FLAG_CUDA_DRIVER_API : 0) | (facts.async ? FLAG_CUDA_ASYNC : 0);
    EXPECT_EQ(e.error, 0u);
    switch (facts.kind) {
      case K::kCopy: {
        EXPECT_EQ(e.op, CopyOp(line.Field("kind")));
        EXPECT_EQ(e.requested, line.Number("bytes"));
        EXPECT_EQ(e.result, line.rc);
        uint64_t stream = line.Field("stream") == "-" ? 0 : line.Number("stream");
        EXPECT_EQ(e.aux, stream == 0 && facts.per_thread ? 2u : stream);
        EXPECT_EQ(e.flags, style | HostFlag(line));
        EXPECT_EQ(e.file, 0u);
        break;
      }
      case K::kHostAlloc:
      case K::kHostRegister:
        EXPECT_EQ(e.op, facts.kind == K::kHostAlloc ? OP_CUDA_HOST_ALLOC : OP_CUDA_HOST_REGISTER);
        EXPECT_EQ(e.requested, line.Number("bytes"));
        EXPECT_EQ(e.aux, line.Number("flags"));
        EXPECT_EQ(e.result, line.rc);
        EXPECT_EQ(e.flags, style | FLAG_HAS_OFFSET);
        EXPECT_NE(e.offset, 0);
        pairing.alloc_offset[ReleaserOf(line.symbol)] = e.offset;
        break;
      case K::kHostFree:
      case K::kHostUnregister: {
        EXPECT_EQ(e.op, facts.kind == K::kHostFree ? OP_CUDA_HOST_FREE : OP_CUDA_HOST_UNREGISTER);
        EXPECT_EQ(e.requested, line.Number("bytes"));
        EXPECT_EQ(e.result, line.rc);
        EXPECT_EQ(e.flags, style | FLAG_HAS_OFFSET);
        std::string key = ReleaseKey(line.symbol, pairing.seen[line.symbol]++);
        ASSERT_EQ(pairing.alloc_offset.count(key), 1u) << key << " released nothing allocated";
        EXPECT_EQ(e.offset, pairing.alloc_offset[key]) << key;
        break;
      }
      case K::kCufileRegister:
      case K::kCufileDeregister:
        EXPECT_EQ(e.op, facts.kind == K::kCufileRegister ? OP_CUFILE_HANDLE_REGISTER
                                                         : OP_CUFILE_HANDLE_DEREGISTER);
        EXPECT_EQ(e.name, file);
        EXPECT_EQ(e.aux, facts.kind == K::kCufileRegister ? static_cast<uint64_t>(fd) : 0u);
        EXPECT_EQ(e.result, line.rc);
        break;
      case K::kCufileRead:
      case K::kCufileWrite: {
        EXPECT_EQ(e.op, facts.kind == K::kCufileRead ? OP_CUFILE_READ : OP_CUFILE_WRITE);
        EXPECT_EQ(e.name, file);
        EXPECT_EQ(e.offset, static_cast<int64_t>(line.Number("offset")));
        EXPECT_EQ(e.requested, line.Number("bytes"));
        EXPECT_EQ(e.flags, style | FLAG_HAS_OFFSET);
        if (facts.async) {
          EXPECT_EQ(e.result, line.rc);  // the submission's status
          EXPECT_EQ(e.aux, line.Number("stream"));
        } else {
          // Bytes moved, or the negated error the line shows.
          EXPECT_EQ(e.result, line.rc == 0 ? static_cast<int64_t>(line.Number("bytes")) : line.rc);
        }
        break;
      }
      case K::kCufileBatch: {
        std::vector<std::string> offsets = absl::StrSplit(line.Field("offsets"), ',');
        std::vector<std::string> bytes = absl::StrSplit(line.Field("bytes"), ',');
        for (int i = 0; i < 2; ++i) {
          const LoadedEvent& r = events[next - 2 + i];
          EXPECT_EQ(r.op, i == 0 ? OP_CUFILE_READ : OP_CUFILE_WRITE);
          EXPECT_EQ(r.name, file);
          EXPECT_EQ(r.offset, std::stoll(offsets[i]));
          EXPECT_EQ(r.requested, std::stoull(bytes[i]));
          EXPECT_EQ(r.result, line.rc);
          EXPECT_EQ(r.flags, FLAG_CUDA_ASYNC | FLAG_CUFILE_BATCH | FLAG_HAS_OFFSET);
          EXPECT_EQ(r.aux, events[next - 2].aux);  // the batch handle
        }
        EXPECT_NE(e.aux, 0u);
        break;
      }
    }
  }
  EXPECT_EQ(next, events.size()) << "events no call accounts for";
}

std::set<std::string> MapCudaSymbols() {
  std::vector<std::string> names = MapSymbols("CUDA");
  return std::set<std::string>(names.begin(), names.end());
}

}  // namespace iotap::testing
