// What `iotap stats` prints (proto/iotap/stats.proto), from the run's state:
// the same accumulators the report's tables (tables.cc) are built from.

#include <algorithm>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "analyzer/analysis/run_state.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/sort_by_text.h"

namespace iotap::analyzer::run_state {

namespace {

// Strings are assigned into the row's own (a row made again for each file
// keeps their memory; set_ would make a temporary std::string each).
void FillFile(const FileAccumulator& f, stats::File* out) {
  const FileCounts& c = f.counts;
  out->mutable_kind()->assign(FileKindName(f.kind));
  out->set_reads(c.reads());
  out->set_read_bytes(c.read_bytes);
  out->set_writes(c.writes());
  out->set_write_bytes(c.write_bytes);
  out->set_opens(c.opens);
  out->set_posix_reads(c.posix_reads);
  out->set_stdio_reads(c.stdio_reads);
  out->set_posix_writes(c.posix_writes);
  out->set_stdio_writes(c.stdio_writes);
  out->set_gds_reads(c.gds_reads);
  out->set_gds_writes(c.gds_writes);
  out->set_metadata_ops(c.metadata_ops);
  out->set_mmaps(c.mmaps);
  out->set_mmap_bytes(c.mmap_bytes);
  out->set_errors(c.errors);
  out->set_read_seconds(Seconds(c.read_ns));
  out->set_write_seconds(Seconds(c.write_ns));
  out->set_metadata_seconds(Seconds(c.metadata_ns));
  out->set_processes(f.processes);
}

}  // namespace

std::vector<RunFile> FileOrder(const RunState& s) {
  // The paths under one lock, not one each.
  const std::vector<std::string_view> paths = s.paths.Paths();
  std::vector<RunFile> rows;
  rows.reserve(s.files_by_id.size());
  for (uint32_t id = 0; id < s.files_by_id.size(); ++id) {
    // A path only a trace that could not be read interned has no figures.
    const FileAccumulator& f = s.files_by_id[id];
    if (f.processes == 0) continue;
    rows.push_back(RunFile{paths[id], &f, nullptr});
  }
  // Most bytes read and written first (the complement of their sum, smallest
  // first), then by path.
  auto key = [](const RunFile& r) {
    return ~(r.file->counts.read_bytes + r.file->counts.write_bytes);
  };
  SortByKeyThenText(rows, key, [](const RunFile& r) { return r.path; });
  return rows;
}

void FillFileRow(const RunFile& row, stats::File* out) {
  out->mutable_path()->assign(row.path.data(), row.path.size());
  FillFile(*row.file, out);
}

namespace {

void FillCuda(const CudaAccumulator& cuda, stats::Stats* out) {
  // Most bytes first; equal ones by direction, host memory and mode's word.
  std::vector<const std::pair<const CudaCopyKey, CudaCopyCounts>*> copies;
  for (const auto& entry : cuda.copies) copies.push_back(&entry);
  auto mode = [](const CudaCopyKey& k) { return k.async ? "async" : "sync"; };
  std::stable_sort(copies.begin(), copies.end(), [&](const auto* a, const auto* b) {
    if (a->second.bytes != b->second.bytes) return a->second.bytes > b->second.bytes;
    return std::forward_as_tuple(a->first.direction, a->first.host_memory,
                                 std::string_view(mode(a->first))) <
           std::forward_as_tuple(b->first.direction, b->first.host_memory,
                                 std::string_view(mode(b->first)));
  });
  for (const auto* entry : copies) {
    stats::CudaCopies* c = out->add_cuda_copies();
    c->set_direction(entry->first.direction);
    c->set_host_memory(entry->first.host_memory);
    c->set_mode(mode(entry->first));
    c->set_calls(entry->second.calls);
    c->set_failed_calls(entry->second.failed_calls);
    c->set_bytes(entry->second.bytes);
    c->set_seconds(Seconds(entry->second.ns));
  }
  stats::CudaDevice* device = out->mutable_cuda_device();
  for (const auto& [key, d] : cuda.device_copies) {
    stats::CudaDeviceCopies* c = device->add_copies();
    c->set_direction(key.direction);
    c->set_host_memory(key.host_memory);
    c->set_copies(d.copies);
    c->set_bytes(d.bytes);
    c->set_seconds(Seconds(d.ns));
  }
  device->set_kernels(cuda.kernels);
  device->set_kernel_seconds(Seconds(cuda.kernel_ns));
  out->mutable_cuda_pinned()->set_allocations(cuda.pinned_allocations);
  out->mutable_cuda_pinned()->set_bytes(cuda.pinned_bytes);
}

void FillProcesses(const RunState& s, stats::Stats* out) {
  std::vector<const ProcessSummary*> processes;
  for (size_t i = 0; i < s.processes.size(); ++i) {
    if (s.read_ok[i]) processes.push_back(&s.processes[i]);
  }
  std::sort(processes.begin(), processes.end(), [](const auto* a, const auto* b) {
    return a->header.hostname() != b->header.hostname() ? a->header.hostname() < b->header.hostname()
                                                        : a->header.pid() < b->header.pid();
  });
  for (const ProcessSummary* p : processes) {
    const int index = static_cast<int>(p - s.processes.data());
    stats::Process* o = out->add_process_list();
    o->set_pid(p->header.pid());
    o->set_ppid(p->header.ppid());
    o->set_hostname(p->header.hostname());
    o->set_executable(p->header.executable());
    for (const std::string& a : p->header.argv()) o->add_argv(a);
    o->set_rank(p->header.rank());
    o->set_events(p->events);
    o->set_dropped_events(p->dropped);
    o->set_reads(p->reads);
    o->set_read_bytes(p->read_bytes);
    o->set_writes(p->write_calls);
    o->set_write_bytes(p->write_bytes);
    o->set_end(p->end);
    o->set_trace_file(s.catalog.entries[index].path);
  }
  out->set_processes(processes.size());
}

void FillDataset(const std::string& dataset, const DatasetAccumulator& d, stats::Dataset* out) {
  auto [file, name] = DatasetNameParts(dataset);
  out->set_dataset(dataset);
  out->set_file(std::string(file));
  out->set_name(std::string(name));
  out->set_described(d.described);
  const Hdf5Dataset& h = d.description;
  out->set_element_size(h.element_size());
  for (uint64_t v : h.dims()) out->add_dims(v);
  out->set_layout(d.described ? LayoutName(h.layout()) : "unknown");
  for (uint64_t v : h.chunk_dims()) out->add_chunk_dims(v);
  out->set_chunk_bytes(d.ChunkBytes());
  for (const Hdf5Dataset::Filter& f : h.filter()) {
    stats::Filter* filter = out->add_filters();
    filter->set_id(f.id());
    filter->set_name(f.name());
  }
  out->set_type_class(h.type_class());
  out->set_opens(d.opens);
  out->set_closes(d.closes);
  out->set_reads(d.reads);
  out->set_read_elements(d.read_elements);
  out->set_read_logical_bytes(d.read_bytes);
  out->set_read_seconds(Seconds(d.read_ns));
  out->set_posix_reads(d.posix_reads);
  out->set_posix_read_bytes(d.posix_read_bytes);
  out->set_posix_reads_per_read(Ratio(d.posix_reads, d.reads));
  out->set_posix_read_bytes_per_logical_byte(Ratio(d.posix_read_bytes, d.read_bytes));
  out->set_min_posix_reads_per_read(d.min_posix_reads_per_read);
  out->set_max_posix_reads_per_read(d.max_posix_reads_per_read);
  out->set_writes(d.writes);
  out->set_write_elements(d.write_elements);
  out->set_write_logical_bytes(d.write_bytes);
  out->set_write_seconds(Seconds(d.write_ns));
  out->set_posix_writes(d.posix_writes);
  out->set_posix_write_bytes(d.posix_write_bytes);
  out->set_chunk_reads(d.chunk_reads);
  out->set_chunk_read_bytes(d.chunk_read_bytes);
  out->set_chunk_writes(d.chunk_writes);
  out->set_chunk_write_bytes(d.chunk_write_bytes);
  out->set_posix_other(d.posix_other);
  out->set_nested_calls(d.nested_calls);
  out->set_failed_calls(d.failed_calls);
  out->set_processes(d.processes);
}

void FillDatasets(const RunState& s, stats::Stats* out) {
  // Most logical bytes first; equal ones by name.
  std::vector<const std::pair<const std::string, DatasetAccumulator>*> datasets;
  for (const auto& entry : s.datasets) datasets.push_back(&entry);
  std::stable_sort(datasets.begin(), datasets.end(), [](const auto* a, const auto* b) {
    return a->second.read_bytes + a->second.write_bytes >
           b->second.read_bytes + b->second.write_bytes;
  });
  for (const auto* entry : datasets) FillDataset(entry->first, entry->second, out->add_datasets());
}

void FillTfRecordFiles(const std::vector<RunFile>& files, const RunState& s,
                       stats::Stats* out) {
  const std::vector<TfRecordFileAccumulator> tfrecords = s.tfrecords.Files();
  absl::flat_hash_map<std::string_view, const FileAccumulator*> by_path;
  if (!tfrecords.empty()) {
    for (const RunFile& f : files) by_path.emplace(f.path, f.file);
  }
  for (const TfRecordFileAccumulator& t : tfrecords) {
    stats::TfRecordFile* o = out->add_tfrecord_files();
    o->set_path(t.path);
    o->set_compression(t.compression);
    o->set_detected_by_suffix(t.detected_by_suffix);
    o->set_detected_by_header(t.detected_by_header);
    o->set_attributed(t.note.empty());
    o->set_note(t.note);
    o->set_records(t.records);
    o->set_record_bytes(t.record_bytes);
    stats::RecordSizes* sizes = o->mutable_record_size();
    sizes->set_min(t.min_record);
    sizes->set_max(t.max_record);
    sizes->set_mean(Ratio(t.record_bytes, t.records));
    for (const auto& [k, n] : t.size_log2) {
      stats::SizeBucket* b = sizes->add_log2_buckets();
      b->set_from(k < 0 ? 0 : uint64_t{1} << k);
      b->set_to(k < 0 ? 1 : uint64_t{2} << k);
      b->set_records(n);
    }
    // The file's reads are its counts, as the files section gives them.
    if (auto file = by_path.find(t.path); file != by_path.end()) {
      o->set_reads(file->second->counts.reads());
      o->set_read_bytes(file->second->counts.read_bytes);
    }
    o->set_reads_completing_records(t.reads_completing_records);
    o->set_records_per_read(Ratio(t.records, o->reads()));
    o->set_spanned_records(t.spanned_records);
    o->set_index_unknown_records(t.index_unknown_records);
    o->set_sequential_steps(t.sequential_steps);
    o->set_restarts(t.restarts);
    o->set_jumps(t.jumps);
    o->set_order(t.Order());
    o->set_processes(t.processes);
  }
}

void FillMapped(const MappedAccumulator& mapped, stats::Stats* out) {
  const MappedTotals t = mapped.Totals();
  stats::MappedReads* m = out->mutable_mapped_reads();
  m->set_processes_sampled(t.processes_sampled);
  m->set_processes_counted(t.processes_counted);
  m->set_lost_faults(t.lost_faults);
  m->set_counted_minor_faults(t.counted_minor_faults);
  m->set_counted_major_faults(t.counted_major_faults);
  m->set_counted_read_bytes(t.counted_read_bytes);
  for (const std::string& n : t.notes) m->add_notes(n);
  for (const MappedFileStats& f : t.mapped) {
    stats::MappedFile* o = m->add_files();
    o->set_path(f.path);
    o->set_faults(f.faults);
    o->set_major_faults(f.major_faults);
    o->set_span_bytes(f.span_bytes);
    o->set_touched_bytes(f.touched_bytes);
    o->set_estimated_spans(f.estimated_spans);
    o->set_major_s(static_cast<double>(f.major_ns) / 1e9);
  }
  stats::IoUring* u = out->mutable_io_uring();
  u->set_calls(t.uring_calls);
  u->set_unseen_requests(t.uring_unseen_requests);
  for (const UringFileStats& f : t.uring) {
    stats::UringFile* o = u->add_files();
    o->set_path(f.path);
    o->set_reads(f.reads);
    o->set_read_bytes(f.read_bytes);
    o->set_writes(f.writes);
    o->set_write_bytes(f.write_bytes);
    o->set_other(f.other);
    o->set_failed(f.failed);
    o->set_incomplete(f.incomplete);
    o->set_read_seconds(static_cast<double>(f.read_ns) / 1e9);
  }
}

}  // namespace

void BuildStats(const RunState& s, const std::vector<RunFile>& files, stats::Stats* out) {
  out->set_events(s.events);
  out->set_dropped_events(s.dropped);
  for (const auto& [kind, f] : s.ipc) FillFile(f, out->add_ipc());
  FillCuda(s.cuda, out);
  FillMapped(s.mapped, out);
  FillProcesses(s, out);
  FillDatasets(s, out);
  FillTfRecordFiles(files, s, out);
  for (const ReadIssue& i : s.issues) {
    stats::Issue* issue = out->add_issues();
    issue->set_file(i.path);
    issue->set_offset(i.offset);
    issue->set_bytes_skipped(i.bytes_skipped);
    issue->set_truncated(i.truncated);
    issue->set_message(i.message);
    issue->set_text(i.ToString());
  }
}

}  // namespace iotap::analyzer::run_state
