#include "analyzer/testing/synthetic_trace.h"

#include <algorithm>
#include <fstream>
#include <memory>

#include "proto/wire/varint.h"
#include "zstd.h"

namespace iotap::analyzer {

namespace {

void AppendPacket(const iotap::Packet& p, std::string* out) {
  std::string body = p.SerializeAsString();
  uint8_t head[1 + wire::kMaxVarintBytes] = {0x0a};  // Trace.packet, length-delimited
  uint8_t* end = wire::PutVarint(head + 1, body.size());
  out->append(reinterpret_cast<const char*>(head), end - head);
  *out += body;
}

void Compress(const std::string& in, std::string* out) {
  std::string frame(ZSTD_compressBound(in.size()), '\0');
  size_t n = ZSTD_compress(frame.data(), frame.size(), in.data(), in.size(), 1);
  out->append(frame.data(), n);
}

}  // namespace

SyntheticProcess::SyntheticProcess(int pid, int ppid, const std::string& executable,
                                   const std::vector<std::string>& argv, int64_t start_ns,
                                   ProcessHeader::Origin origin, const std::string& host) {
  ProcessHeader* h = header_.mutable_process();
  h->set_format_version(1);
  h->set_pid(pid);
  h->set_ppid(ppid);
  h->set_hostname(host);
  h->set_executable(executable);
  for (const std::string& a : argv) h->add_argv(a);
  h->set_start_monotonic_ns(static_cast<uint64_t>(start_ns));
  h->set_start_realtime_ns(static_cast<uint64_t>(start_ns));
  h->set_rank(-1);
  h->set_local_rank(-1);
  h->set_origin(origin);
  h->set_cpus(8);
}

uint32_t SyntheticProcess::Name(const std::string& value, InternedString::Kind kind) {
  auto it = ids_.find(value);
  if (it != ids_.end()) return it->second;
  uint32_t id = static_cast<uint32_t>(names_.size() + 1);
  ids_[value] = id;
  InternedString s;
  s.set_id(id);
  s.set_value(value);
  s.set_kind(kind);
  names_.push_back(s);
  return id;
}

void SyntheticProcess::Add(const EventSpec& e) { events_.push_back(e); }

void SyntheticProcess::Read(Op op, int64_t start, int64_t end, uint32_t file, int64_t offset,
                            uint64_t bytes, uint32_t tid) {
  EventSpec e;
  e.op = op;
  e.start_ns = start;
  e.end_ns = end;
  e.file = file;
  e.offset = offset;
  e.requested = bytes;
  e.result = static_cast<int64_t>(bytes);
  e.tid = tid;
  Add(e);
}

void SyntheticProcess::Marker(Op op, int64_t start, int64_t end, int64_t step) {
  EventSpec e;
  e.op = op;
  e.start_ns = start;
  e.end_ns = end;
  e.aux = static_cast<uint64_t>(step);
  Add(e);
}

void SyntheticProcess::Cpu(int64_t at, uint64_t cpu_ns) {
  iotap::Packet p;
  p.mutable_resources()->set_monotonic_ns(static_cast<uint64_t>(at));
  p.mutable_resources()->set_user_cpu_ns(cpu_ns);
  extra_.push_back(p);
}

void SyntheticProcess::End(EndOfTrace::Reason reason, int code, int64_t at_ns,
                           int64_t wall_clock_ns) {
  ended_ = true;
  end_.mutable_end()->set_reason(reason);
  end_.mutable_end()->set_exit_code(code);
  end_.mutable_end()->set_exit_code_known(true);
  end_.mutable_end()->set_monotonic_ns(static_cast<uint64_t>(at_ns));
  end_wall_clock_ns_ = wall_clock_ns;
}

std::string SyntheticProcess::Bytes(size_t events_per_frame, int64_t frame_ns) const {
  // The shim's limit on the events of one chunk (interpose/file/writer.cc).
  constexpr size_t kMaxChunkEvents = 4096;
  const int64_t unit = time_unit_ns_;
  std::string out;
  std::string frame;
  AppendPacket(header_, &frame);
  iotap::Packet clock;
  clock.mutable_clock()->set_monotonic_ns(header_.process().start_monotonic_ns());
  clock.mutable_clock()->set_realtime_ns(header_.process().start_realtime_ns());
  AppendPacket(clock, &frame);
  iotap::Packet strings;
  for (const InternedString& s : names_) *strings.mutable_strings()->add_entry() = s;
  AppendPacket(strings, &frame);
  for (const iotap::Packet& p : extra_) AppendPacket(p, &frame);
  // Timed packets go at the end of the frame whose events started before
  // them; those before every event, into the first frame.
  size_t next_timed = 0;
  auto append_timed_before = [&](int64_t limit_ns, bool all) {
    while (next_timed < timed_.size() && (all || timed_[next_timed].first < limit_ns)) {
      AppendPacket(timed_[next_timed++].second, &frame);
    }
  };
  append_timed_before(events_.empty() ? 0 : events_.front().start_ns + 1, events_.empty());
  Compress(frame, &out);
  // Events, in the order given: per frame, the chunks of each thread.
  struct Thread {
    uint64_t seq = 0;             // events of the thread so far
    iotap::Packet* chunk = nullptr;
    size_t in_chunk = 0;
    int64_t previous_end = 0;     // in units
    int64_t previous_offset = 0;
  };
  std::map<uint32_t, Thread> threads;
  const int64_t start = static_cast<int64_t>(header_.process().start_monotonic_ns());
  for (size_t first = 0, last = 0; first < events_.size(); first = last) {
    last = std::min(events_.size(), first + events_per_frame);
    if (frame_ns > 0) {
      // The end of the flush period the frame's first event starts in.
      const int64_t period_end =
          start + (std::max<int64_t>(0, events_[first].start_ns - start) / frame_ns + 1) * frame_ns;
      size_t cut = first + 1;
      while (cut < last && events_[cut].start_ns < period_end) ++cut;
      last = cut;
    }
    std::vector<std::unique_ptr<iotap::Packet>> chunks;  // in the order begun
    std::map<uint32_t, std::vector<iotap::Packet*>> by_thread;
    for (auto& [tid, t] : threads) t.chunk = nullptr;
    frame.clear();
    for (size_t i = first; i < last; ++i) {
      const EventSpec& e = events_[i];
      uint32_t tid = e.tid != 0 ? e.tid : static_cast<uint32_t>(header_.process().pid());
      Thread& t = threads[tid];
      const int64_t start = e.start_ns / unit;
      const int64_t end = e.end_ns / unit;
      if (t.chunk == nullptr || t.in_chunk == kMaxChunkEvents) {
        chunks.push_back(std::make_unique<iotap::Packet>());
        t.chunk = chunks.back().get();
        by_thread[tid].push_back(t.chunk);
        t.in_chunk = 0;
        EventChunk* c = t.chunk->mutable_events();
        c->set_tid(tid);
        c->set_base_time_ns(static_cast<uint64_t>(start * unit));
        c->set_time_unit_ns(static_cast<uint32_t>(unit));
        c->set_first_seq(t.seq);
        t.previous_end = start;
        t.previous_offset = 0;
      }
      EventChunk* c = t.chunk->mutable_events();
      ++t.in_chunk;
      ++t.seq;
      c->add_op(e.op);
      c->add_start_gap(start - t.previous_end);
      c->add_duration(static_cast<uint64_t>(end - start));
      t.previous_end = end;
      c->add_file(e.file);
      uint32_t flags = e.flags | (e.offset >= 0 ? FLAG_HAS_OFFSET : 0);
      c->add_offset_delta(e.offset >= 0 ? e.offset - t.previous_offset : 0);
      if (e.offset >= 0) t.previous_offset = e.offset;
      c->add_requested(e.requested);
      c->add_result(e.result);
      c->add_error(e.error);
      c->add_flags(flags);
      c->add_parent(e.parent);
      c->add_aux(e.aux);
    }
    // Threads in tid order, each thread's chunks in order.
    for (auto& [tid, list] : by_thread) {
      for (const iotap::Packet* p : list) AppendPacket(*p, &frame);
    }
    bool last_frame = last == events_.size();
    append_timed_before(last_frame ? 0 : events_[last].start_ns, last_frame);
    Compress(frame, &out);
  }
  if (ended_) {
    frame.clear();
    iotap::Packet end = end_;
    // The wall clock at the end: as the header's pair implies, unless a test
    // set it.
    const ProcessHeader& h = header_.process();
    int64_t wall = end_wall_clock_ns_ >= 0
                       ? end_wall_clock_ns_
                       : static_cast<int64_t>(end.end().monotonic_ns()) -
                             static_cast<int64_t>(h.start_monotonic_ns()) +
                             static_cast<int64_t>(h.start_realtime_ns());
    end.mutable_end()->set_realtime_ns(static_cast<uint64_t>(wall));
    AppendPacket(end, &frame);
    Compress(frame, &out);
  }
  return out;
}

void SyntheticProcess::WriteTo(const std::string& path, size_t events_per_frame,
                               int64_t frame_ns) const {
  std::ofstream out(path, std::ios::binary);
  out << Bytes(events_per_frame, frame_ns);
}

std::string Varints(std::initializer_list<uint32_t> values) {
  std::string out;
  uint8_t buf[wire::kMaxVarintBytes];
  for (uint32_t v : values) {
    uint8_t* end = wire::PutVarint(buf, v);
    out.append(reinterpret_cast<const char*>(buf), static_cast<size_t>(end - buf));
  }
  return out;
}

}  // namespace iotap::analyzer
