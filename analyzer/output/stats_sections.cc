#include "analyzer/output/stats_sections.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer::internal {

namespace {

std::string Dims(const google::protobuf::RepeatedField<uint64_t>& dims) {
  return dims.empty() ? "scalar" : absl::StrJoin(dims, " x ");
}

// "[1.0 KiB, 2.0 KiB)" for a bucket of sizes.
std::string Bucket(const stats::SizeBucket& b) {
  if (b.to() == 1) return "empty";
  return absl::StrCat("[", HumanBytes(static_cast<double>(b.from())), ", ",
                      HumanBytes(static_cast<double>(b.to())), ")");
}

}  // namespace

void CudaToJson(const stats::Stats& s, JsonWriter& j) {
  j.Key("cuda_copies");
  j.BeginArray();
  for (const stats::CudaCopies& c : s.cuda_copies()) {
    j.BeginObject();
    j.Key("direction");
    j.String(c.direction());
    j.Key("host_memory");
    j.String(c.host_memory());
    j.Key("mode");
    j.String(c.mode());
    j.Key("calls");
    j.Uint(c.calls());
    j.Key("failed_calls");
    j.Uint(c.failed_calls());
    j.Key("bytes");
    j.Uint(c.bytes());
    j.Key("seconds");
    j.Double(c.seconds());
    j.EndObject();
  }
  j.EndArray();
  j.Key("cuda_device");
  j.BeginObject();
  j.Key("copies");
  j.BeginArray();
  for (const stats::CudaDeviceCopies& c : s.cuda_device().copies()) {
    j.BeginObject();
    j.Key("direction");
    j.String(c.direction());
    j.Key("host_memory");
    j.String(c.host_memory());
    j.Key("copies");
    j.Uint(c.copies());
    j.Key("bytes");
    j.Uint(c.bytes());
    j.Key("seconds");
    j.Double(c.seconds());
    j.EndObject();
  }
  j.EndArray();
  j.Key("kernels");
  j.Uint(s.cuda_device().kernels());
  j.Key("kernel_seconds");
  j.Double(s.cuda_device().kernel_seconds());
  j.EndObject();
  j.Key("cuda_pinned");
  j.BeginObject();
  j.Key("allocations");
  j.Uint(s.cuda_pinned().allocations());
  j.Key("bytes");
  j.Uint(s.cuda_pinned().bytes());
  j.EndObject();
}

std::string CudaToText(const stats::Stats& s) {
  const stats::CudaDevice& device = s.cuda_device();
  if (s.cuda_copies().empty() && device.copies().empty() && device.kernels() == 0 &&
      s.cuda_pinned().allocations() == 0) {
    return "";
  }
  std::string out =
      "CUDA copies (host side: bytes of the calls that succeeded, time the calls took):\n";
  absl::StrAppendFormat(&out, "  %-9s %-9s %-6s %8s %7s %12s %10s %12s\n", "direction", "host",
                        "mode", "calls", "failed", "bytes", "time", "bytes/call");
  for (const stats::CudaCopies& c : s.cuda_copies()) {
    uint64_t ok = c.calls() - c.failed_calls();
    absl::StrAppendFormat(&out, "  %-9s %-9s %-6s %8d %7d %12s %10s %12s\n", c.direction(),
                          c.host_memory(), c.mode(), c.calls(), c.failed_calls(),
                          HumanBytes(c.bytes()), HumanDuration(c.seconds()),
                          ok == 0 ? "-" : HumanBytes(static_cast<double>(c.bytes()) / ok));
  }
  absl::StrAppendFormat(&out, "  pinned host memory: %d allocations or registrations, %s\n",
                        s.cuda_pinned().allocations(), HumanBytes(s.cuda_pinned().bytes()));
  if (!device.copies().empty() || device.kernels() != 0) {
    out += "CUDA on the device (CUPTI: bytes, device time):\n";
    for (const stats::CudaDeviceCopies& c : device.copies()) {
      absl::StrAppendFormat(&out, "  %-9s %-9s %8d copies %12s %10s\n", c.direction(),
                            c.host_memory(), c.copies(), HumanBytes(c.bytes()),
                            HumanDuration(c.seconds()));
    }
    absl::StrAppendFormat(&out, "  kernels   %8d, %s\n", device.kernels(),
                          HumanDuration(device.kernel_seconds()));
  }
  return out;
}

void DatasetsToJson(const stats::Stats& s, JsonWriter& j) {
  auto uints = [&](const char* key, const google::protobuf::RepeatedField<uint64_t>& v) {
    j.Key(key);
    j.BeginArray();
    for (uint64_t x : v) j.Uint(x);
    j.EndArray();
  };
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  auto number = [&](const char* key, double v) {
    j.Key(key);
    j.Double(v);
  };
  j.BeginArray();
  for (const stats::Dataset& d : s.datasets()) {
    j.BeginObject();
    j.Key("dataset");
    j.String(d.dataset());
    j.Key("file");
    j.String(d.file());
    j.Key("name");
    j.String(d.name());
    j.Key("described");
    j.Bool(d.described());
    uint("element_size", d.element_size());
    uints("dims", d.dims());
    j.Key("layout");
    j.String(d.layout());
    uints("chunk_dims", d.chunk_dims());
    uint("chunk_bytes", d.chunk_bytes());
    j.Key("filters");
    j.BeginArray();
    for (const stats::Filter& f : d.filters()) {
      j.BeginObject();
      j.Key("id");
      j.Int(f.id());
      j.Key("name");
      j.String(f.name());
      j.EndObject();
    }
    j.EndArray();
    j.Key("type_class");
    j.String(d.type_class());
    uint("opens", d.opens());
    uint("closes", d.closes());
    uint("reads", d.reads());
    uint("read_elements", d.read_elements());
    uint("read_logical_bytes", d.read_logical_bytes());
    number("read_seconds", d.read_seconds());
    uint("posix_reads", d.posix_reads());
    uint("posix_read_bytes", d.posix_read_bytes());
    number("posix_reads_per_read", d.posix_reads_per_read());
    number("posix_read_bytes_per_logical_byte", d.posix_read_bytes_per_logical_byte());
    uint("min_posix_reads_per_read", d.min_posix_reads_per_read());
    uint("max_posix_reads_per_read", d.max_posix_reads_per_read());
    uint("writes", d.writes());
    uint("write_elements", d.write_elements());
    uint("write_logical_bytes", d.write_logical_bytes());
    number("write_seconds", d.write_seconds());
    uint("posix_writes", d.posix_writes());
    uint("posix_write_bytes", d.posix_write_bytes());
    uint("chunk_reads", d.chunk_reads());
    uint("chunk_read_bytes", d.chunk_read_bytes());
    uint("chunk_writes", d.chunk_writes());
    uint("chunk_write_bytes", d.chunk_write_bytes());
    uint("posix_other", d.posix_other());
    uint("nested_calls", d.nested_calls());
    uint("failed_calls", d.failed_calls());
    uint("processes", d.processes());
    j.EndObject();
  }
  j.EndArray();
}

std::string DatasetsToText(const stats::Stats& s) {
  if (s.datasets().empty()) return "";
  std::string out = absl::StrFormat("HDF5 datasets: %d\n", s.datasets_size());
  for (const stats::Dataset& d : s.datasets()) {
    absl::StrAppend(&out, "  ", DisplayName(d.dataset()), "\n");
    if (d.described()) {
      std::string layout = d.layout();
      if (!d.chunk_dims().empty()) {
        absl::StrAppend(&layout, " ", Dims(d.chunk_dims()), " (", HumanBytes(d.chunk_bytes()),
                        " chunks)");
      }
      std::vector<std::string> filters;
      for (const stats::Filter& f : d.filters()) {
        filters.push_back(
            absl::StrCat(f.name().empty() ? "filter" : DisplayName(f.name()), " (", f.id(), ")"));
      }
      absl::StrAppendFormat(&out, "    %s, %s elements, %s, %s, %s\n", d.type_class(),
                            HumanBytes(d.element_size()), Dims(d.dims()), layout,
                            filters.empty() ? "no filters" : absl::StrJoin(filters, ", "));
    }
    if (d.reads() > 0) {
      absl::StrAppendFormat(&out,
                            "    H5Dread: %d calls, %s logical in %s; beneath them %d POSIX reads"
                            " of %s\n",
                            d.reads(), HumanBytes(d.read_logical_bytes()),
                            HumanDuration(d.read_seconds()), d.posix_reads(),
                            HumanBytes(d.posix_read_bytes()));
      absl::StrAppendFormat(
          &out,
          "    each %s H5Dread became %.1f POSIX reads of %s (%d to %d per call; %.2f bytes read"
          " per logical byte)\n",
          HumanBytes(Ratio(d.read_logical_bytes(), d.reads())), d.posix_reads_per_read(),
          HumanBytes(Ratio(d.posix_read_bytes(), d.posix_reads())), d.min_posix_reads_per_read(),
          d.max_posix_reads_per_read(), d.posix_read_bytes_per_logical_byte());
    }
    if (d.writes() > 0) {
      absl::StrAppendFormat(&out,
                            "    H5Dwrite: %d calls, %s logical in %s; beneath them %d POSIX"
                            " writes of %s\n",
                            d.writes(), HumanBytes(d.write_logical_bytes()),
                            HumanDuration(d.write_seconds()), d.posix_writes(),
                            HumanBytes(d.posix_write_bytes()));
    }
    if (d.chunk_reads() + d.chunk_writes() > 0) {
      absl::StrAppendFormat(&out, "    H5Dread_chunk: %d calls, %s; H5Dwrite_chunk: %d calls, %s\n",
                            d.chunk_reads(), HumanBytes(d.chunk_read_bytes()), d.chunk_writes(),
                            HumanBytes(d.chunk_write_bytes()));
    }
    absl::StrAppendFormat(&out,
                          "    opens %d, closes %d (%d POSIX calls beneath), failed calls %d,"
                          " nested calls %d, processes %d\n",
                          d.opens(), d.closes(), d.posix_other(), d.failed_calls(),
                          d.nested_calls(), d.processes());
  }
  return out;
}

void TfRecordFilesToJson(const stats::Stats& s, JsonWriter& j) {
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  j.BeginArray();
  for (const stats::TfRecordFile& f : s.tfrecord_files()) {
    j.BeginObject();
    j.Key("path");
    j.String(f.path());
    j.Key("compression");
    j.String(f.compression());
    j.Key("detected_by_suffix");
    j.Bool(f.detected_by_suffix());
    j.Key("detected_by_header");
    j.Bool(f.detected_by_header());
    j.Key("attributed");
    j.Bool(f.attributed());
    j.Key("note");
    j.String(f.note());
    uint("records", f.records());
    uint("record_bytes", f.record_bytes());
    j.Key("record_size");
    j.BeginObject();
    uint("min", f.record_size().min());
    uint("max", f.record_size().max());
    j.Key("mean");
    j.Double(f.record_size().mean());
    j.Key("log2_buckets");
    j.BeginArray();
    for (const stats::SizeBucket& b : f.record_size().log2_buckets()) {
      j.BeginObject();
      uint("from", b.from());
      uint("to", b.to());
      uint("records", b.records());
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
    uint("reads", f.reads());
    uint("read_bytes", f.read_bytes());
    uint("reads_completing_records", f.reads_completing_records());
    j.Key("records_per_read");
    j.Double(f.records_per_read());
    uint("spanned_records", f.spanned_records());
    uint("index_unknown_records", f.index_unknown_records());
    uint("sequential_steps", f.sequential_steps());
    uint("restarts", f.restarts());
    uint("jumps", f.jumps());
    j.Key("order");
    j.String(f.order());
    uint("processes", f.processes());
    j.EndObject();
  }
  j.EndArray();
}

std::string TfRecordFilesToText(const stats::Stats& s) {
  if (s.tfrecord_files().empty()) return "";
  std::string out = absl::StrFormat("TFRecord files: %d\n", s.tfrecord_files_size());
  for (const stats::TfRecordFile& f : s.tfrecord_files()) {
    std::vector<std::string> how;
    if (f.detected_by_suffix()) how.push_back("name");
    if (f.detected_by_header()) how.push_back("record header");
    absl::StrAppendFormat(&out, "  %s  (recognised by %s; %s)\n", DisplayName(f.path()),
                          how.empty() ? "-" : absl::StrJoin(how, " and "),
                          f.compression() == "none" ? "uncompressed"
                                                    : absl::StrCat(f.compression(), "-compressed"));
    if (!f.note().empty()) absl::StrAppend(&out, "    not attributed: ", DisplayName(f.note()), "\n");
    if (f.records() == 0) continue;
    absl::StrAppendFormat(&out, "    %d records read, %s of data; record sizes %s to %s, mean %s\n",
                          f.records(), HumanBytes(f.record_bytes()),
                          HumanBytes(f.record_size().min()), HumanBytes(f.record_size().max()),
                          HumanBytes(f.record_size().mean()));
    absl::StrAppendFormat(&out,
                          "    %d reads of %s: %.2f records per read; %d reads completed records;"
                          " %d records took two or more reads\n",
                          f.reads(), HumanBytes(f.read_bytes()), f.records_per_read(),
                          f.reads_completing_records(), f.spanned_records());
    absl::StrAppendFormat(&out,
                          "    order: %s (%d steps to the next record, %d restarts at 0, %d jumps)\n",
                          f.order().empty() ? "-" : f.order(), f.sequential_steps(), f.restarts(),
                          f.jumps());
    std::vector<std::string> buckets;
    for (const stats::SizeBucket& b : f.record_size().log2_buckets()) {
      buckets.push_back(absl::StrCat(Bucket(b), ": ", b.records()));
    }
    absl::StrAppend(&out, "    records by size: ", absl::StrJoin(buckets, ", "), "\n");
  }
  return out;
}

}  // namespace iotap::analyzer::internal
