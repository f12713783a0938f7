#include "analyzer/output/export/perfetto_export.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "analyzer/base/text.h"
#include "google/protobuf/io/coded_stream.h"
#include "perfetto/trace.pb.h"

namespace iotap::analyzer {

namespace {

namespace pf = ::perfetto::protos;

// Packets of the counters; each process gets its own sequence after it.
constexpr uint32_t kCounterSequence = 1;

// Interning state of one packet sequence: string -> iid, per kind.
struct Interner {
  std::unordered_map<std::string, uint64_t> names, categories, annotation_names, values;
};

class PerfettoSink : public ExportSink {
 public:
  PerfettoSink(std::string path, ExportStats* stats) : path_(std::move(path)), stats_(stats) {}
  ~PerfettoSink() override {
    if (out_ != nullptr) std::fclose(out_);
  }

  // The file is made only once the run has been read, so that a run that
  // cannot be read leaves none behind.
  absl::Status Begin(const RunInfo& run) override {
    origin_ = run.origin_unix_ns;
    out_ = std::fopen(path_.c_str(), "wb");
    if (out_ == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(path_, ": ", std::strerror(errno)));
    return absl::OkStatus();
  }

  absl::Status AddProcess(const ExportProcess& p) override {
    const uint32_t sequence = next_sequence_++;
    Interner interner;
    const int pid = ids_.Pid(p.host, p.pid);
    const uint64_t process_uuid = next_uuid_++;
    if (p.role == report::TRAINER && trainer_uuid_.count(p.pid) == 0)
      trainer_uuid_[p.pid] = process_uuid;
    pf::TracePacket packet;
    packet.set_trusted_packet_sequence_id(sequence);
    packet.set_sequence_flags(pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    pf::TrackDescriptor* d = packet.mutable_track_descriptor();
    d->set_uuid(process_uuid);
    pf::ProcessDescriptor* pd = d->mutable_process();
    pd->set_pid(pid);
    pd->set_process_name(p.Title());
    for (const std::string& a : p.argv) pd->add_cmdline(a);
    Write(packet);
    ++stats_->processes;
    for (const ExportTrack& track : p.tracks) {
      const uint64_t uuid = next_uuid_++;
      packet.Clear();
      packet.set_trusted_packet_sequence_id(sequence);
      d = packet.mutable_track_descriptor();
      d->set_uuid(uuid);
      if (track.kind == ExportTrack::kThread) {
        pf::ThreadDescriptor* td = d->mutable_thread();
        td->set_pid(pid);
        td->set_tid(ids_.Tid(p.host, static_cast<int>(track.id)));
        td->set_thread_name(track.name);
      } else {
        d->set_parent_uuid(process_uuid);
        d->set_name(track.name);
      }
      Write(packet);
      ++stats_->tracks;
      WriteSlices(p, track, uuid, sequence, &interner);
    }
    stats_->clipped += p.clipped;
    return Error();
  }

  absl::Status Finish(const RunInfo& run) override {
    const report::Timeline& t = run.report.timeline();
    for (const report::Series& s : t.series()) {
      const uint64_t uuid = next_uuid_++;
      pf::TracePacket packet;
      packet.set_trusted_packet_sequence_id(kCounterSequence);
      pf::TrackDescriptor* d = packet.mutable_track_descriptor();
      d->set_uuid(uuid);
      auto parent = trainer_uuid_.find(s.pid());
      if (s.pid() != 0 && parent != trainer_uuid_.end()) d->set_parent_uuid(parent->second);
      d->set_name(absl::StrCat(ValidUtf8(s.name()), " (", s.unit(), ")"));
      d->mutable_counter()->set_unit(s.unit() == "bytes" ? pf::CounterDescriptor::UNIT_SIZE_BYTES
                                                         : pf::CounterDescriptor::UNIT_UNSPECIFIED);
      Write(packet);
      ++stats_->tracks;
      double last = -1;
      for (int k = 0; k <= s.values_size(); ++k) {
        double v = k < s.values_size() ? s.values(k) : 0.0;
        if (v == last) continue;  // a counter holds its value until the next one
        last = v;
        packet.Clear();
        packet.set_trusted_packet_sequence_id(kCounterSequence);
        packet.set_timestamp(
            Timestamp(static_cast<int64_t>((t.start_s() + k * t.bin_width_s()) * 1e9)));
        pf::TrackEvent* e = packet.mutable_track_event();
        e->set_type(pf::TrackEvent::TYPE_COUNTER);
        e->set_track_uuid(uuid);
        e->set_double_counter_value(v);
        Write(packet);
        ++stats_->counters;
      }
    }
    Flush();
    if (std::fclose(out_) != 0 && write_errno_ == 0) write_errno_ = errno;
    out_ = nullptr;
    return Error();
  }

 private:
  // Writes the track's slices as begin and end events in time order: a
  // slice's end comes before the begin of anything that starts at or after
  // it, children's ends before their parent's (export_model.h nests them).
  void WriteSlices(const ExportProcess& p, const ExportTrack& track, uint64_t uuid,
                   uint32_t sequence, Interner* interner) {
    std::vector<int64_t> open_ends;
    auto close_until = [&](int64_t t) {
      while (!open_ends.empty() && open_ends.back() <= t) {
        WriteEnd(open_ends.back(), uuid, sequence);
        open_ends.pop_back();
      }
    };
    for (const ExportSlice& s : track.slices) {
      close_until(s.start_ns);
      WriteBegin(p, s, uuid, sequence, interner);
      ++stats_->slices;
      if (!s.instant) open_ends.push_back(s.end_ns);
    }
    close_until(INT64_MAX);
  }

  void WriteBegin(const ExportProcess& p, const ExportSlice& s, uint64_t uuid, uint32_t sequence,
                  Interner* interner) {
    pf::TracePacket packet;
    packet.set_timestamp(Timestamp(s.start_ns));
    packet.set_trusted_packet_sequence_id(sequence);
    packet.set_sequence_flags(pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    pf::TrackEvent* e = packet.mutable_track_event();
    e->set_type(s.instant ? pf::TrackEvent::TYPE_INSTANT : pf::TrackEvent::TYPE_SLICE_BEGIN);
    e->set_track_uuid(uuid);
    pf::InternedData* fresh = packet.mutable_interned_data();
    e->set_name_iid(
        Intern(&interner->names, p.strings[s.name], [&](uint64_t iid, const std::string& v) {
          pf::EventName* n = fresh->add_event_names();
          n->set_iid(iid);
          n->set_name(v);
        }));
    if (s.category != 0) {
      e->add_category_iids(Intern(&interner->categories, p.strings[s.category],
                                  [&](uint64_t iid, const std::string& v) {
                                    pf::EventCategory* c = fresh->add_event_categories();
                                    c->set_iid(iid);
                                    c->set_name(v);
                                  }));
    }
    auto annotation = [&](const char* name) {
      pf::DebugAnnotation* a = e->add_debug_annotations();
      a->set_name_iid(
          Intern(&interner->annotation_names, name, [&](uint64_t iid, const std::string& v) {
            pf::DebugAnnotationName* n = fresh->add_debug_annotation_names();
            n->set_iid(iid);
            n->set_name(v);
          }));
      return a;
    };
    if (s.file != 0) {
      annotation("file")->set_string_value_iid(
          Intern(&interner->values, p.strings[s.file], [&](uint64_t iid, const std::string& v) {
            pf::InternedString* str = fresh->add_debug_annotation_string_values();
            str->set_iid(iid);
            str->set_str(v);
          }));
    }
    if (s.bytes >= 0) annotation("bytes")->set_uint_value(static_cast<uint64_t>(s.bytes));
    if (s.offset >= 0) annotation("offset")->set_int_value(s.offset);
    if (s.step >= 0) annotation("step")->set_int_value(s.step);
    if (s.error != 0) annotation("error")->set_uint_value(s.error);
    if (s.major >= 0) annotation("major")->set_bool_value(s.major == 1);
    if (s.incomplete) {
      if (s.major >= 0) {
        annotation("span_estimated")->set_bool_value(true);
      } else {
        annotation("completion_seen")->set_bool_value(false);
      }
    }
    if (fresh->ByteSizeLong() == 0) packet.clear_interned_data();
    Write(packet);
  }

  void WriteEnd(int64_t at, uint64_t uuid, uint32_t sequence) {
    pf::TracePacket packet;
    packet.set_timestamp(Timestamp(at));
    packet.set_trusted_packet_sequence_id(sequence);
    packet.set_sequence_flags(pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    pf::TrackEvent* e = packet.mutable_track_event();
    e->set_type(pf::TrackEvent::TYPE_SLICE_END);
    e->set_track_uuid(uuid);
    Write(packet);
  }

  template <typename AddEntry>
  static uint64_t Intern(std::unordered_map<std::string, uint64_t>* table, const std::string& value,
                         AddEntry add) {
    auto [it, added] = table->emplace(value, table->size() + 1);
    if (added) add(it->second, value);
    return it->second;
  }

  uint64_t Timestamp(int64_t since_origin_ns) const {
    return static_cast<uint64_t>(std::max<int64_t>(0, origin_ + since_origin_ns));
  }

  // Appends `packet` as one `Trace.packet` field (number 1, length-delimited).
  void Write(const pf::TracePacket& packet) {
    const size_t size = packet.ByteSizeLong();
    uint8_t header[1 + 10];
    header[0] = (1 << 3) | 2;
    uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(size, header + 1);
    buffer_.append(reinterpret_cast<char*>(header), static_cast<size_t>(end - header));
    const size_t at = buffer_.size();
    buffer_.resize(at + size);
    packet.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(&buffer_[at]));
    if (buffer_.size() >= (1 << 20)) Flush();
  }

  void Flush() {
    if (!buffer_.empty() &&
        std::fwrite(buffer_.data(), 1, buffer_.size(), out_) != buffer_.size()) {
      if (write_errno_ == 0) write_errno_ = errno != 0 ? errno : EIO;
    }
    stats_->bytes += buffer_.size();
    buffer_.clear();
  }

  absl::Status Error() const {
    if (write_errno_ == 0) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(path_, ": ", std::strerror(write_errno_)));
  }

  std::string path_;
  std::FILE* out_ = nullptr;
  ExportStats* stats_;
  int64_t origin_ = 0;
  uint32_t next_sequence_ = kCounterSequence + 1;
  uint64_t next_uuid_ = 1;
  std::map<int, uint64_t> trainer_uuid_;  // trainer pid -> its process track
  ExportIds ids_;
  std::string buffer_;
  int write_errno_ = 0;
};

}  // namespace

absl::Status ExportPerfetto(const std::string& run_path, const std::string& out_path,
                            const ExportOptions& options, ExportStats* stats) {
  *stats = ExportStats{};
  PerfettoSink sink(out_path, stats);
  return ExportRun(run_path, options, &sink);
}

}  // namespace iotap::analyzer
