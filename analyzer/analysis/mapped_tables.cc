// The report's mapped reads and io_uring requests (issue 15), from the one
// MappedAccumulator of the run (the figures `iotap stats` prints), and the
// caveats that say what those figures cannot show.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer::run_state {

namespace {

double D(uint64_t v) { return static_cast<double>(v); }

// Faults come as events only from perf samples, so a run with faults had
// them even if no process said so (traces written before FaultSampling).
const char* SourceName(const MappedTotals& t) {
  const bool sampled = t.processes_sampled > 0 || !t.mapped.empty();
  if (sampled && t.processes_counted > 0) return "perf samples and thread counters";
  if (sampled) return "perf samples";
  if (t.processes_counted > 0) return "thread counters";
  return "";
}

void FillMappedReads(const MappedTotals& t, size_t top, report::MappedReads* m) {
  m->set_source(SourceName(t));
  m->set_processes_sampled(D(t.processes_sampled));
  m->set_processes_counted(D(t.processes_counted));
  for (const std::string& n : t.notes) m->add_notes(ValidUtf8(n));
  m->set_lost_faults(D(t.lost_faults));
  m->set_counted_minor_faults(D(t.counted_minor_faults));
  m->set_counted_major_faults(D(t.counted_major_faults));
  m->set_counted_read_bytes(D(t.counted_read_bytes));
  m->set_file_count(D(t.mapped.size()));
  // Sums as doubles, as every report figure: exact to 2^53.
  for (const MappedFileStats& f : t.mapped) {
    m->set_faults(m->faults() + D(f.faults));
    m->set_major_faults(m->major_faults() + D(f.major_faults));
    m->set_span_bytes(m->span_bytes() + D(f.span_bytes));
    m->set_touched_bytes(m->touched_bytes() + D(f.touched_bytes));
    m->set_estimated_spans(m->estimated_spans() + D(f.estimated_spans));
    m->set_major_s(m->major_s() + Seconds(f.major_ns));
    if (static_cast<size_t>(m->files_size()) == top) continue;
    report::MappedFile* o = m->add_files();
    o->set_path(ValidUtf8(f.path));
    o->set_faults(D(f.faults));
    o->set_major_faults(D(f.major_faults));
    o->set_span_bytes(D(f.span_bytes));
    o->set_touched_bytes(D(f.touched_bytes));
    o->set_estimated_spans(D(f.estimated_spans));
    o->set_major_s(Seconds(f.major_ns));
  }
}

void FillUring(const MappedTotals& t, size_t top, report::UringRequests* u) {
  u->set_calls(D(t.uring_calls));
  u->set_unseen_requests(D(t.uring_unseen_requests));
  u->set_file_count(D(t.uring.size()));
  for (const UringFileStats& f : t.uring) {
    u->set_requests(u->requests() + D(f.reads) + D(f.writes) + D(f.other));
    u->set_reads(u->reads() + D(f.reads));
    u->set_read_bytes(u->read_bytes() + D(f.read_bytes));
    u->set_writes(u->writes() + D(f.writes));
    u->set_write_bytes(u->write_bytes() + D(f.write_bytes));
    u->set_other(u->other() + D(f.other));
    u->set_failed(u->failed() + D(f.failed));
    u->set_incomplete(u->incomplete() + D(f.incomplete));
    u->set_read_seconds(u->read_seconds() + Seconds(f.read_ns));
    if (static_cast<size_t>(u->files_size()) == top) continue;
    report::UringFile* o = u->add_files();
    o->set_path(ValidUtf8(f.path));
    o->set_reads(D(f.reads));
    o->set_read_bytes(D(f.read_bytes));
    o->set_writes(D(f.writes));
    o->set_write_bytes(D(f.write_bytes));
    o->set_other(D(f.other));
    o->set_failed(D(f.failed));
    o->set_incomplete(D(f.incomplete));
    o->set_read_seconds(Seconds(f.read_ns));
  }
}

// What the figures cannot show, in sentences (report.proto's caveats).
void MappedCaveats(report::MappedReads* m) {
  m->add_caveats(
      "re-reads of pages already mapped and the kernel's own access to a mapping (a write() "
      "from mapped memory) cause no page fault: they are not seen");
  if (m->lost_faults() > 0) {
    m->add_caveats(absl::StrFormat(
        "%d page faults were lost (the kernel's sample buffers were full): the fault figures "
        "are lower bounds",
        static_cast<int64_t>(m->lost_faults())));
  }
  if (m->processes_counted() > 0) {
    std::string why;
    for (const std::string& n : m->notes()) absl::StrAppend(&why, why.empty() ? "" : "; ", n);
    m->add_caveats(absl::StrFormat(
        "in %d process%s the kernel refused the page-fault samples%s: their faults are only "
        "counted, per thread, in any memory while data files were mapped, with no file named",
        static_cast<int64_t>(m->processes_counted()), m->processes_counted() == 1 ? "" : "es",
        why.empty() ? "" : absl::StrCat(" (", why, ")")));
  }
}

void UringCaveats(report::UringRequests* u) {
  if (u->incomplete() > 0) {
    u->add_caveats(absl::StrFormat(
        "%d of %d requests had no completion the tracer saw: they are counted, their results "
        "and durations are unknown (none is assumed)",
        static_cast<int64_t>(u->incomplete()), static_cast<int64_t>(u->requests())));
  }
  if (u->unseen_requests() > 0) {
    u->add_caveats(absl::StrFormat(
        "%d requests were submitted by system calls the tracer cannot see (the program's own "
        "syscall instruction): counted when their ring went away, their files, sizes and "
        "completions unknown, and in no other figure",
        static_cast<int64_t>(u->unseen_requests())));
  }
}

}  // namespace

void BuildMappedTables(const RunState& s, int top_files, report::Report* r) {
  const MappedTotals t = s.mapped.Totals();
  const size_t top = static_cast<size_t>(std::max(0, top_files));
  const bool mapped = t.processes_sampled + t.processes_counted > 0 || !t.mapped.empty() ||
                      !t.notes.empty() || t.lost_faults > 0;
  const bool uring = !t.uring.empty() || t.uring_calls > 0 || t.uring_unseen_requests > 0;
  if (mapped) {
    FillMappedReads(t, top, r->mutable_mapped_reads());
    MappedCaveats(r->mutable_mapped_reads());
  }
  if (uring) {
    FillUring(t, top, r->mutable_io_uring());
    UringCaveats(r->mutable_io_uring());
  }
}

}  // namespace iotap::analyzer::run_state
