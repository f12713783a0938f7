#include "analyzer/synthetic_trace.h"

#include <fstream>

#include "zstd.h"

namespace iotap::analyzer {

namespace {

void AppendPacket(const iotap::Packet& p, std::string* out) {
  std::string body = p.SerializeAsString();
  *out += '\x0a';
  uint64_t n = body.size();
  while (n >= 0x80) {
    *out += static_cast<char>((n & 0x7f) | 0x80);
    n >>= 7;
  }
  *out += static_cast<char>(n);
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

std::string SyntheticProcess::Bytes(size_t events_per_frame) const {
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
  Compress(frame, &out);
  // Events, one chunk per thread per frame, in the order given.
  for (size_t first = 0; first < events_.size(); first += events_per_frame) {
    size_t last = std::min(events_.size(), first + events_per_frame);
    std::map<uint32_t, iotap::Packet> chunks;
    std::map<uint32_t, std::pair<int64_t, int64_t>> state;  // previous end, previous offset
    frame.clear();
    for (size_t i = first; i < last; ++i) {
      const EventSpec& e = events_[i];
      uint32_t tid = e.tid != 0 ? e.tid : static_cast<uint32_t>(header_.process().pid());
      auto [it, fresh] = chunks.try_emplace(tid);
      EventChunk* c = it->second.mutable_events();
      if (fresh) {
        c->set_tid(tid);
        c->set_base_time_ns(static_cast<uint64_t>(e.start_ns));
        c->set_time_unit_ns(1);
        state[tid] = {e.start_ns, 0};
      }
      auto& [previous_end, previous_offset] = state[tid];
      c->add_op(e.op);
      c->add_start_gap(e.start_ns - previous_end);
      c->add_duration(static_cast<uint64_t>(e.end_ns - e.start_ns));
      previous_end = e.end_ns;
      c->add_file(e.file);
      uint32_t flags = e.flags | (e.offset >= 0 ? FLAG_HAS_OFFSET : 0);
      c->add_offset_delta(e.offset >= 0 ? e.offset - previous_offset : 0);
      if (e.offset >= 0) previous_offset = e.offset;
      c->add_requested(e.requested);
      c->add_result(e.result);
      c->add_error(e.error);
      c->add_flags(flags);
      c->add_parent(e.parent);
      c->add_aux(e.aux);
    }
    for (auto& [tid, p] : chunks) AppendPacket(p, &frame);
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

void SyntheticProcess::WriteTo(const std::string& path, size_t events_per_frame) const {
  std::ofstream out(path, std::ios::binary);
  out << Bytes(events_per_frame);
}

}  // namespace iotap::analyzer
