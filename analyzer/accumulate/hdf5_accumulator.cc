#include "analyzer/accumulate/hdf5_accumulator.h"

#include <algorithm>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

const char* LayoutName(Hdf5Dataset::Layout layout) {
  switch (layout) {
    case Hdf5Dataset::LAYOUT_COMPACT: return "compact";
    case Hdf5Dataset::LAYOUT_CONTIGUOUS: return "contiguous";
    case Hdf5Dataset::LAYOUT_CHUNKED: return "chunked";
    case Hdf5Dataset::LAYOUT_VIRTUAL: return "virtual";
    default: return "unknown";
  }
}

std::pair<std::string_view, std::string_view> DatasetNameParts(std::string_view dataset) {
  // The shim writes the file's path, ':', then the dataset's absolute path in
  // the file: a ':' in the file's name is not followed by '/' as a rule.
  size_t colon = dataset.rfind(":/");
  if (colon == std::string_view::npos) colon = dataset.rfind(':');
  if (colon == std::string_view::npos) return {std::string_view(), dataset};
  return {dataset.substr(0, colon), dataset.substr(colon + 1)};
}

void DatasetAccumulator::Merge(const DatasetAccumulator& o) {
  if (o.described && o.described_rank >= described_rank) {
    description = o.description;
    described = true;
    described_rank = o.described_rank;
  }
  if (o.reads > 0) {
    min_posix_reads_per_read = reads == 0 ? o.min_posix_reads_per_read
                                          : std::min(min_posix_reads_per_read, o.min_posix_reads_per_read);
    max_posix_reads_per_read = std::max(max_posix_reads_per_read, o.max_posix_reads_per_read);
  }
  opens += o.opens;
  closes += o.closes;
  reads += o.reads;
  AddTo(&read_elements, o.read_elements);
  AddTo(&read_bytes, o.read_bytes);
  AddTo(&read_ns, o.read_ns);
  writes += o.writes;
  AddTo(&write_elements, o.write_elements);
  AddTo(&write_bytes, o.write_bytes);
  AddTo(&write_ns, o.write_ns);
  chunk_reads += o.chunk_reads;
  AddTo(&chunk_read_bytes, o.chunk_read_bytes);
  AddTo(&chunk_read_ns, o.chunk_read_ns);
  chunk_writes += o.chunk_writes;
  AddTo(&chunk_write_bytes, o.chunk_write_bytes);
  failed_calls += o.failed_calls;
  nested_calls += o.nested_calls;
  posix_reads += o.posix_reads;
  AddTo(&posix_read_bytes, o.posix_read_bytes);
  posix_writes += o.posix_writes;
  AddTo(&posix_write_bytes, o.posix_write_bytes);
  posix_other += o.posix_other;
  processes += o.processes;
}

uint64_t DatasetAccumulator::ChunkBytes() const {
  if (!described || description.chunk_dims().empty()) return 0;
  uint64_t n = description.element_size();
  for (uint64_t d : description.chunk_dims()) n *= d;
  return n;
}

void Hdf5Accumulator::OnCall(const ProcessTrace& process, const Event& e) {
  Beneath b;
  if (auto it = pending_.find(e.aux); it != pending_.end()) {
    b = it->second;
    pending_.erase(it);
  }
  if (e.file == 0 || process.Name(e.file).kind != InternedString::KIND_DATASET) return;
  DatasetAccumulator& d = by_id_[e.file];
  bool failed = e.result < 0;  // HDF5's errno is not a verdict: see Op in trace.proto
  if (failed) ++d.failed_calls;
  if (e.parent != 0) ++d.nested_calls;
  switch (e.op) {
    case OP_H5D_OPEN:
    case OP_H5D_CREATE:
    case OP_H5O_OPEN:
      ++d.opens;
      d.posix_other += b.calls;
      break;
    case OP_H5D_CLOSE:
    case OP_H5O_CLOSE:
      ++d.closes;
      d.posix_other += b.calls;
      break;
    case OP_H5D_READ:
      d.min_posix_reads_per_read =
          d.reads == 0 ? b.reads : std::min(d.min_posix_reads_per_read, b.reads);
      d.max_posix_reads_per_read = std::max(d.max_posix_reads_per_read, b.reads);
      ++d.reads;
      if (!failed) {
        AddTo(&d.read_elements, static_cast<uint64_t>(e.result));
        AddTo(&d.read_bytes, e.requested);
      }
      AddTo(&d.read_ns, e.duration_ns());
      d.posix_reads += b.reads;
      AddTo(&d.posix_read_bytes, b.read_bytes);
      break;
    case OP_H5D_READ_CHUNK:
      ++d.chunk_reads;
      AddTo(&d.chunk_read_bytes, e.requested);
      AddTo(&d.chunk_read_ns, e.duration_ns());
      d.posix_reads += b.reads;
      AddTo(&d.posix_read_bytes, b.read_bytes);
      break;
    case OP_H5D_WRITE:
      ++d.writes;
      if (!failed) {
        AddTo(&d.write_elements, static_cast<uint64_t>(e.result));
        AddTo(&d.write_bytes, e.requested);
      }
      AddTo(&d.write_ns, e.duration_ns());
      d.posix_writes += b.writes;
      AddTo(&d.posix_write_bytes, b.write_bytes);
      break;
    case OP_H5D_WRITE_CHUNK:
      ++d.chunk_writes;
      AddTo(&d.chunk_write_bytes, e.requested);
      d.posix_writes += b.writes;
      AddTo(&d.posix_write_bytes, b.write_bytes);
      break;
    default:
      break;
  }
}

void Hdf5Accumulator::OnDescription(const Hdf5Dataset& h) {
  DatasetAccumulator& d = by_id_[h.id()];
  d.description = h;
  d.described = true;
}

std::map<std::string, DatasetAccumulator> Hdf5Accumulator::Finish(const ProcessTrace& process) {
  std::map<std::string, DatasetAccumulator> out;
  for (auto& [id, d] : by_id_) {
    DatasetAccumulator& into = out[std::string(process.Text(id))];
    into.Merge(d);
    into.processes = 1;
  }
  by_id_.clear();
  pending_.clear();
  return out;
}

}  // namespace iotap::analyzer
