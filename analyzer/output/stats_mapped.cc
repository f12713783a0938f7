// The mapped-read and io_uring sections of `iotap stats` (issue 15).

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/text.h"
#include "analyzer/output/stats_sections.h"

namespace iotap::analyzer::internal {

void MappedToJson(const stats::Stats& s, JsonWriter& j) {
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  const stats::MappedReads& m = s.mapped_reads();
  j.Key("mapped_reads");
  j.BeginObject();
  uint("processes_sampled", m.processes_sampled());
  uint("processes_counted", m.processes_counted());
  uint("lost_faults", m.lost_faults());
  uint("counted_minor_faults", m.counted_minor_faults());
  uint("counted_major_faults", m.counted_major_faults());
  uint("counted_read_bytes", m.counted_read_bytes());
  j.Key("notes");
  j.BeginArray();
  for (const std::string& n : m.notes()) j.String(n);
  j.EndArray();
  j.Key("files");
  j.BeginArray();
  for (const stats::MappedFile& f : m.files()) {
    j.BeginObject();
    j.Key("path");
    j.String(f.path());
    uint("faults", f.faults());
    uint("major_faults", f.major_faults());
    uint("span_bytes", f.span_bytes());
    uint("touched_bytes", f.touched_bytes());
    uint("estimated_spans", f.estimated_spans());
    j.Key("major_s");
    j.Double(f.major_s());
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  const stats::IoUring& u = s.io_uring();
  j.Key("io_uring");
  j.BeginObject();
  uint("calls", u.calls());
  uint("unseen_requests", u.unseen_requests());
  j.Key("files");
  j.BeginArray();
  for (const stats::UringFile& f : u.files()) {
    j.BeginObject();
    j.Key("path");
    j.String(f.path());
    uint("reads", f.reads());
    uint("read_bytes", f.read_bytes());
    uint("writes", f.writes());
    uint("write_bytes", f.write_bytes());
    uint("other", f.other());
    uint("failed", f.failed());
    uint("incomplete", f.incomplete());
    j.Key("read_s");
    j.Double(f.read_seconds());
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

std::string MappedToText(const stats::Stats& s) {
  const stats::MappedReads& m = s.mapped_reads();
  const stats::IoUring& u = s.io_uring();
  const bool faults = m.processes_sampled() + m.processes_counted() > 0;
  const bool uring = u.files_size() > 0 || u.calls() > 0 || u.unseen_requests() > 0;
  if (!faults && !uring && m.files_size() == 0) return "";
  std::string out;
  if (faults) {
    absl::StrAppendFormat(&out,
                          "mapped reads: page faults sampled in %d processes, counted only in %d\n",
                          m.processes_sampled(), m.processes_counted());
    for (const std::string& n : m.notes()) {
      absl::StrAppend(&out, "  not sampled: ", DisplayName(n), "\n");
    }
    if (m.lost_faults() > 0) {
      absl::StrAppendFormat(&out, "  %d faults lost (the kernel's sample buffers were full)\n",
                            m.lost_faults());
    }
    if (m.processes_counted() > 0) {
      absl::StrAppendFormat(&out,
                            "  counted while data files were mapped (any memory, no file named): "
                            "%d minor faults, %d major, %s read from storage\n",
                            m.counted_minor_faults(), m.counted_major_faults(),
                            HumanBytes(static_cast<double>(m.counted_read_bytes())));
    }
  }
  if (m.files_size() > 0) {
    absl::StrAppend(&out, "\n    faults      major   major time      span    touched  file\n");
    for (const stats::MappedFile& f : m.files()) {
      absl::StrAppendFormat(&out, "%10d %10d %11.3fs %9s %10s  %s%s\n", f.faults(),
                            f.major_faults(), f.major_s(),
                            HumanBytes(static_cast<double>(f.span_bytes())),
                            HumanBytes(static_cast<double>(f.touched_bytes())),
                            DisplayName(f.path()),
                            f.estimated_spans() > 0 ? " (some spans estimated)" : "");
    }
  }
  if (uring) {
    absl::StrAppendFormat(&out, "\nio_uring: %d calls into the kernel\n", u.calls());
    if (u.unseen_requests() > 0) {
      absl::StrAppendFormat(&out,
                            "  %d requests submitted by system calls the shim cannot see (the "
                            "program's own syscall instruction): counted, files and sizes "
                            "unknown\n",
                            u.unseen_requests());
    }
    absl::StrAppend(&out,
                    "     reads         read     writes      written  other incomplete  file\n");
    for (const stats::UringFile& f : u.files()) {
      absl::StrAppendFormat(&out, "%10d %12s %10d %12s %6d %10d  %s\n", f.reads(),
                            HumanBytes(static_cast<double>(f.read_bytes())), f.writes(),
                            HumanBytes(static_cast<double>(f.write_bytes())), f.other(),
                            f.incomplete(), DisplayName(f.path()));
    }
  }
  return out;
}

}  // namespace iotap::analyzer::internal
