// Reads back a Perfetto trace that `iotap export --perfetto` wrote, with the
// schema of the fields it writes (proto/perfetto/trace.proto), and checks the
// rules a Perfetto trace must keep; for the export's tests and for
// tests/viewer/check_perfetto, which runs it on a real job's trace.
//
//   DecodedTrace t = DecodePerfettoTrace(bytes);
//   for (const std::string& p : t.problems) std::cerr << p << "\n";
//
// The rules: the bytes parse; no field is unknown to the schema (one would be
// a field the writer got wrong); every packet names its sequence; interned
// names, categories, annotation names and strings are defined on their
// sequence, after it was cleared, before they are used; every event's track
// was described before it; on each track, events come in time order, every
// slice that begins ends, ends match begins (proper nesting), and no slice
// is left open; counters only on counter tracks, slices never on them.

#ifndef IOTAP_ANALYZER_TESTING_PERFETTO_CHECK_H_
#define IOTAP_ANALYZER_TESTING_PERFETTO_CHECK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "perfetto/trace.pb.h"

namespace iotap::analyzer {

// A slice (or instant) as the trace says it.
struct DecodedSlice {
  std::string name;
  std::string parent;                 // the slice open around it on its track, "" if none
  std::string file;                   // the "file" annotation
  uint64_t bytes = 0;                 // the "bytes" annotation
  int64_t offset = -1;                // the "offset" annotation, -1 if none
  int major = -1;                     // the "major" annotation (1 true, 0 false), -1 if none
  // The "span_estimated" and "completion_seen" annotations, likewise.
  int span_estimated = -1;
  int completion_seen = -1;
  uint64_t start_ns = 0, end_ns = 0;  // the begin's timestamp, and the end's (= start: instant)
};

struct DecodedTrace {
  std::map<uint64_t, perfetto::protos::TrackDescriptor> tracks;  // by uuid
  std::map<uint64_t, std::vector<DecodedSlice>> slices;          // by track, in order
  std::map<uint64_t, int> counter_values;                        // by track
  uint64_t packets = 0;
  std::vector<std::string> problems;  // broken rules, the first 50
};

DecodedTrace DecodePerfettoTrace(const std::string& bytes);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_TESTING_PERFETTO_CHECK_H_
