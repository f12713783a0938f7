#include "analyzer/output/report_mapped_output.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

using report::Report;

int64_t N(double v) { return static_cast<int64_t>(v); }

// A layer's count in its unit (report.proto, Layer.unit): its page faults
// and how many were major, its requests and the calls that carried them, or
// its calls.
std::string LayerCount(const Report& r, const report::Layer& l) {
  if (l.unit() == "faults") {
    return absl::StrFormat("%d faults (%d major)", N(l.reads()),
                           N(r.mapped_reads().major_faults()));
  }
  if (l.unit() == "requests") {
    return absl::StrFormat("%d requests in %d calls", N(r.io_uring().requests()),
                           N(r.io_uring().calls()));
  }
  return absl::StrFormat("%d calls", N(l.ops()));
}

// "perf samples in 2 processes", "thread counters in 1 process", or both.
std::string Source(const report::MappedReads& m) {
  auto in = [](const char* what, double n) {
    return absl::StrFormat("%s in %d process%s", what, N(n), n == 1 ? "" : "es");
  };
  std::string out;
  if (m.processes_sampled() > 0) out = in("perf samples", m.processes_sampled());
  if (m.processes_counted() > 0) {
    absl::StrAppend(&out, out.empty() ? "" : " and ", in("thread counters", m.processes_counted()));
  }
  return out.empty() ? m.source() : out;
}

std::string MoreFiles(double listed, double all) {
  return all > listed ? absl::StrFormat("%d more files, in the sums above", N(all - listed)) : "";
}

}  // namespace

std::string LayersToText(const Report& r) {
  std::string out = "\nLayers\n";
  for (const report::Layer& l : r.layers()) {
    if (l.unit() == "faults") {
      absl::StrAppendFormat(&out,
                            "  %-8s %10d faults mapping %s (%d major), %s in major faults, "
                            "busy %s\n",
                            DisplayName(l.name()), N(l.reads()), HumanBytes(l.read_bytes()),
                            N(r.mapped_reads().major_faults()), HumanDuration(l.time_s()),
                            HumanDuration(l.busy_s()));
    } else if (l.unit() == "requests") {
      absl::StrAppendFormat(&out,
                            "  %-8s %10d requests, %9d reads (%s), %9d writes (%s), in %d "
                            "calls, busy %s\n",
                            DisplayName(l.name()), N(r.io_uring().requests()), N(l.reads()),
                            HumanBytes(l.read_bytes()), N(l.writes()), HumanBytes(l.write_bytes()),
                            N(r.io_uring().calls()), HumanDuration(l.busy_s()));
    } else {
      absl::StrAppendFormat(&out,
                            "  %-8s %10d calls, %9d reads (%s), %9d writes (%s), %s in "
                            "calls, busy %s\n",
                            DisplayName(l.name()), N(l.ops()), N(l.reads()),
                            HumanBytes(l.read_bytes()), N(l.writes()), HumanBytes(l.write_bytes()),
                            HumanDuration(l.time_s()), HumanDuration(l.busy_s()));
    }
  }
  return out;
}

std::string LayersToMarkdown(const Report& r) {
  std::string out =
      "\n### Layers\n\n| layer | count | reads | read | writes | written | time in them | busy |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const report::Layer& l : r.layers()) {
    absl::StrAppendFormat(&out, "| %s | %s | %d | %s | %d | %s | %s | %s |\n",
                          MarkdownText(l.name()), LayerCount(r, l), N(l.reads()),
                          HumanBytes(l.read_bytes()), N(l.writes()), HumanBytes(l.write_bytes()),
                          HumanDuration(l.time_s()), HumanDuration(l.busy_s()));
  }
  return out;
}

std::string MappedReadsToText(const Report& r) {
  std::string out;
  if (r.has_mapped_reads()) {
    const report::MappedReads& m = r.mapped_reads();
    absl::StrAppendFormat(&out, "\nMapped reads (page faults in file mappings, seen by %s)\n",
                          DisplayName(Source(m)));
    if (m.faults() > 0 || m.processes_sampled() > 0) {
      absl::StrAppendFormat(
          &out,
          "  %d faults, %d major (%s waiting for storage), mapped %s, of which the "
          "program touched at least %s\n",
          N(m.faults()), N(m.major_faults()), HumanDuration(m.major_s()),
          HumanBytes(m.span_bytes()), HumanBytes(m.touched_bytes()));
    }
    if (m.processes_counted() > 0) {
      absl::StrAppendFormat(&out, "  counted: %d minor and %d major faults, %s read from storage\n",
                            N(m.counted_minor_faults()), N(m.counted_major_faults()),
                            HumanBytes(m.counted_read_bytes()));
    }
    for (const std::string& c : m.caveats()) absl::StrAppend(&out, "  - ", DisplayName(c), "\n");
    if (m.files_size() > 0) {
      absl::StrAppend(&out, "      faults      major  major time       span    touched  file\n");
    }
    for (const report::MappedFile& f : m.files()) {
      absl::StrAppendFormat(
          &out, "  %10d %10d %11s %10s %10s  %s%s\n", N(f.faults()), N(f.major_faults()),
          HumanDuration(f.major_s()), HumanBytes(f.span_bytes()), HumanBytes(f.touched_bytes()),
          DisplayName(f.path()), f.estimated_spans() > 0 ? " (some spans estimated)" : "");
    }
    if (std::string more = MoreFiles(m.files_size(), m.file_count()); !more.empty()) {
      absl::StrAppend(&out, "  (", more, ")\n");
    }
  }
  if (r.has_io_uring()) {
    const report::UringRequests& u = r.io_uring();
    absl::StrAppendFormat(&out, "\nio_uring requests (%d, in %d calls into the kernel)\n",
                          N(u.requests()), N(u.calls()));
    absl::StrAppendFormat(
        &out,
        "  %d reads (%s, %s submit to completion), %d writes (%s), %d other, %d failed, "
        "%d without a completion seen\n",
        N(u.reads()), HumanBytes(u.read_bytes()), HumanDuration(u.read_seconds()), N(u.writes()),
        HumanBytes(u.write_bytes()), N(u.other()), N(u.failed()), N(u.incomplete()));
    for (const std::string& c : u.caveats()) absl::StrAppend(&out, "  - ", DisplayName(c), "\n");
    if (u.files_size() > 0) {
      absl::StrAppend(
          &out, "       reads         read     writes      written  other incomplete  file\n");
    }
    for (const report::UringFile& f : u.files()) {
      absl::StrAppendFormat(&out, "  %10d %12s %10d %12s %6d %10d  %s\n", N(f.reads()),
                            HumanBytes(f.read_bytes()), N(f.writes()), HumanBytes(f.write_bytes()),
                            N(f.other()), N(f.incomplete()), DisplayName(f.path()));
    }
    if (std::string more = MoreFiles(u.files_size(), u.file_count()); !more.empty()) {
      absl::StrAppend(&out, "  (", more, ")\n");
    }
  }
  return out;
}

std::string MappedReadsToMarkdown(const Report& r) {
  std::string out;
  if (r.has_mapped_reads()) {
    const report::MappedReads& m = r.mapped_reads();
    absl::StrAppendFormat(&out, "\n### Mapped reads\n\nPage faults in file mappings, seen by %s.",
                          MarkdownText(Source(m)));
    if (m.faults() > 0 || m.processes_sampled() > 0) {
      absl::StrAppendFormat(
          &out,
          " %d faults, %d major (%s waiting for storage), mapped %s, of which the program "
          "touched at least %s.",
          N(m.faults()), N(m.major_faults()), HumanDuration(m.major_s()),
          HumanBytes(m.span_bytes()), HumanBytes(m.touched_bytes()));
    }
    if (m.processes_counted() > 0) {
      absl::StrAppendFormat(&out, " Counted: %d minor and %d major faults, %s read from storage.",
                            N(m.counted_minor_faults()), N(m.counted_major_faults()),
                            HumanBytes(m.counted_read_bytes()));
    }
    absl::StrAppend(&out, "\n\n");
    for (const std::string& c : m.caveats()) absl::StrAppend(&out, "- ", MarkdownText(c), "\n");
    if (m.files_size() > 0) {
      absl::StrAppend(&out,
                      "\n| file | faults | major | major time | span | touched |\n"
                      "|---|---:|---:|---:|---:|---:|\n");
    }
    int rows = std::min(m.files_size(), kMarkdownFileRows);
    for (const report::MappedFile& f : m.files()) {
      if (rows-- == 0) break;
      absl::StrAppendFormat(&out, "| %s%s | %d | %d | %s | %s | %s |\n", MarkdownText(f.path()),
                            f.estimated_spans() > 0 ? " (some spans estimated)" : "", N(f.faults()),
                            N(f.major_faults()), HumanDuration(f.major_s()),
                            HumanBytes(f.span_bytes()), HumanBytes(f.touched_bytes()));
    }
    if (std::string more = MoreFiles(std::min(m.files_size(), kMarkdownFileRows), m.file_count());
        !more.empty()) {
      absl::StrAppend(&out, "\n", more, ".\n");
    }
  }
  if (r.has_io_uring()) {
    const report::UringRequests& u = r.io_uring();
    absl::StrAppendFormat(
        &out,
        "\n### io_uring requests\n\n%d requests in %d calls into the kernel: %d reads (%s, "
        "%s submit to completion), %d writes (%s), %d other, %d failed, %d without a completion "
        "seen.\n\n",
        N(u.requests()), N(u.calls()), N(u.reads()), HumanBytes(u.read_bytes()),
        HumanDuration(u.read_seconds()), N(u.writes()), HumanBytes(u.write_bytes()), N(u.other()),
        N(u.failed()), N(u.incomplete()));
    for (const std::string& c : u.caveats()) absl::StrAppend(&out, "- ", MarkdownText(c), "\n");
    if (u.files_size() > 0) {
      absl::StrAppend(&out,
                      "\n| file | reads | read | writes | written | other | incomplete |\n"
                      "|---|---:|---:|---:|---:|---:|---:|\n");
    }
    int rows = std::min(u.files_size(), kMarkdownFileRows);
    for (const report::UringFile& f : u.files()) {
      if (rows-- == 0) break;
      absl::StrAppendFormat(&out, "| %s | %d | %s | %d | %s | %d | %d |\n", MarkdownText(f.path()),
                            N(f.reads()), HumanBytes(f.read_bytes()), N(f.writes()),
                            HumanBytes(f.write_bytes()), N(f.other()), N(f.incomplete()));
    }
    if (std::string more = MoreFiles(std::min(u.files_size(), kMarkdownFileRows), u.file_count());
        !more.empty()) {
      absl::StrAppend(&out, "\n", more, ".\n");
    }
  }
  return out;
}

}  // namespace iotap::analyzer
