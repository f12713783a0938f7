// The report's tables (files, layers, datasets, CUDA copies), the run at a
// glance, and its notes.

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer::run_state {

namespace {

double RereadBytes(const RunFile& f) {
  return std::max(0.0, static_cast<double>(f.file->counts.read_bytes) -
                           static_cast<double>(f.detail->read_ranges.covered()));
}

// A read file's size: the largest that stat calls saw, else the distinct
// bytes read (not the bytes read, which count every pass over the file),
// else, for reads without offsets, the bytes read.
double FileBytes(const RunFile& f) {
  double size = std::max(static_cast<double>(f.detail->size_bytes),
                         static_cast<double>(f.detail->read_ranges.covered()));
  return size > 0 ? size : static_cast<double>(f.file->counts.read_bytes);
}

// How many of a file's reads were page faults and io_uring requests, and of
// its writes io_uring requests (report.proto, File.mapped_faults).
struct ReadUnits {
  uint64_t faults = 0, uring_reads = 0, uring_writes = 0;
};

ReadUnits UnitsOf(const RunState& s, std::string_view path) {
  UringFileStats u = s.mapped.UringOf(path);
  return ReadUnits{s.mapped.FaultsOf(path), u.reads, u.writes};
}

void AddUnits(report::File* out, const ReadUnits& u) {
  out->set_mapped_faults(out->mapped_faults() + static_cast<double>(u.faults));
  out->set_uring_reads(out->uring_reads() + static_cast<double>(u.uring_reads));
  out->set_uring_writes(out->uring_writes() + static_cast<double>(u.uring_writes));
}

void FillFile(const RunFile& f, const ReadUnits& units, report::File* out) {
  const FileCounts& c = f.file->counts;
  AddUnits(out, units);
  out->set_path(ValidUtf8(f.path));
  out->set_kind(FileKindName(f.file->kind));
  out->set_category(f.file->category);
  out->set_processes(static_cast<double>(f.file->processes));
  out->set_opens(static_cast<double>(c.opens));
  out->set_reads(static_cast<double>(c.reads()));
  out->set_read_bytes(static_cast<double>(c.read_bytes));
  out->set_writes(static_cast<double>(c.writes()));
  out->set_write_bytes(static_cast<double>(c.write_bytes));
  out->set_metadata_ops(static_cast<double>(c.metadata_ops));
  out->set_metadata_s(Seconds(c.metadata_ns));
  out->set_read_time_s(Seconds(c.read_ns));
  out->set_write_time_s(Seconds(c.write_ns));
  out->set_size_bytes(static_cast<double>(f.detail->size_bytes));
  out->set_reread_bytes(RereadBytes(f));
  f.detail->read_sizes.ToProto(out->mutable_read_sizes());
  f.detail->write_sizes.ToProto(out->mutable_write_sizes());
  f.detail->read_pattern.ToProto(out->mutable_read_pattern());
  out->set_files(1);
}

// Sums a file into a total row (other files, a directory).
void AddInto(report::File* total, const RunFile& f, const ReadUnits& units) {
  const FileCounts& c = f.file->counts;
  AddUnits(total, units);
  total->set_files(total->files() + 1);
  total->set_opens(total->opens() + static_cast<double>(c.opens));
  total->set_reads(total->reads() + static_cast<double>(c.reads()));
  total->set_read_bytes(total->read_bytes() + static_cast<double>(c.read_bytes));
  total->set_writes(total->writes() + static_cast<double>(c.writes()));
  total->set_write_bytes(total->write_bytes() + static_cast<double>(c.write_bytes));
  total->set_metadata_ops(total->metadata_ops() + static_cast<double>(c.metadata_ops));
  total->set_metadata_s(total->metadata_s() + Seconds(c.metadata_ns));
  total->set_read_time_s(total->read_time_s() + Seconds(c.read_ns));
  total->set_write_time_s(total->write_time_s() + Seconds(c.write_ns));
  total->set_reread_bytes(total->reread_bytes() + RereadBytes(f));
}

// What one of a layer's ops, reads and writes is (report.proto, Layer.unit).
const char* LayerUnit(Layer layer) {
  switch (layer) {
    case Layer::kMapped:
      return "faults";
    case Layer::kUring:
      return "requests";
    default:
      return "calls";
  }
}

int CategoryRank(std::string_view c) { return c == "data" ? 0 : c == "runtime" ? 1 : 2; }

void DataFileSummary(const RunState& s, report::Report* r) {
  report::DataFiles* d = r->mutable_data_files();
  AccessPattern pattern;
  std::vector<double> per_file;
  std::map<std::string, report::File> dirs;
  for (const RunFile& f : s.files) {
    if (std::string_view(f.file->category) != "data") continue;
    // Paths only looked at (stat, access, an open that read nothing: module
    // searches, existence checks) are not the job's data.
    const FileCounts& c = f.file->counts;
    if (c.reads() == 0 && c.writes() == 0) continue;
    d->set_files(d->files() + 1);
    d->set_opens(d->opens() + static_cast<double>(c.opens));
    d->set_reads(d->reads() + static_cast<double>(c.reads()));
    d->set_read_bytes(d->read_bytes() + static_cast<double>(c.read_bytes));
    d->set_read_time_s(d->read_time_s() + Seconds(c.read_ns));
    d->set_metadata_ops(d->metadata_ops() + static_cast<double>(c.metadata_ops));
    d->set_metadata_s(d->metadata_s() + Seconds(c.metadata_ns));
    d->set_direct_opens(d->direct_opens() + static_cast<double>(f.detail->direct_opens));
    d->set_dontneed_advice(d->dontneed_advice() + static_cast<double>(f.detail->dontneed_advice));
    d->set_hdf5_posix_reads(d->hdf5_posix_reads() + static_cast<double>(f.detail->hdf5_reads));
    d->set_reread_bytes(d->reread_bytes() + RereadBytes(f));
    pattern.Merge(f.detail->read_pattern);
    if (c.reads() > 0) {
      d->set_read_files(d->read_files() + 1);
      per_file.push_back(FileBytes(f));
    }
    size_t slash = f.path.rfind('/');
    std::string dir =
        slash == std::string_view::npos || slash == 0 ? "/" : std::string(f.path.substr(0, slash));
    report::File& into = dirs[dir];
    AddInto(&into, f, UnitsOf(s, f.path));
  }
  d->set_mean_read_latency_s(Ratio(d->read_time_s(), d->reads()));
  if (!per_file.empty()) {
    std::nth_element(per_file.begin(), per_file.begin() + per_file.size() / 2, per_file.end());
    d->set_median_file_bytes(per_file[per_file.size() / 2]);
  }
  d->set_median_read_bytes(s.data_read_sizes.ApproximateMedian());
  s.data_read_sizes.ToProto(d->mutable_read_sizes());
  pattern.ToProto(d->mutable_read_pattern());
  std::vector<report::File> sorted;
  for (auto& [dir, f] : dirs) {
    f.set_path(ValidUtf8(dir));
    f.set_kind("directory");
    f.set_category("data");
    sorted.push_back(std::move(f));
  }
  std::sort(sorted.begin(), sorted.end(), [](const report::File& a, const report::File& b) {
    return a.read_bytes() + a.write_bytes() > b.read_bytes() + b.write_bytes();
  });
  for (size_t i = 0; i < sorted.size() && i < 20; ++i) *r->add_directories() = sorted[i];
}

}  // namespace

void BuildTables(RunState& s, int top_files, report::Report* r) {
  DataFileSummary(s, r);
  // Data files first, then by bytes moved; only the listed ones become rows.
  std::vector<const RunFile*> order;
  order.reserve(s.files.size());
  for (const RunFile& f : s.files) order.push_back(&f);
  auto key = [](const RunFile* f) {
    return std::make_pair(-CategoryRank(f->file->category),
                          f->file->counts.read_bytes + f->file->counts.write_bytes);
  };
  size_t listed = std::min(order.size(), static_cast<size_t>(std::max(0, top_files)));
  std::partial_sort(order.begin(), order.begin() + listed, order.end(),
                    [&](const auto* a, const auto* b) { return key(a) > key(b); });
  report::File* other = r->mutable_other_files();
  other->set_path("(other files)");
  for (size_t i = 0; i < order.size(); ++i) {
    if (i < listed) {
      FillFile(*order[i], UnitsOf(s, order[i]->path), r->add_files());
    } else {
      AddInto(other, *order[i], UnitsOf(s, order[i]->path));
    }
  }
  for (int i = 0; i < kLayerCount; ++i) {
    const LayerAccumulator& l = s.layers[i];
    if (l.ops == 0) continue;
    report::Layer* out = r->add_layers();
    out->set_name(LayerName(static_cast<Layer>(i)));
    out->set_ops(static_cast<double>(l.ops));
    out->set_reads(static_cast<double>(l.reads));
    out->set_read_bytes(static_cast<double>(l.read_bytes));
    out->set_writes(static_cast<double>(l.writes));
    out->set_write_bytes(static_cast<double>(l.write_bytes));
    out->set_metadata_ops(static_cast<double>(l.metadata_ops));
    out->set_time_s(Seconds(l.time_ns));
    // The bitmap rounds each call outward to its resolution: a union of
    // sub-microsecond calls would pass their sum, which it never truly does.
    out->set_busy_s(Seconds(std::min<int64_t>(s.layer_busy[i].Total(), l.time_ns)));
    out->set_unit(LayerUnit(static_cast<Layer>(i)));
    l.read_sizes.ToProto(out->mutable_read_sizes());
    l.read_pattern.ToProto(out->mutable_read_pattern());
  }
  // The datasets the job read (by H5Dread or H5Dread_chunk), which the
  // report's table is about: its reads count both calls, its logical bytes
  // what they returned (elements for H5Dread, stored bytes for a chunk).
  for (const auto& [key, d] : s.datasets) {
    const uint64_t reads = d.reads + d.chunk_reads;
    if (reads == 0) continue;
    const uint64_t logical_bytes = d.read_bytes + d.chunk_read_bytes;
    report::Dataset* out = r->add_datasets();
    auto [file, name] = DatasetNameParts(key);
    out->set_file(ValidUtf8(file));
    out->set_name(ValidUtf8(name));
    if (d.described) {
      const Hdf5Dataset& h = d.description;
      out->set_element_size(static_cast<double>(h.element_size()));
      for (uint64_t v : h.dims()) out->add_dims(static_cast<double>(v));
      out->set_layout(LayoutName(h.layout()));
      for (uint64_t v : h.chunk_dims()) out->add_chunk_dims(static_cast<double>(v));
      out->set_chunk_bytes(static_cast<double>(d.ChunkBytes()));
      for (const Hdf5Dataset::Filter& f : h.filter()) out->add_filters(ValidUtf8(f.name()));
    }
    out->set_reads(static_cast<double>(reads));
    out->set_logical_bytes(static_cast<double>(logical_bytes));
    out->set_posix_reads(static_cast<double>(d.posix_reads));
    out->set_posix_bytes(static_cast<double>(d.posix_read_bytes));
    out->set_read_time_s(Seconds(d.read_ns + d.chunk_read_ns));
    out->set_byte_amplification(Ratio(d.posix_read_bytes, logical_bytes));
    out->set_reads_per_call(Ratio(d.posix_reads, reads));
  }
  for (const TfRecordFileAccumulator& t : s.tfrecords.Files()) {
    report::TfRecordFile* out = r->add_tfrecord_files();
    out->set_path(ValidUtf8(t.path));
    out->set_compression(t.compression);
    out->set_note(ValidUtf8(t.note));
    out->set_records(static_cast<double>(t.records));
    out->set_record_bytes(static_cast<double>(t.record_bytes));
    auto file = std::lower_bound(s.files.begin(), s.files.end(), std::string_view(t.path),
                                 [](const RunFile& f, std::string_view p) { return f.path < p; });
    double reads = file == s.files.end() || file->path != t.path
                       ? 0
                       : static_cast<double>(file->file->counts.reads());
    out->set_posix_reads(reads);
    out->set_records_per_read(Ratio(t.records, reads));
    out->set_order(t.Order());
    out->set_in_order(t.Order() == "in order");
    out->set_reads_completing_records(static_cast<double>(t.reads_completing_records));
    out->set_spanned_records(static_cast<double>(t.spanned_records));
    out->set_processes(static_cast<double>(t.processes));
    out->set_min_record_bytes(static_cast<double>(t.min_record));
    out->set_max_record_bytes(static_cast<double>(t.max_record));
    // size_log2 is ordered, -1 (empty records) first: they join bucket 0.
    auto* log2 = out->mutable_record_sizes()->mutable_log2();
    for (const auto& [k, n] : t.size_log2) {
      int bucket = std::max(k, 0);
      if (log2->size() <= bucket) log2->Resize(bucket + 1, 0);
      log2->Set(bucket, log2->Get(bucket) + static_cast<double>(n));
    }
  }
  for (const auto& [key, c] : s.cuda.copies) {
    report::CudaCopies* out = r->add_cuda_copies();
    out->set_direction(key.direction);
    out->set_host_memory(key.host_memory);
    out->set_async(key.async);
    out->set_copies(static_cast<double>(c.calls));
    out->set_bytes(static_cast<double>(c.bytes));
    out->set_time_s(Seconds(c.ns));
  }
  // Copies made by trainers inside their steps: each group's durations, in
  // order, into one running sum per kind, as one process adds them.
  for (const auto& [index, g] : s.groups) {
    for (const auto& [key, seconds] : s.results.at(index).cuda_in_steps_s) {
      for (report::CudaCopies& c : *r->mutable_cuda_copies()) {
        if (c.direction() == key.direction && c.host_memory() == key.host_memory &&
            c.async() == key.async) {
          for (double d : seconds) c.set_in_steps_s(c.in_steps_s() + d);
          break;
        }
      }
    }
  }
}

void ComputeCudaInSteps(const TrainerGroup& g, GroupResult* out) {
  for (const TimedEvent& copy : g.cuda_copies) {
    bool in_step = std::any_of(g.steps.begin(), g.steps.end(), [&](const StepSpan& st) {
      return copy.start_unix_ns >= st.start_ns && copy.start_unix_ns < st.end_ns;
    });
    if (!in_step) continue;
    out->cuda_in_steps_s[CudaCopyKeyOf(copy.op, copy.flags)].push_back(
        Seconds(copy.end_unix_ns - copy.start_unix_ns));
  }
}

void BuildRunSummary(RunState& s, report::Report* r) {
  report::Run* run = r->mutable_run();
  const CatalogEntry& first = s.catalog.entries.front();
  for (const std::string& a : first.header.argv()) run->add_command(ValidUtf8(a));
  run->set_session(ValidUtf8(first.header.session()));
  for (const std::string& h : s.catalog.hosts) run->add_hosts(ValidUtf8(h));
  run->set_processes(static_cast<double>(s.catalog.entries.size()));
  std::vector<int> ranks;
  for (const auto& [index, g] : s.groups) ranks.push_back(s.catalog.entries[index].header.rank());
  std::sort(ranks.begin(), ranks.end());
  run->set_ranks(static_cast<double>(std::unique(ranks.begin(), ranks.end()) - ranks.begin()));
  run->set_start_unix_s(Seconds(s.origin_ns));
  int64_t from = std::max(s.origin_ns, s.range_start_ns), to = std::min(s.end_ns, s.range_end_ns);
  run->set_duration_s(Seconds(std::max<int64_t>(0, to - from)));
  if (s.range_start_ns != INT64_MIN) {
    run->set_range_from_s(Seconds(s.range_start_ns - s.origin_ns));
    run->set_range_to_s(Seconds(s.range_end_ns == INT64_MAX ? s.end_ns - s.origin_ns
                                                            : s.range_end_ns - s.origin_ns));
  }
  run->set_steps(r->step_statistics().steps() + r->step_statistics().warmup_steps_skipped());
  double read = 0, written = 0;
  for (const report::Layer& l : r->layers()) {
    // The layers whose bytes no other layer holds: HDF5 and TFRecord are
    // counted in the POSIX reads beneath them; mapped reads and io_uring
    // requests are beneath no call.
    if (l.name() == "POSIX" || l.name() == "STDIO" || l.name() == "GDS" || l.name() == "MAPPED" ||
        l.name() == "URING") {
      read += l.read_bytes();
      written += l.write_bytes();
    }
  }
  run->set_bytes_read(read);
  run->set_bytes_written(written);
  run->set_read_throughput_bytes_per_s(Ratio(read, run->duration_s()));
  run->set_data_stall_share(r->step_statistics().data_stall_share());
  if (r->steps_size() == 0) run->set_data_stall_share(-1);
  run->set_io_busy_s(Seconds(s.all_io->Total()));
  run->set_events(static_cast<double>(s.events));
  run->set_dropped_events(static_cast<double>(s.dropped));
  run->set_trace_files(static_cast<double>(s.catalog.entries.size()));
  for (const CatalogEntry& e : s.catalog.entries) {
    run->set_host_cpus(std::max(run->host_cpus(), static_cast<double>(e.header.cpus())));
  }
  for (const std::string& src : s.step_sources) run->add_step_sources(ValidUtf8(src));
}

void BuildNotes(RunState& s, report::Report* r) {
  auto note = [&](report::Note::Level level, std::string message) {
    report::Note* n = r->add_notes();
    n->set_level(level);
    n->set_message(ValidUtf8(message));
  };
  for (const ReadIssue& i : s.issues) note(report::Note::WARNING, i.ToString());
  if (s.dropped > 0) {
    note(report::Note::WARNING,
         absl::StrFormat("%d events were lost by the tracer (written to the trace as a count): "
                         "figures are lower bounds",
                         s.dropped));
  }
  if (s.late_clipped_ns > 0) {
    note(report::Note::INFO,
         absl::StrFormat("calls longer than 30 s overlapped earlier ones; %s of their time "
                         "may be counted twice in busy time",
                         HumanDuration(Seconds(s.late_clipped_ns))));
  }
  if (s.resolution_ns > 1000) {
    note(report::Note::INFO,
         absl::StrFormat("busy time across processes is measured to %s for a run this long",
                         HumanDuration(Seconds(s.resolution_ns))));
  }
  if (s.groups.empty()) {
    note(report::Note::INFO, "no training process found; figures cover all processes");
  } else if (r->steps_size() == 0) {
    note(report::Note::INFO,
         "no training steps: run with `iotap run --torch-steps` (PyTorch), mark steps with the "
         "iotap Python helper, or pass a step log with --steps, to see data stalls per step");
  }
  for (const std::string& n : s.notes) note(report::Note::INFO, n);
  // What the directory holds: one `iotap run` per rank (srun, mpirun) is one
  // job; traces of different jobs are not, and mixing them mixes the figures.
  std::set<std::string> sessions, jobs;
  for (const CatalogEntry& e : s.catalog.entries) {
    if (!e.header.session().empty()) sessions.insert(e.header.session());
    if (!e.header.job_id().empty()) jobs.insert(e.header.job_id());
  }
  if (jobs.size() > 1) {
    std::vector<std::string> ids(jobs.begin(), jobs.end());
    if (ids.size() > 5) ids.resize(5);
    note(report::Note::WARNING,
         absl::StrFormat("the traces come from %d different jobs (%s%s); their figures are "
                         "summed as if one: give each job its own -o directory",
                         jobs.size(), absl::StrJoin(ids, ", "), jobs.size() > 5 ? ", ..." : ""));
  } else if (sessions.size() > 1) {
    note(report::Note::INFO,
         absl::StrFormat("%d `iotap run` sessions wrote here%s (one per rank, as under srun or "
                         "mpirun); they are analysed as one job",
                         sessions.size(),
                         jobs.empty() ? "" : absl::StrCat(" for job ", *jobs.begin())));
  }
}

}  // namespace iotap::analyzer::run_state
