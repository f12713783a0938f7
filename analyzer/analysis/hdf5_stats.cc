#include "analyzer/analysis/hdf5_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

const char* LayoutName(Hdf5Dataset::Layout layout) {
  switch (layout) {
    case Hdf5Dataset::LAYOUT_COMPACT: return "compact";
    case Hdf5Dataset::LAYOUT_CONTIGUOUS: return "contiguous";
    case Hdf5Dataset::LAYOUT_CHUNKED: return "chunked";
    case Hdf5Dataset::LAYOUT_VIRTUAL: return "virtual";
    default: return "unknown";
  }
}

void Describe(DatasetStats* d, const Hdf5Dataset& h) {
  d->described = true;
  d->element_size = h.element_size();
  d->dims.assign(h.dims().begin(), h.dims().end());
  d->layout = LayoutName(h.layout());
  d->chunk_dims.assign(h.chunk_dims().begin(), h.chunk_dims().end());
  d->filters.clear();
  for (const auto& f : h.filter()) d->filters.emplace_back(f.id(), f.name());
  d->type_class = h.type_class();
}

void Merge(DatasetStats* into, const DatasetStats& d) {
  if (d.reads > 0) {
    into->min_posix_reads_per_read =
        into->reads == 0 ? d.min_posix_reads_per_read
                         : std::min(into->min_posix_reads_per_read, d.min_posix_reads_per_read);
    into->max_posix_reads_per_read =
        std::max(into->max_posix_reads_per_read, d.max_posix_reads_per_read);
  }
  into->opens += d.opens;
  into->closes += d.closes;
  into->reads += d.reads;
  into->read_elements += d.read_elements;
  into->read_bytes += d.read_bytes;
  into->read_ns += d.read_ns;
  into->writes += d.writes;
  into->write_elements += d.write_elements;
  into->write_bytes += d.write_bytes;
  into->write_ns += d.write_ns;
  into->chunk_reads += d.chunk_reads;
  into->chunk_read_bytes += d.chunk_read_bytes;
  into->chunk_writes += d.chunk_writes;
  into->chunk_write_bytes += d.chunk_write_bytes;
  into->failed_calls += d.failed_calls;
  into->nested_calls += d.nested_calls;
  into->posix_reads += d.posix_reads;
  into->posix_read_bytes += d.posix_read_bytes;
  into->posix_writes += d.posix_writes;
  into->posix_write_bytes += d.posix_write_bytes;
  into->posix_other += d.posix_other;
  ++into->processes;
}

std::string Dims(const std::vector<uint64_t>& dims) {
  return dims.empty() ? "scalar" : absl::StrJoin(dims, " x ");
}

}  // namespace

uint64_t DatasetStats::ChunkBytes() const {
  if (chunk_dims.empty()) return 0;
  uint64_t n = element_size;
  for (uint64_t d : chunk_dims) n *= d;
  return n;
}

void Hdf5Collector::OnProcess(const ProcessTrace& process) {
  current_.clear();
  descriptions_.clear();
  pending_.clear();
}

void Hdf5Collector::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  for (const Event& e : batch.events) OnEvent(process, e, TraitsOf(e.op));
}

void Hdf5Collector::OnEvent(const ProcessTrace& process, const Event& e, const OpTraits& op) {
  Layer layer = op.layer;
  if (layer == Layer::kPosix || layer == Layer::kStdio) {
    if (e.parent == 0) return;
    Beneath& b = pending_[e.parent];
    ++b.calls;
    Transfer t = op.transfer;
    if (t == Transfer::kRead) {
      ++b.reads;
      b.read_bytes += BytesMoved(e);
    } else if (t == Transfer::kWrite) {
      ++b.writes;
      b.write_bytes += BytesMoved(e);
    }
    return;
  }
  if (layer != Layer::kHdf5) return;
  Beneath b;
  if (auto it = pending_.find(e.aux); it != pending_.end()) {
    b = it->second;
    pending_.erase(it);
  }
  if (e.file == 0 || process.Name(e.file).kind != InternedString::KIND_DATASET) return;
  DatasetStats& d = current_[e.file];
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
        d.read_elements += static_cast<uint64_t>(e.result);
        d.read_bytes += e.requested;
      }
      d.read_ns += e.duration_ns();
      d.posix_reads += b.reads;
      d.posix_read_bytes += b.read_bytes;
      break;
    case OP_H5D_READ_CHUNK:
      ++d.chunk_reads;
      d.chunk_read_bytes += e.requested;
      d.posix_reads += b.reads;
      d.posix_read_bytes += b.read_bytes;
      break;
    case OP_H5D_WRITE:
      ++d.writes;
      if (!failed) {
        d.write_elements += static_cast<uint64_t>(e.result);
        d.write_bytes += e.requested;
      }
      d.write_ns += e.duration_ns();
      d.posix_writes += b.writes;
      d.posix_write_bytes += b.write_bytes;
      break;
    case OP_H5D_WRITE_CHUNK:
      ++d.chunk_writes;
      d.chunk_write_bytes += e.requested;
      d.posix_writes += b.writes;
      d.posix_write_bytes += b.write_bytes;
      break;
    default:
      break;
  }
}

void Hdf5Collector::OnPacket(const ProcessTrace& process, const Packet& packet) {
  if (!packet.has_hdf5_dataset()) return;
  descriptions_[packet.hdf5_dataset().id()] = packet.hdf5_dataset();
  current_[packet.hdf5_dataset().id()];  // a dataset described but not used still shows
}

void Hdf5Collector::OnFileEnd(const ProcessTrace& process) {
  for (auto& [id, d] : current_) {
    std::string full(process.Text(id));
    DatasetStats& into = datasets_[full];
    if (into.dataset.empty()) {
      into.dataset = full;
      size_t colon = full.rfind(":/");
      if (colon == std::string::npos) colon = full.rfind(':');
      into.file = colon == std::string::npos ? "" : full.substr(0, colon);
      into.name = colon == std::string::npos ? full : full.substr(colon + 1);
    }
    if (auto it = descriptions_.find(id); it != descriptions_.end()) Describe(&into, it->second);
    Merge(&into, d);
  }
  current_.clear();
  descriptions_.clear();
  pending_.clear();
}

std::vector<DatasetStats> Hdf5Collector::Finish() {
  std::vector<DatasetStats> out;
  for (auto& [name, d] : datasets_) out.push_back(d);
  std::stable_sort(out.begin(), out.end(), [](const DatasetStats& a, const DatasetStats& b) {
    return a.read_bytes + a.write_bytes > b.read_bytes + b.write_bytes;
  });
  return out;
}

void DatasetsToJson(const std::vector<DatasetStats>& datasets, JsonWriter& j) {
  auto uints = [&](const char* key, const std::vector<uint64_t>& v) {
    j.Key(key);
    j.BeginArray();
    for (uint64_t x : v) j.Uint(x);
    j.EndArray();
  };
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  j.BeginArray();
  for (const DatasetStats& d : datasets) {
    j.BeginObject();
    j.Key("dataset");
    j.String(d.dataset);
    j.Key("file");
    j.String(d.file);
    j.Key("name");
    j.String(d.name);
    j.Key("described");
    j.Bool(d.described);
    uint("element_size", d.element_size);
    uints("dims", d.dims);
    j.Key("layout");
    j.String(d.layout);
    uints("chunk_dims", d.chunk_dims);
    uint("chunk_bytes", d.ChunkBytes());
    j.Key("filters");
    j.BeginArray();
    for (const auto& [id, name] : d.filters) {
      j.BeginObject();
      j.Key("id");
      j.Int(id);
      j.Key("name");
      j.String(name);
      j.EndObject();
    }
    j.EndArray();
    j.Key("type_class");
    j.String(d.type_class);
    uint("opens", d.opens);
    uint("closes", d.closes);
    uint("reads", d.reads);
    uint("read_elements", d.read_elements);
    uint("read_logical_bytes", d.read_bytes);
    j.Key("read_seconds");
    j.Double(Seconds(d.read_ns));
    uint("posix_reads", d.posix_reads);
    uint("posix_read_bytes", d.posix_read_bytes);
    j.Key("posix_reads_per_read");
    j.Double(Ratio(d.posix_reads, d.reads));
    j.Key("posix_read_bytes_per_logical_byte");
    j.Double(Ratio(d.posix_read_bytes, d.read_bytes));
    uint("min_posix_reads_per_read", d.min_posix_reads_per_read);
    uint("max_posix_reads_per_read", d.max_posix_reads_per_read);
    uint("writes", d.writes);
    uint("write_elements", d.write_elements);
    uint("write_logical_bytes", d.write_bytes);
    j.Key("write_seconds");
    j.Double(Seconds(d.write_ns));
    uint("posix_writes", d.posix_writes);
    uint("posix_write_bytes", d.posix_write_bytes);
    uint("chunk_reads", d.chunk_reads);
    uint("chunk_read_bytes", d.chunk_read_bytes);
    uint("chunk_writes", d.chunk_writes);
    uint("chunk_write_bytes", d.chunk_write_bytes);
    uint("posix_other", d.posix_other);
    uint("nested_calls", d.nested_calls);
    uint("failed_calls", d.failed_calls);
    uint("processes", d.processes);
    j.EndObject();
  }
  j.EndArray();
}

std::string DatasetsToText(const std::vector<DatasetStats>& datasets) {
  if (datasets.empty()) return "";
  std::string out = absl::StrFormat("HDF5 datasets: %d\n", datasets.size());
  for (const DatasetStats& d : datasets) {
    absl::StrAppend(&out, "  ", DisplayName(d.dataset), "\n");
    if (d.described) {
      std::string layout = d.layout;
      if (!d.chunk_dims.empty()) {
        absl::StrAppend(&layout, " ", Dims(d.chunk_dims), " (", HumanBytes(d.ChunkBytes()),
                        " chunks)");
      }
      std::vector<std::string> filters;
      for (const auto& [id, name] : d.filters) {
        filters.push_back(absl::StrCat(name.empty() ? "filter" : DisplayName(name), " (", id, ")"));
      }
      absl::StrAppendFormat(&out, "    %s, %s elements, %s, %s, %s\n", d.type_class,
                            HumanBytes(d.element_size), Dims(d.dims), layout,
                            filters.empty() ? "no filters" : absl::StrJoin(filters, ", "));
    }
    if (d.reads > 0) {
      absl::StrAppendFormat(&out,
                            "    H5Dread: %d calls, %s logical in %s; beneath them %d POSIX reads"
                            " of %s\n",
                            d.reads, HumanBytes(d.read_bytes), HumanDuration(Seconds(d.read_ns)),
                            d.posix_reads, HumanBytes(d.posix_read_bytes));
      absl::StrAppendFormat(
          &out,
          "    each %s H5Dread became %.1f POSIX reads of %s (%d to %d per call; %.2f bytes read"
          " per logical byte)\n",
          HumanBytes(Ratio(d.read_bytes, d.reads)), Ratio(d.posix_reads, d.reads),
          HumanBytes(Ratio(d.posix_read_bytes, d.posix_reads)), d.min_posix_reads_per_read,
          d.max_posix_reads_per_read, Ratio(d.posix_read_bytes, d.read_bytes));
    }
    if (d.writes > 0) {
      absl::StrAppendFormat(&out,
                            "    H5Dwrite: %d calls, %s logical in %s; beneath them %d POSIX"
                            " writes of %s\n",
                            d.writes, HumanBytes(d.write_bytes), HumanDuration(Seconds(d.write_ns)),
                            d.posix_writes, HumanBytes(d.posix_write_bytes));
    }
    if (d.chunk_reads + d.chunk_writes > 0) {
      absl::StrAppendFormat(&out, "    H5Dread_chunk: %d calls, %s; H5Dwrite_chunk: %d calls, %s\n",
                            d.chunk_reads, HumanBytes(d.chunk_read_bytes), d.chunk_writes,
                            HumanBytes(d.chunk_write_bytes));
    }
    absl::StrAppendFormat(&out,
                          "    opens %d, closes %d (%d POSIX calls beneath), failed calls %d,"
                          " nested calls %d, processes %d\n",
                          d.opens, d.closes, d.posix_other, d.failed_calls, d.nested_calls,
                          d.processes);
  }
  return out;
}

}  // namespace iotap::analyzer
