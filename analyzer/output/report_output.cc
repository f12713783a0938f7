#include "analyzer/output/report_output.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/output/py_profile_output.h"
#include "analyzer/output/report_mapped_output.h"
#include "google/protobuf/util/json_util.h"

namespace iotap::analyzer {

namespace {

using report::Report;

const char* SeverityName(report::Finding::Severity s) {
  switch (s) {
    case report::Finding::CRITICAL:
      return "CRITICAL";
    case report::Finding::WARNING:
      return "WARNING";
    default:
      return "INFO";
  }
}

const char* RoleName(report::Role r) {
  switch (r) {
    case report::TRAINER:
      return "trainer";
    case report::LOADER:
      return "loader";
    case report::HELPER:
      return "helper";
    default:
      return "?";
  }
}

// At most `max` bytes of UTF-8 `s`, never cutting a character in two.
std::string Prefix(const std::string& s, size_t max) {
  if (s.size() <= max) return s;
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return s.substr(0, n);
}

std::string Percent(double share) { return absl::StrFormat("%.0f%%", share * 100); }

std::string Command(const Report& r) {
  std::vector<std::string> shown;
  for (const std::string& a : r.run().command()) shown.push_back(DisplayName(a));
  return absl::StrJoin(shown, " ");
}

struct Counts {
  int trainers = 0, loaders = 0, helpers = 0;
};

Counts RoleCounts(const Report& r) {
  Counts c;
  for (const report::Process& p : r.processes()) {
    if (p.role() == report::TRAINER) ++c.trainers;
    if (p.role() == report::LOADER) ++c.loaders;
    if (p.role() == report::HELPER) ++c.helpers;
  }
  return c;
}

// Where the data waits come from: measured by the step source, inferred
// from the trace, or both and how well they agree (empty: no waits known).
std::string WaitSourceLine(const report::StepStatistics& st) {
  const report::DataWaits& w = st.data_waits();
  std::vector<std::string> parts;
  if (w.measured_steps() > 0) {
    parts.push_back(absl::StrFormat("measured (%s) for %d steps",
                                    absl::StrJoin(w.measured_by(), ", "),
                                    static_cast<int64_t>(w.measured_steps())));
  }
  if (w.inferred_steps() > 0) {
    std::vector<std::string> how;
    for (const report::InferredWaits& by : w.inferred_by()) {
      how.push_back(absl::StrCat(by.how(), ": ", HumanDuration(by.wait_s())));
    }
    parts.push_back(absl::StrFormat(
        "inferred from the trace for %d steps%s", static_cast<int64_t>(w.inferred_steps()),
        how.empty() ? std::string(" (they show no wait)")
                    : absl::StrCat(" (", absl::StrJoin(how, "; "), ")")));
  }
  if (w.compared_steps() > 0) {
    parts.push_back(absl::StrFormat(
        "inferred from the trace too: %s of step time against %s measured, during %s of the "
        "measured wait",
        Percent(w.inferred_stall_share()), Percent(w.measured_stall_share()),
        Percent(w.agreement_share())));
  }
  return parts.empty() ? "" : absl::StrCat("data waits: ", absl::StrJoin(parts, "; "));
}

// The run at a glance, one fact a line; shared by text and Markdown.
std::vector<std::string> Glance(const Report& r) {
  const report::Run& run = r.run();
  Counts c = RoleCounts(r);
  std::vector<std::string> lines;
  lines.push_back(absl::StrFormat(
      "%s, %d processes on %d host%s (%d trainer%s, %d loader%s, %d helper%s)",
      HumanDuration(run.duration_s()), static_cast<int>(run.processes()), run.hosts_size(),
      run.hosts_size() == 1 ? "" : "s", c.trainers, c.trainers == 1 ? "" : "s", c.loaders,
      c.loaders == 1 ? "" : "s", c.helpers, c.helpers == 1 ? "" : "s"));
  if (run.has_range_to_s()) {
    lines.push_back(
        absl::StrFormat("figures for %s to %s after the run's start only (--from, --to)",
                        HumanDuration(run.range_from_s()), HumanDuration(run.range_to_s())));
  }
  lines.push_back(absl::StrFormat(
      "read %s (%s over the run), wrote %s", HumanBytes(run.bytes_read()),
      HumanRate(run.read_throughput_bytes_per_s()), HumanBytes(run.bytes_written())));
  lines.push_back(absl::StrFormat("I/O busy %s (union of every process's data-file I/O)",
                                  HumanDuration(run.io_busy_s())));
  const report::StepStatistics& st = r.step_statistics();
  if (run.steps() > 0) {
    lines.push_back(absl::StrFormat(
        "%d steps, median %s, p90 %s (first step of each trainer "
        "left out of statistics: %d)",
        static_cast<int>(run.steps()), HumanDuration(st.median_step_s()),
        HumanDuration(st.p90_step_s()), static_cast<int>(st.warmup_steps_skipped())));
  }
  const report::BetweenSteps& between = st.between_steps();
  if (run.data_stall_share() >= 0) {
    lines.push_back(absl::StrFormat(
        "data stall: %s of step time waiting for data (of the wait: fetch %s, preparation %s, "
        "other %s)",
        Percent(run.data_stall_share()), Percent(st.fetch_share()), Percent(st.prep_share()),
        Percent(st.other_share())));
    if (std::string source = WaitSourceLine(st); !source.empty()) lines.push_back(source);
    const report::Overlap& o = r.overlap();
    lines.push_back(absl::StrFormat(
        "I/O hidden behind compute: %s of %s (%s); exposed while waiting: %s",
        HumanDuration(o.hidden_io_s()), HumanDuration(o.hidden_io_s() + o.exposed_io_s()),
        Percent(o.hidden_share()), HumanDuration(o.exposed_io_s())));
  } else if (run.steps() > 0) {
    lines.push_back(
        "data stall: unknown (the step source does not say when steps waited, and the trace "
        "holds no waits to infer them from)");
  }
  // Gaps under a percent are the loop's own bookkeeping between its timings.
  if (between.share() >= 0.01) {
    lines.push_back(absl::StrFormat(
        "between steps: %s of the trainer's time (%s in %d gaps between logged steps, counted "
        "as waiting; fetch %s, preparation %s, other %s)",
        Percent(between.share()), HumanDuration(between.total_s()),
        static_cast<int64_t>(between.gaps()), Percent(between.fetch_share()),
        Percent(between.prep_share()), Percent(between.other_share())));
  }
  lines.push_back(absl::StrFormat(
      "%d events traced, %d dropped, %d trace files", static_cast<int64_t>(run.events()),
      static_cast<int64_t>(run.dropped_events()), static_cast<int64_t>(run.trace_files())));
  return lines;
}

// A file's (or a directory's) reads in their units: "    90 calls" as
// always, "   128 faults" for one read only through mappings, "3 calls, 128
// faults, 24 requests" for a mix.
std::string ReadCount(const report::File& f) {
  int64_t faults = static_cast<int64_t>(f.mapped_faults());
  int64_t requests = static_cast<int64_t>(f.uring_reads());
  int64_t calls = static_cast<int64_t>(f.reads()) - faults - requests;
  if (faults == 0 && requests == 0) return absl::StrFormat("%7d calls", calls);
  std::vector<std::string> parts;
  if (calls != 0) parts.push_back(absl::StrCat(calls, " calls"));
  if (faults != 0) parts.push_back(absl::StrCat(faults, " faults"));
  if (requests != 0) parts.push_back(absl::StrCat(requests, " requests"));
  std::string joined = absl::StrJoin(parts, ", ");
  return parts.size() == 1 ? absl::StrFormat("%*s", 7 + (faults != 0 ? 7 : 9), joined) : joined;
}

}  // namespace

// Beyond this many data files, the text report lists directories and only
// the first kRowsOfMany files.
constexpr int kManyFiles = 20;
constexpr int kRowsOfMany = 10;

std::string ReportToText(const Report& r) {
  std::string out = absl::StrCat("iotap report: ", Command(r), "\n");
  for (const std::string& line : Glance(r)) absl::StrAppend(&out, "  ", line, "\n");
  absl::StrAppend(&out, "\nFindings\n");
  if (r.findings_size() == 0) absl::StrAppend(&out, "  (none)\n");
  for (int i = 0; i < r.findings_size(); ++i) {
    const report::Finding& f = r.findings(i);
    absl::StrAppendFormat(&out, "  %d. [%s] %s\n     %s\n", i + 1, SeverityName(f.severity()),
                          DisplayName(f.title()), DisplayName(f.summary()));
    for (const report::Evidence& e : f.evidence()) {
      absl::StrAppendFormat(&out, "     - %s: %s\n", DisplayName(e.name()), DisplayName(e.text()));
    }
    if (!f.objects().empty()) {
      std::vector<std::string> shown;
      for (int k = 0; k < f.objects_size() && k < 5; ++k)
        shown.push_back(DisplayName(f.objects(k)));
      absl::StrAppendFormat(
          &out, "     concerns: %s%s\n", absl::StrJoin(shown, ", "),
          f.objects_size() > 5 ? absl::StrCat(" and ", f.objects_size() - 5, " more") : "");
    }
    if (!f.recommendation().empty()) {
      absl::StrAppend(&out, "     what to do: ", DisplayName(f.recommendation()), "\n");
    }
  }
  absl::StrAppend(&out, LayersToText(r), MappedReadsToText(r));
  if (r.datasets_size() > 0) {
    absl::StrAppend(&out, "\nHDF5 datasets\n");
    for (const report::Dataset& d : r.datasets()) {
      absl::StrAppendFormat(
          &out, "  %s:%s (%s): %d reads of %s each became %.1f POSIX reads of %s (%.2fx bytes)\n",
          DisplayName(d.file()), DisplayName(d.name()), d.layout(), static_cast<int64_t>(d.reads()),
          HumanBytes(Ratio(d.logical_bytes(), d.reads())), d.reads_per_call(),
          HumanBytes(Ratio(d.posix_bytes(), d.posix_reads())), d.byte_amplification());
    }
  }
  if (r.tfrecord_files_size() > 0) {
    absl::StrAppend(&out, "\nTFRecord files\n");
    for (const report::TfRecordFile& t : r.tfrecord_files()) {
      if (!t.note().empty()) {
        absl::StrAppendFormat(&out, "  %s (%s): records not attributed: %s\n",
                              DisplayName(t.path()), t.compression(), DisplayName(t.note()));
        continue;
      }
      absl::StrAppendFormat(
          &out, "  %s: %d records of %s (mean) in %d reads, %.2f records per read, %s\n",
          DisplayName(t.path()), static_cast<int64_t>(t.records()),
          HumanBytes(Ratio(t.record_bytes(), t.records())), static_cast<int64_t>(t.posix_reads()),
          t.records_per_read(), t.order().empty() ? "order unknown" : t.order());
    }
  }
  // Many data files: the directories tell more than a list of look-alike
  // files, which is then cut short.
  bool many = r.data_files().files() > kManyFiles;
  if (many || r.directories_size() > 1) {
    absl::StrAppendFormat(&out, "\nData by directory (%d files read or written)\n",
                          static_cast<int64_t>(r.data_files().files()));
    for (int i = 0; i < r.directories_size() && i < 10; ++i) {
      const report::File& d = r.directories(i);
      absl::StrAppendFormat(&out, "  %10s read in %s from %6d files, %7d metadata calls  %s/\n",
                            HumanBytes(d.read_bytes()), ReadCount(d),
                            static_cast<int64_t>(d.files()), static_cast<int64_t>(d.metadata_ops()),
                            DisplayName(d.path()));
    }
  }
  absl::StrAppend(&out, "\nData files (by bytes)\n");
  // Rows for data files that moved bytes; the rest, and the job's runtime
  // (Python, libraries) and system files, are summed a line each.
  std::map<std::string, report::File> sums;
  int rows = 0;
  auto add = [](report::File* into, const report::File& f) {
    into->set_files(into->files() + (f.files() > 0 ? f.files() : 1));
    into->set_reads(into->reads() + f.reads());
    into->set_mapped_faults(into->mapped_faults() + f.mapped_faults());
    into->set_uring_reads(into->uring_reads() + f.uring_reads());
    into->set_read_bytes(into->read_bytes() + f.read_bytes());
    into->set_writes(into->writes() + f.writes());
    into->set_write_bytes(into->write_bytes() + f.write_bytes());
  };
  for (const report::File& f : r.files()) {
    bool row = f.category() == "data" && f.read_bytes() + f.write_bytes() > 0 &&
               !(many && rows == kRowsOfMany);
    if (!row) {
      add(&sums[f.category() == "data" ? "other data files" : f.category()], f);
      continue;
    }
    ++rows;
    absl::StrAppendFormat(&out, "  %10s read in %s, %10s written, %6d opens  %s\n",
                          HumanBytes(f.read_bytes()), ReadCount(f), HumanBytes(f.write_bytes()),
                          static_cast<int64_t>(f.opens()), DisplayName(f.path()));
  }
  if (r.other_files().files() > 0) add(&sums["files beyond the report's --top"], r.other_files());
  if (rows == 0) absl::StrAppend(&out, "  (none read or written)\n");
  for (const char* name :
       {"other data files", "runtime", "system", "files beyond the report's --top"}) {
    auto it = sums.find(name);
    if (it == sums.end()) continue;
    const report::File& f = it->second;
    absl::StrAppendFormat(&out, "  %10s read in %s, %10s written  (%d %s%s)\n",
                          HumanBytes(f.read_bytes()), ReadCount(f), HumanBytes(f.write_bytes()),
                          static_cast<int64_t>(f.files()), name,
                          std::string_view(name) == "runtime"  ? " files: Python, libraries"
                          : std::string_view(name) == "system" ? " files: /proc, /sys, /dev, IPC"
                                                               : "");
  }
  absl::StrAppend(&out, PyProfilesToText(r));
  absl::StrAppend(&out, "\nProcesses\n");
  bool hosts = r.run().hosts_size() > 1;
  for (const report::Process& p : r.processes()) {
    // Who it is: its role, its rank, the trainer a loader serves, the host.
    std::string who = RoleName(p.role());
    if (p.rank() >= 0) absl::StrAppend(&who, " rank ", p.rank());
    if (p.role() == report::LOADER && p.trainer_pid() > 0)
      absl::StrAppend(&who, " of ", p.trainer_pid());
    if (hosts) who = absl::StrCat(DisplayName(p.host()), " ", who);
    absl::StrAppendFormat(&out, "  %7d %-18s %9s read, busy %9s, cpu %8s  %s  %s\n", p.pid(), who,
                          HumanBytes(p.read_bytes()), HumanDuration(p.io_busy_s()),
                          HumanDuration(p.cpu_user_s() + p.cpu_system_s()), p.end(),
                          Prefix(DisplayName(absl::StrJoin(p.argv(), " ")), 60));
  }
  if (r.notes_size() > 0) {
    absl::StrAppend(&out, "\nNotes\n");
    for (const report::Note& n : r.notes())
      absl::StrAppend(&out, "  - ", DisplayName(n.message()), "\n");
  }
  return out;
}

std::string ReportToMarkdown(const Report& r) {
  std::string out = absl::StrCat(
      "## iotap report: ", MarkdownCode(absl::StrJoin(r.run().command(), " ")), "\n\n");
  for (const std::string& line : Glance(r)) absl::StrAppend(&out, "- ", MarkdownText(line), "\n");
  absl::StrAppend(&out, "\n### Findings\n\n");
  if (r.findings_size() == 0) absl::StrAppend(&out, "None.\n");
  for (int i = 0; i < r.findings_size(); ++i) {
    const report::Finding& f = r.findings(i);
    absl::StrAppendFormat(&out, "%d. **%s: %s.** %s\n", i + 1, SeverityName(f.severity()),
                          MarkdownText(f.title()), MarkdownText(f.summary()));
    for (const report::Evidence& e : f.evidence()) {
      absl::StrAppendFormat(&out, "   - %s: %s\n", MarkdownText(e.name()), MarkdownText(e.text()));
    }
    if (!f.recommendation().empty()) {
      absl::StrAppendFormat(&out, "   - *What to do:* %s\n", MarkdownText(f.recommendation()));
    }
  }
  absl::StrAppend(&out, LayersToMarkdown(r), MappedReadsToMarkdown(r));
  if (r.datasets_size() > 0) {
    absl::StrAppend(&out,
                    "\n### HDF5 datasets\n\n| dataset | layout | chunk | H5Dread calls | "
                    "bytes per call | POSIX reads per call | bytes read per byte asked |\n"
                    "|---|---|---:|---:|---:|---:|---:|\n");
    for (const report::Dataset& d : r.datasets()) {
      absl::StrAppendFormat(
          &out, "| %s | %s | %s | %d | %s | %.1f | %.2f |\n",
          MarkdownText(absl::StrCat(d.file(), ":", d.name())), MarkdownText(d.layout()),
          d.chunk_bytes() > 0 ? HumanBytes(d.chunk_bytes()) : "", static_cast<int64_t>(d.reads()),
          HumanBytes(Ratio(d.logical_bytes(), d.reads())), d.reads_per_call(),
          d.byte_amplification());
    }
  }
  if (r.tfrecord_files_size() > 0) {
    absl::StrAppend(&out,
                    "\n### TFRecord files\n\n| file | compression | records | mean record | "
                    "reads | records per read | order |\n"
                    "|---|---|---:|---:|---:|---:|---|\n");
    for (const report::TfRecordFile& t : r.tfrecord_files()) {
      absl::StrAppendFormat(
          &out, "| %s | %s | %d | %s | %d | %.2f | %s |\n", MarkdownText(t.path()),
          MarkdownText(t.compression()), static_cast<int64_t>(t.records()),
          HumanBytes(Ratio(t.record_bytes(), t.records())), static_cast<int64_t>(t.posix_reads()),
          t.records_per_read(), MarkdownText(t.note().empty() ? t.order() : t.note()));
    }
  }
  absl::StrAppend(&out,
                  "\n### Top files\n\n| file | category | read | reads | written | opens |\n"
                  "|---|---|---:|---:|---:|---:|\n");
  int shown = 0;
  for (const report::File& f : r.files()) {
    if (shown++ == kMarkdownFileRows) break;
    absl::StrAppendFormat(&out, "| %s | %s | %s | %d | %s | %d |\n", MarkdownText(f.path()),
                          f.category(), HumanBytes(f.read_bytes()), static_cast<int64_t>(f.reads()),
                          HumanBytes(f.write_bytes()), static_cast<int64_t>(f.opens()));
  }
  absl::StrAppend(&out, PyProfilesToMarkdown(r));
  absl::StrAppend(
      &out,
      "\n### Processes\n\n| pid | host | role | rank | serves | read | I/O busy | CPU | end |\n"
      "|---:|---|---|---:|---:|---:|---:|---:|---|\n");
  int listed = 0;
  for (const report::Process& p : r.processes()) {
    if (listed++ == 30) {
      absl::StrAppendFormat(&out, "| | | (%d more) | | | | | | |\n", r.processes_size() - 30);
      break;
    }
    absl::StrAppendFormat(
        &out, "| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.pid(), MarkdownText(p.host()),
        RoleName(p.role()), p.rank() >= 0 ? absl::StrCat(p.rank()) : "",
        p.role() == report::LOADER && p.trainer_pid() > 0 ? absl::StrCat(p.trainer_pid()) : "",
        HumanBytes(p.read_bytes()), HumanDuration(p.io_busy_s()),
        HumanDuration(p.cpu_user_s() + p.cpu_system_s()), MarkdownText(p.end()));
  }
  if (r.notes_size() > 0) {
    absl::StrAppend(&out, "\n### Notes\n\n");
    for (const report::Note& n : r.notes())
      absl::StrAppend(&out, "- ", MarkdownText(n.message()), "\n");
  }
  absl::StrAppend(&out, "\n<sub>iotap ", r.schema_version(),
                  "; full details: `iotap report --format json`</sub>\n");
  return out;
}

std::string ReportToJson(const Report& r) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  std::string out;
  auto status = google::protobuf::util::MessageToJsonString(r, &out, options);
  if (!status.ok()) return absl::StrCat("{\"error\": \"", status.ToString(), "\"}\n");
  return out + "\n";
}

}  // namespace iotap::analyzer
