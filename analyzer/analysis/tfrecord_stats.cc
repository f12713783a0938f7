#include "analyzer/analysis/tfrecord_stats.h"

#include <algorithm>
#include <bit>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

// Framing around a record's data: length, its CRC, and the data's CRC.
constexpr int64_t kFramingBytes = 16;

const char* CompressionName(TfRecordFile::Compression c) {
  switch (c) {
    case TfRecordFile::COMPRESSION_GZIP: return "gzip";
    case TfRecordFile::COMPRESSION_ZLIB: return "zlib";
    default: return "none";
  }
}

void Merge(TfRecordFileStats* into, const TfRecordFileStats& f) {
  if (f.described) {
    into->described = true;
    into->compression = f.compression;
    into->detected_by_suffix |= f.detected_by_suffix;
    into->detected_by_header |= f.detected_by_header;
    if (!f.note.empty()) into->note = f.note;
  }
  if (f.records > 0) {
    into->min_record = into->records == 0 ? f.min_record : std::min(into->min_record, f.min_record);
    into->max_record = std::max(into->max_record, f.max_record);
  }
  into->records += f.records;
  into->record_bytes += f.record_bytes;
  for (const auto& [k, n] : f.size_log2) into->size_log2[k] += n;
  into->reads_completing_records += f.reads_completing_records;
  into->spanned_records += f.spanned_records;
  into->index_unknown_records += f.index_unknown_records;
  into->sequential_steps += f.sequential_steps;
  into->restarts += f.restarts;
  into->jumps += f.jumps;
  // A process's own stats count as one; stats merged before carry theirs.
  into->processes += std::max<uint64_t>(f.processes, 1);
}

std::string Bucket(int k) {
  if (k < 0) return "empty";
  return absl::StrCat("[", HumanBytes(static_cast<double>(uint64_t{1} << k)), ", ",
                      HumanBytes(static_cast<double>(uint64_t{2} << k)), ")");
}

}  // namespace

std::string TfRecordFileStats::Order() const {
  uint64_t steps = sequential_steps + restarts + jumps;
  if (steps == 0) return "";
  if (jumps == 0) return "in order";
  return jumps * 2 > steps ? "shuffled" : "mixed";
}

void TfRecordCollector::OnProcess(const ProcessTrace& process) { current_.clear(); }

void TfRecordCollector::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  for (const Event& e : batch.events) OnRecord(e);
}

void TfRecordCollector::OnRecord(const Event& e) {
  if (e.op != OP_TFRECORD_RECORD) return;
  Current& c = current_[e.file];
  TfRecordFileStats& f = c.stats;
  f.min_record = f.records == 0 ? e.requested : std::min(f.min_record, e.requested);
  f.max_record = std::max(f.max_record, e.requested);
  ++f.records;
  f.record_bytes += e.requested;
  ++f.size_log2[e.requested == 0 ? -1 : std::bit_width(e.requested) - 1];
  if (e.parent != c.last_parent) ++f.reads_completing_records;
  c.last_parent = e.parent;
  if (e.flags & FLAG_TFRECORD_SPANNED) ++f.spanned_records;
  if (e.flags & FLAG_TFRECORD_INDEX_UNKNOWN) ++f.index_unknown_records;
  if (c.last_end >= 0) {
    if (e.offset == c.last_end) {
      ++f.sequential_steps;
    } else if (e.offset == 0) {
      ++f.restarts;
    } else {
      ++f.jumps;
    }
  }
  c.last_end = e.offset + kFramingBytes + static_cast<int64_t>(e.requested);
}

void TfRecordCollector::Absorb(TfRecordCollector&& other) {
  for (auto& [path, f] : other.files_) {
    TfRecordFileStats& into = files_[path];
    into.path = path;
    Merge(&into, f);
  }
  other.files_.clear();
}

void TfRecordCollector::OnPacket(const ProcessTrace& process, const Packet& packet) {
  if (!packet.has_tfrecord_file()) return;
  const TfRecordFile& t = packet.tfrecord_file();
  TfRecordFileStats& f = current_[t.file()].stats;
  f.described = true;
  f.compression = CompressionName(t.compression());
  f.detected_by_suffix = t.detected_by_suffix();
  f.detected_by_header = t.detected_by_header();
  f.note = t.note();
}

void TfRecordCollector::OnFileEnd(const ProcessTrace& process) {
  for (auto& [id, c] : current_) {
    std::string path(process.Text(id));
    TfRecordFileStats& into = files_[path];
    into.path = path;
    Merge(&into, c.stats);
  }
  current_.clear();
}

std::vector<TfRecordFileStats> TfRecordCollector::Finish() {
  std::vector<TfRecordFileStats> out;
  for (auto& [path, f] : files_) out.push_back(f);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.records > b.records; });
  return out;
}

void TfRecordFilesToJson(const std::vector<TfRecordFileStats>& files, JsonWriter& j) {
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  j.BeginArray();
  for (const TfRecordFileStats& f : files) {
    j.BeginObject();
    j.Key("path");
    j.String(f.path);
    j.Key("compression");
    j.String(f.compression);
    j.Key("detected_by_suffix");
    j.Bool(f.detected_by_suffix);
    j.Key("detected_by_header");
    j.Bool(f.detected_by_header);
    j.Key("attributed");
    j.Bool(f.note.empty());
    j.Key("note");
    j.String(f.note);
    uint("records", f.records);
    uint("record_bytes", f.record_bytes);
    j.Key("record_size");
    j.BeginObject();
    uint("min", f.min_record);
    uint("max", f.max_record);
    j.Key("mean");
    j.Double(Ratio(f.record_bytes, f.records));
    j.Key("log2_buckets");
    j.BeginArray();
    for (const auto& [k, n] : f.size_log2) {
      j.BeginObject();
      uint("from", k < 0 ? 0 : uint64_t{1} << k);
      uint("to", k < 0 ? 1 : uint64_t{2} << k);
      uint("records", n);
      j.EndObject();
    }
    j.EndArray();
    j.EndObject();
    uint("reads", f.reads);
    uint("read_bytes", f.read_bytes);
    uint("reads_completing_records", f.reads_completing_records);
    j.Key("records_per_read");
    j.Double(Ratio(f.records, f.reads));
    uint("spanned_records", f.spanned_records);
    uint("index_unknown_records", f.index_unknown_records);
    uint("sequential_steps", f.sequential_steps);
    uint("restarts", f.restarts);
    uint("jumps", f.jumps);
    j.Key("order");
    j.String(f.Order());
    uint("processes", f.processes);
    j.EndObject();
  }
  j.EndArray();
}

std::string TfRecordFilesToText(const std::vector<TfRecordFileStats>& files) {
  if (files.empty()) return "";
  std::string out = absl::StrFormat("TFRecord files: %d\n", files.size());
  for (const TfRecordFileStats& f : files) {
    std::vector<std::string> how;
    if (f.detected_by_suffix) how.push_back("name");
    if (f.detected_by_header) how.push_back("record header");
    absl::StrAppendFormat(&out, "  %s  (recognised by %s; %s)\n", DisplayName(f.path),
                          how.empty() ? "-" : absl::StrJoin(how, " and "),
                          f.compression == "none" ? "uncompressed"
                                                  : absl::StrCat(f.compression, "-compressed"));
    if (!f.note.empty()) absl::StrAppend(&out, "    not attributed: ", DisplayName(f.note), "\n");
    if (f.records == 0) continue;
    absl::StrAppendFormat(&out,
                          "    %d records read, %s of data; record sizes %s to %s, mean %s\n",
                          f.records, HumanBytes(f.record_bytes), HumanBytes(f.min_record),
                          HumanBytes(f.max_record), HumanBytes(Ratio(f.record_bytes, f.records)));
    absl::StrAppendFormat(&out,
                          "    %d reads of %s: %.2f records per read; %d reads completed records;"
                          " %d records took two or more reads\n",
                          f.reads, HumanBytes(f.read_bytes), Ratio(f.records, f.reads),
                          f.reads_completing_records, f.spanned_records);
    absl::StrAppendFormat(&out, "    order: %s (%d steps to the next record, %d restarts at 0,"
                          " %d jumps)\n",
                          f.Order().empty() ? "-" : f.Order(), f.sequential_steps, f.restarts,
                          f.jumps);
    std::vector<std::string> buckets;
    for (const auto& [k, n] : f.size_log2) buckets.push_back(absl::StrCat(Bucket(k), ": ", n));
    absl::StrAppend(&out, "    records by size: ", absl::StrJoin(buckets, ", "), "\n");
  }
  return out;
}

}  // namespace iotap::analyzer
