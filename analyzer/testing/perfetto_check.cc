#include "analyzer/testing/perfetto_check.h"

#include "absl/strings/str_cat.h"

namespace iotap::analyzer {

namespace {

namespace pf = ::perfetto::protos;

// The path of the first field of `m` (or of a message inside it) that the
// schema does not know, or "" if there is none.
std::string UnknownField(const google::protobuf::Message& m) {
  const google::protobuf::Reflection* r = m.GetReflection();
  const google::protobuf::UnknownFieldSet& unknown = r->GetUnknownFields(m);
  if (!unknown.empty()) return absl::StrCat(m.GetTypeName(), " field ", unknown.field(0).number());
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const auto* f : fields) {
    if (f->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      std::string found =
          UnknownField(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f));
      if (!found.empty()) return found;
    }
  }
  return "";
}

struct Sequence {
  std::map<uint64_t, std::string> names, categories, annotation_names, values;
  bool cleared = false;
};

}  // namespace

DecodedTrace DecodePerfettoTrace(const std::string& bytes) {
  DecodedTrace d;
  auto problem = [&](uint64_t packet, const std::string& what) {
    if (d.problems.size() < 50) d.problems.push_back(absl::StrCat("packet ", packet, ": ", what));
  };
  pf::Trace trace;
  if (!trace.ParseFromString(bytes)) {
    d.problems.push_back("the bytes are not a perfetto.protos.Trace");
    return d;
  }
  std::map<uint32_t, Sequence> sequences;
  std::map<uint64_t, std::vector<size_t>> open;  // per track, the slices begun (indices)
  std::map<uint64_t, uint64_t> last_ts;
  for (const pf::TracePacket& p : trace.packet()) {
    const uint64_t at = d.packets++;
    if (std::string field = UnknownField(p); !field.empty()) problem(at, "unknown " + field);
    if (!p.has_trusted_packet_sequence_id()) problem(at, "no sequence id");
    Sequence& seq = sequences[p.trusted_packet_sequence_id()];
    if (p.sequence_flags() & pf::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED) {
      seq = Sequence();
      seq.cleared = true;
    }
    const pf::InternedData& fresh = p.interned_data();
    for (const auto& n : fresh.event_names()) seq.names[n.iid()] = n.name();
    for (const auto& n : fresh.event_categories()) seq.categories[n.iid()] = n.name();
    for (const auto& n : fresh.debug_annotation_names()) seq.annotation_names[n.iid()] = n.name();
    for (const auto& n : fresh.debug_annotation_string_values()) seq.values[n.iid()] = n.str();
    if (p.has_interned_data() && !seq.cleared)
      problem(at, "interned data before the sequence was cleared");
    if (p.has_track_descriptor()) {
      const uint64_t uuid = p.track_descriptor().uuid();
      if (uuid == 0 || d.tracks.count(uuid) != 0) problem(at, "track uuid 0 or described twice");
      d.tracks[uuid] = p.track_descriptor();
      continue;
    }
    if (!p.has_track_event()) {
      problem(at, "neither a track descriptor nor a track event");
      continue;
    }
    const pf::TrackEvent& e = p.track_event();
    const uint64_t track = e.track_uuid();
    if (d.tracks.count(track) == 0) problem(at, absl::StrCat("event on undescribed track ", track));
    const bool counter_track = d.tracks[track].has_counter();
    if (p.timestamp() < last_ts[track]) problem(at, absl::StrCat("out of order on track ", track));
    last_ts[track] = p.timestamp();
    std::vector<size_t>& stack = open[track];
    std::vector<DecodedSlice>& slices = d.slices[track];
    switch (e.type()) {
      case pf::TrackEvent::TYPE_COUNTER:
        if (!counter_track || !e.has_double_counter_value())
          problem(at, "a counter value out of place");
        ++d.counter_values[track];
        break;
      case pf::TrackEvent::TYPE_SLICE_END:
        if (stack.empty()) problem(at, absl::StrCat("an end without a begin on track ", track));
        if (!stack.empty()) {
          slices[stack.back()].end_ns = p.timestamp();
          stack.pop_back();
        }
        break;
      case pf::TrackEvent::TYPE_SLICE_BEGIN:
      case pf::TrackEvent::TYPE_INSTANT: {
        if (counter_track) problem(at, "a slice on a counter track");
        if (!(p.sequence_flags() & pf::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE)) {
          problem(at, "uses interned data without SEQ_NEEDS_INCREMENTAL_STATE");
        }
        if (seq.names.count(e.name_iid()) == 0) problem(at, "name iid not interned");
        for (uint64_t c : e.category_iids()) {
          if (seq.categories.count(c) == 0) problem(at, "category iid not interned");
        }
        DecodedSlice s;
        s.name = seq.names[e.name_iid()];
        s.parent = stack.empty() ? "" : slices[stack.back()].name;
        s.start_ns = s.end_ns = p.timestamp();
        for (const pf::DebugAnnotation& a : e.debug_annotations()) {
          if (seq.annotation_names.count(a.name_iid()) == 0)
            problem(at, "annotation name not interned");
          const std::string& key = seq.annotation_names[a.name_iid()];
          if (key == "file") {
            if (seq.values.count(a.string_value_iid()) == 0)
              problem(at, "file string not interned");
            s.file = seq.values[a.string_value_iid()];
          }
          if (key == "bytes") s.bytes = a.uint_value();
          if (key == "offset") s.offset = a.int_value();
          if (key == "major") s.major = a.bool_value() ? 1 : 0;
          if (key == "span_estimated") s.span_estimated = a.bool_value() ? 1 : 0;
          if (key == "completion_seen") s.completion_seen = a.bool_value() ? 1 : 0;
        }
        slices.push_back(s);
        if (e.type() == pf::TrackEvent::TYPE_SLICE_BEGIN) stack.push_back(slices.size() - 1);
        break;
      }
      default:
        problem(at, "an event of no type");
    }
  }
  for (const auto& [track, stack] : open) {
    if (!stack.empty())
      d.problems.push_back(absl::StrCat(stack.size(), " slices left open on track ", track));
  }
  return d;
}

}  // namespace iotap::analyzer
