#include "analyzer/output/stats_output.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/text.h"
#include "analyzer/output/stats_sections.h"

namespace iotap::analyzer {

namespace {

void WriteFile(JsonWriter& j, const stats::File& f, bool with_path) {
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  j.BeginObject();
  if (with_path) {
    j.Key("path");
    j.String(f.path());
  }
  j.Key("kind");
  j.String(f.kind());
  uint("reads", f.reads());
  uint("read_bytes", f.read_bytes());
  uint("writes", f.writes());
  uint("write_bytes", f.write_bytes());
  uint("opens", f.opens());
  uint("posix_reads", f.posix_reads());
  uint("stdio_reads", f.stdio_reads());
  uint("posix_writes", f.posix_writes());
  uint("stdio_writes", f.stdio_writes());
  uint("gds_reads", f.gds_reads());
  uint("gds_writes", f.gds_writes());
  uint("metadata_ops", f.metadata_ops());
  uint("mmaps", f.mmaps());
  uint("mmap_bytes", f.mmap_bytes());
  uint("errors", f.errors());
  j.Key("read_seconds");
  j.Double(f.read_seconds());
  j.Key("write_seconds");
  j.Double(f.write_seconds());
  j.Key("metadata_seconds");
  j.Double(f.metadata_seconds());
  uint("processes", f.processes());
  j.EndObject();
}

void WriteProcess(JsonWriter& j, const stats::Process& p) {
  j.BeginObject();
  j.Key("pid");
  j.Int(p.pid());
  j.Key("ppid");
  j.Int(p.ppid());
  j.Key("hostname");
  j.String(p.hostname());
  j.Key("executable");
  j.String(p.executable());
  j.Key("argv");
  j.BeginArray();
  for (const std::string& a : p.argv()) j.String(a);
  j.EndArray();
  j.Key("rank");
  j.Int(p.rank());
  j.Key("events");
  j.Uint(p.events());
  j.Key("dropped_events");
  j.Uint(p.dropped_events());
  j.Key("reads");
  j.Uint(p.reads());
  j.Key("read_bytes");
  j.Uint(p.read_bytes());
  j.Key("writes");
  j.Uint(p.writes());
  j.Key("write_bytes");
  j.Uint(p.write_bytes());
  j.Key("end");
  j.String(p.end());
  j.Key("trace_file");
  j.String(p.trace_file());
  j.EndObject();
}

void WriteIssue(JsonWriter& j, const stats::Issue& i) {
  j.BeginObject();
  j.Key("file");
  j.String(i.file());
  j.Key("offset");
  j.Uint(i.offset());
  j.Key("bytes_skipped");
  j.Uint(i.bytes_skipped());
  j.Key("truncated");
  j.Bool(i.truncated());
  j.Key("message");
  j.String(i.message());
  j.EndObject();
}

void WriteStats(const stats::Stats& s, const StatsFileRows& files, JsonWriter& j) {
  j.BeginObject();
  j.Key("processes");
  j.Uint(s.processes());
  j.Key("events");
  j.Uint(s.events());
  j.Key("dropped_events");
  j.Uint(s.dropped_events());
  j.Key("files");
  j.BeginArray();
  stats::File row;  // made again for each
  for (size_t i = 0; i < files.size; ++i) {
    files.fill(i, &row);
    WriteFile(j, row, true);
  }
  j.EndArray();
  j.Key("ipc");
  j.BeginArray();
  for (const stats::File& f : s.ipc()) WriteFile(j, f, false);
  j.EndArray();
  internal::CudaToJson(s, j);
  internal::MappedToJson(s, j);
  j.Key("process_list");
  j.BeginArray();
  for (const stats::Process& p : s.process_list()) WriteProcess(j, p);
  j.EndArray();
  j.Key("datasets");
  internal::DatasetsToJson(s, j);
  j.Key("tfrecord_files");
  internal::TfRecordFilesToJson(s, j);
  j.Key("issues");
  j.BeginArray();
  for (const stats::Issue& i : s.issues()) WriteIssue(j, i);
  j.EndArray();
  j.EndObject();
}

}  // namespace

StatsFileRows RowsOf(const stats::Stats& s) {
  return StatsFileRows{static_cast<size_t>(s.files_size()),
                       [&s](size_t i, stats::File* row) { *row = s.files(static_cast<int>(i)); }};
}

std::string StatsToJson(const stats::Stats& s) {
  JsonWriter j;
  WriteStats(s, RowsOf(s), j);
  std::string out = j.Take();
  out += '\n';
  return out;
}

void StatsToJson(const stats::Stats& s, const StatsFileRows& files,
                 const std::function<void(std::string_view)>& sink) {
  JsonWriter j(2, sink);
  WriteStats(s, files, j);
  j.Take();
  sink("\n");
}

std::string StatsToText(const stats::Stats& s) { return StatsToText(s, RowsOf(s)); }

std::string StatsToText(const stats::Stats& s, const StatsFileRows& files) {
  std::string out = absl::StrFormat("%d processes, %d events recorded, %d dropped\n\n",
                                    s.processes(), s.events(), s.dropped_events());
  constexpr size_t kShown = 40;
  std::vector<stats::File> shown;
  uint64_t read_bytes = 0, write_bytes = 0, reads = 0, writes = 0, opens = 0;
  stats::File row;
  for (size_t i = 0; i < files.size; ++i) {
    files.fill(i, &row);
    read_bytes += row.read_bytes();
    write_bytes += row.write_bytes();
    reads += row.reads();
    writes += row.writes();
    opens += row.opens();
    if (i < kShown) shown.push_back(row);
  }
  absl::StrAppendFormat(&out, "files: %d, opens %d, reads %d (%s), writes %d (%s)\n\n",
                        files.size, opens, reads, HumanBytes(read_bytes), writes,
                        HumanBytes(write_bytes));
  absl::StrAppendFormat(&out, "%10s %12s %10s %12s %7s %9s  %s\n", "reads", "read", "writes",
                        "written", "opens", "metadata", "file");
  for (const stats::File& f : shown) {
    absl::StrAppendFormat(&out, "%10d %12s %10d %12s %7d %9d  %s\n", f.reads(),
                          HumanBytes(f.read_bytes()), f.writes(), HumanBytes(f.write_bytes()),
                          f.opens(), f.metadata_ops(), DisplayName(f.path()));
  }
  if (files.size > kShown) {
    absl::StrAppendFormat(&out, "... and %d more files (--json lists all)\n",
                          files.size - kShown);
  }
  for (const stats::File& f : s.ipc()) {
    absl::StrAppendFormat(&out, "%10d %12s %10d %12s %7s %9s  (%s)\n", f.reads(),
                          HumanBytes(f.read_bytes()), f.writes(), HumanBytes(f.write_bytes()), "",
                          "", f.kind());
  }
  std::string cuda = internal::CudaToText(s);
  if (!cuda.empty()) absl::StrAppend(&out, "\n", cuda);
  std::string mapped = internal::MappedToText(s);
  if (!mapped.empty()) absl::StrAppend(&out, "\n", mapped);
  std::string datasets = internal::DatasetsToText(s);
  if (!datasets.empty()) absl::StrAppend(&out, "\n", datasets);
  std::string tfrecords = internal::TfRecordFilesToText(s);
  if (!tfrecords.empty()) absl::StrAppend(&out, "\n", tfrecords);
  out += "\nprocesses:\n";
  for (const stats::Process& p : s.process_list()) {
    absl::StrAppendFormat(&out, "  %s pid %d (parent %d): %d events, %d reads (%s), %s  %s\n",
                          DisplayName(p.hostname()), p.pid(), p.ppid(), p.events(), p.reads(),
                          HumanBytes(p.read_bytes()), p.end(),
                          DisplayName(absl::StrJoin(p.argv(), " ")));
  }
  if (s.issues_size() > 0) {
    out += "\nproblems reading the traces:\n";
    for (const stats::Issue& i : s.issues()) absl::StrAppend(&out, "  ", DisplayName(i.text()), "\n");
  }
  return out;
}

}  // namespace iotap::analyzer
