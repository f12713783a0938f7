// A strict reader of the two Prometheus text formats, for tests: the text
// format 0.0.4 the node exporter's textfile collector reads, and OpenMetrics
// 1.0 text (what a scrape of `iotap top --listen` answers). Debian's
// promtool comes only with the whole Prometheus server (about 100 MB), so
// the tests check with this instead.
//
//   absl::StatusOr<ParsedMetrics> m = ParseMetrics(text, MetricsSyntax::kOpenMetrics);
//   // m.status(): the first line that breaks a rule, and which rule
//   m->samples.at("iotap_read_bytes_total{job=\"x\",layer=\"POSIX\"}")
//
// Checked: metric and label names, label values and their escapes, values
// (floats, NaN, +Inf, -Inf), that every sample follows its family's HELP
// and TYPE lines, that a family's samples are together and come once each,
// known types, and for OpenMetrics: counters' samples end in _total and
// are not negative, no empty lines, no comments but HELP, TYPE and UNIT, and
// "# EOF" last.

#ifndef IOTAP_ANALYZER_TESTING_METRICS_CHECK_H_
#define IOTAP_ANALYZER_TESTING_METRICS_CHECK_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"

namespace iotap::analyzer {

enum class MetricsSyntax { kPrometheus, kOpenMetrics };

struct ParsedMetrics {
  // By the sample's name and labels, labels sorted by name:
  // name{a="1",b="2"}, or name alone without labels.
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;  // by family
};

absl::StatusOr<ParsedMetrics> ParseMetrics(const std::string& text, MetricsSyntax syntax);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_TESTING_METRICS_CHECK_H_
