// Writes a finished job's trace files again, growing as the job would have
// written them: each file appears when its process starts and gains each of
// its frames when the last event in it has ended, on the wall clock of now
// (the benchmark of `iotap top` following a job, run-top-follow.sh).
//
//   generate_traces STAGE --processes=1000 --events=40000000 --duration-s=40 --flush-s=1
//   grow_traces STAGE DIR [--duration-s=S]
//
// The job is moved to the present: its wall clock is shifted so that it
// starts a second after grow_traces has read STAGE, in the header and the
// end record of each file (the only places generate_traces --flush-s writes
// it; events count on the monotonic clock). Frames are copied as they are,
// one write each, so that the writing costs little beside the reader it
// is measured with. `--duration-s` stops after that many seconds of the job.
//
// It prints, when it starts writing, `origin_unix_ns=N` (the run's start:
// the earliest process start), and when it is done `events=N elapsed_s=S
// events_per_s=R second_half_events_per_s=H frames=F files=K` (R: over the
// job so far, from its start; H: over its second half).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <queue>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "analyzer/read/event.h"
#include "iotap/trace.pb.h"
#include "proto/wire/varint.h"
#include "zstd.h"

namespace {

// One frame of a staged file: where it lies, when the process would have
// written it (its last event's end, monotonic ns = the job's wall clock
// before the shift), and how many events it holds.
struct Frame {
  uint64_t offset = 0;
  uint64_t size = 0;
  int64_t written_ns = 0;
  uint64_t events = 0;
  std::string patched;  // the frame rewritten with the shifted wall clock, if it has one
};

struct Staged {
  std::string name;
  std::string bytes;  // while reading; freed once framed
  int64_t start_realtime_ns = 0;
  std::vector<Frame> frames;
};

int64_t Now(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

bool ReadFile(const std::string& path, std::string* out) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), f)) > 0;) out->append(buf, n);
  std::fclose(f);
  return true;
}

// Calls f(packet) for each packet of a decompressed frame; false if damaged.
template <typename F>
bool ForEachPacket(const std::string& frame, F&& f) {
  const auto* p = reinterpret_cast<const uint8_t*>(frame.data());
  const uint8_t* end = p + frame.size();
  while (p < end) {
    uint64_t size = 0;
    if (*p++ != 0x0a || !iotap::wire::ReadVarint(&p, end, &size) ||
        size > static_cast<uint64_t>(end - p)) {
      return false;
    }
    iotap::Packet packet;
    if (!packet.ParseFromArray(p, static_cast<int>(size))) return false;
    f(packet);
    p += size;
  }
  return true;
}

void AppendPacket(const iotap::Packet& packet, std::string* out) {
  std::string body = packet.SerializeAsString();
  uint8_t head[1 + iotap::wire::kMaxVarintBytes] = {0x0a};
  uint8_t* end = iotap::wire::PutVarint(head + 1, body.size());
  out->append(reinterpret_cast<const char*>(head), end - head);
  *out += body;
}

std::string Compress(const std::string& in) {
  std::string out(ZSTD_compressBound(in.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 1));
  return out;
}

// Splits a staged file into frames, with their times and events; frames
// that hold the wall clock (the header and its clock pair, the end record)
// are kept rewritten with it shifted by `shift_ns` (set later: see Patch).
bool Frames(Staged* s) {
  iotap::analyzer::EventBatch batch;
  int64_t last_end = 0;
  for (uint64_t offset = 0; offset < s->bytes.size();) {
    const char* at = s->bytes.data() + offset;
    size_t size = ZSTD_findFrameCompressedSize(at, s->bytes.size() - offset);
    unsigned long long raw = ZSTD_getFrameContentSize(at, size);
    if (ZSTD_isError(size) || raw == ZSTD_CONTENTSIZE_ERROR || raw == ZSTD_CONTENTSIZE_UNKNOWN) {
      return false;
    }
    std::string frame(raw, '\0');
    if (ZSTD_decompress(frame.data(), frame.size(), at, size) != raw) return false;
    Frame f;
    f.offset = offset;
    f.size = size;
    f.written_ns = last_end;
    bool clock = false;
    bool ok = ForEachPacket(frame, [&](const iotap::Packet& p) {
      if (p.has_process()) {
        s->start_realtime_ns = static_cast<int64_t>(p.process().start_realtime_ns());
        f.written_ns = static_cast<int64_t>(p.process().start_monotonic_ns());
      }
      clock = clock || p.has_process() || p.has_clock() || p.has_end();
      if (p.has_end()) f.written_ns = static_cast<int64_t>(p.end().monotonic_ns());
      if (p.has_events() && iotap::analyzer::DecodeChunk(p.events(), &batch).ok()) {
        f.events += batch.events.size();
        for (const iotap::analyzer::Event& e : batch.events) {
          f.written_ns = std::max(f.written_ns, e.end_ns);
        }
      }
    });
    if (!ok) return false;
    if (clock) f.patched = std::move(frame);  // decompressed, until Patch
    last_end = f.written_ns;
    s->frames.push_back(std::move(f));
    offset += size;
  }
  s->bytes = std::string();
  return true;
}

// Shifts the wall-clock readings of the frames that hold any by `shift_ns`.
void Patch(Staged* s, int64_t shift_ns) {
  auto shift = [&](uint64_t ns) {
    return static_cast<uint64_t>(static_cast<int64_t>(ns) + shift_ns);
  };
  for (Frame& f : s->frames) {
    if (f.patched.empty()) continue;
    std::string out;
    ForEachPacket(f.patched, [&](iotap::Packet p) {
      if (p.has_process()) {
        p.mutable_process()->set_start_realtime_ns(shift(p.process().start_realtime_ns()));
      }
      if (p.has_clock()) p.mutable_clock()->set_realtime_ns(shift(p.clock().realtime_ns()));
      if (p.has_end()) p.mutable_end()->set_realtime_ns(shift(p.end().realtime_ns()));
      AppendPacket(p, &out);
    });
    f.patched = Compress(out);
  }
}

bool Append(const std::string& from, const std::string& to, const Frame& f) {
  std::string bytes = f.patched;
  if (bytes.empty()) {
    bytes.resize(f.size);
    int in = open(from.c_str(), O_RDONLY | O_CLOEXEC);
    if (in < 0) return false;
    ssize_t n = pread(in, bytes.data(), f.size, static_cast<off_t>(f.offset));
    close(in);
    if (n != static_cast<ssize_t>(f.size)) return false;
  }
  int out = open(to.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (out < 0) return false;
  bool ok = write(out, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  return close(out) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  double duration_s = 0;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.starts_with("--duration-s=")) {
      duration_s = std::atof(argv[i] + 13);
    } else {
      positional.emplace_back(a);
    }
  }
  if (positional.size() != 2) {
    std::fprintf(stderr, "usage: grow_traces STAGE DIR [--duration-s=S]\n");
    return 1;
  }
  const std::string stage = positional[0], dir = positional[1];
  std::vector<Staged> files;
  for (const auto& entry : std::filesystem::directory_iterator(stage)) {
    if (entry.path().extension() != ".iotap") continue;
    Staged& s = files.emplace_back();
    s.name = entry.path().filename().string();
    if (!ReadFile(entry.path().string(), &s.bytes) || !Frames(&s)) {
      std::fprintf(stderr, "grow_traces: %s: not a trace\n", entry.path().c_str());
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "grow_traces: %s: no trace files\n", stage.c_str());
    return 2;
  }
  std::filesystem::create_directories(dir);
  // The job's start (its monotonic clock equals its old wall clock) moves
  // to a second from now.
  int64_t start = INT64_MAX;
  for (const Staged& s : files) start = std::min(start, s.start_realtime_ns);
  const int64_t shift = Now(CLOCK_REALTIME) + 1'000'000'000 - start;
  for (Staged& s : files) Patch(&s, shift);
  const int64_t stop = duration_s > 0 ? start + static_cast<int64_t>(duration_s * 1e9) : INT64_MAX;
  std::printf("origin_unix_ns=%lld\n", static_cast<long long>(start + shift));
  std::fflush(stdout);
  // Every file's next frame, earliest first.
  using Next = std::tuple<int64_t, size_t, size_t>;  // (written_ns, file, frame)
  std::priority_queue<Next, std::vector<Next>, std::greater<>> queue;
  for (size_t k = 0; k < files.size(); ++k) queue.emplace(files[k].frames[0].written_ns, k, 0);
  // Events over the whole job, and over its second half (when its workers
  // all run: they start 3 to 5 s in).
  int64_t end = start;
  for (const Staged& s : files) end = std::max(end, std::min(stop, s.frames.back().written_ns));
  const int64_t half = start + (end - start) / 2;
  uint64_t events = 0, frames = 0, second_half = 0;
  while (!queue.empty()) {
    auto [at, k, i] = queue.top();
    if (at > stop) break;
    queue.pop();
    int64_t wait = at + shift - Now(CLOCK_REALTIME);
    if (wait > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
    const Staged& s = files[k];
    if (!Append(stage + "/" + s.name, dir + "/" + s.name, s.frames[i])) {
      std::fprintf(stderr, "grow_traces: cannot write %s/%s\n", dir.c_str(), s.name.c_str());
      return 2;
    }
    events += s.frames[i].events;
    if (at >= half) second_half += s.frames[i].events;
    ++frames;
    if (i + 1 < s.frames.size()) queue.emplace(s.frames[i + 1].written_ns, k, i + 1);
  }
  const double elapsed = static_cast<double>(Now(CLOCK_REALTIME) - (start + shift)) / 1e9;
  std::printf("events=%llu elapsed_s=%.2f events_per_s=%.0f second_half_events_per_s=%.0f "
              "frames=%llu files=%zu\n",
              static_cast<unsigned long long>(events), elapsed,
              static_cast<double>(events) / elapsed,
              static_cast<double>(second_half) * 1e9 / static_cast<double>(std::max<int64_t>(1, end - half)),
              static_cast<unsigned long long>(frames), files.size());
  return 0;
}
