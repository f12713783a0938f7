#include "analyzer/accumulate/tfrecord_accumulator.h"

#include <algorithm>
#include <bit>

#include "analyzer/base/numbers.h"

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

// Adds `f`, whose description and note rank `rank`, into `into`.
void Merge(TfRecordFileAccumulator* into, const TfRecordFileAccumulator& f, int rank) {
  if (f.described) {
    into->described = true;
    into->detected_by_suffix |= f.detected_by_suffix;
    into->detected_by_header |= f.detected_by_header;
    if (rank >= into->described_rank) {
      into->compression = f.compression;
      into->described_rank = rank;
    }
    if (!f.note.empty() && rank >= into->note_rank) {
      into->note = f.note;
      into->note_rank = rank;
    }
  }
  if (f.records > 0) {
    into->min_record = into->records == 0 ? f.min_record : std::min(into->min_record, f.min_record);
    into->max_record = std::max(into->max_record, f.max_record);
  }
  into->records += f.records;
  AddTo(&into->record_bytes, f.record_bytes);
  for (const auto& [k, n] : f.size_log2) into->size_log2[k] += n;
  into->reads_completing_records += f.reads_completing_records;
  into->spanned_records += f.spanned_records;
  into->index_unknown_records += f.index_unknown_records;
  into->sequential_steps += f.sequential_steps;
  into->restarts += f.restarts;
  into->jumps += f.jumps;
  // A process's own figures count as one; figures merged before carry theirs.
  into->processes += std::max<uint64_t>(f.processes, 1);
}

}  // namespace

std::string TfRecordFileAccumulator::Order() const {
  uint64_t steps = sequential_steps + restarts + jumps;
  if (steps == 0) return "";
  if (jumps == 0) return "in order";
  return jumps * 2 > steps ? "shuffled" : "mixed";
}

void TfRecordAccumulator::OnRecord(const Event& e) {
  if (e.op != OP_TFRECORD_RECORD) return;
  Current& c = current_[e.file];
  TfRecordFileAccumulator& f = c.file;
  f.min_record = f.records == 0 ? e.requested : std::min(f.min_record, e.requested);
  f.max_record = std::max(f.max_record, e.requested);
  ++f.records;
  AddTo(&f.record_bytes, e.requested);
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

void TfRecordAccumulator::OnPacket(const ProcessTrace& process, const Packet& packet) {
  if (!packet.has_tfrecord_file()) return;
  const TfRecordFile& t = packet.tfrecord_file();
  TfRecordFileAccumulator& f = current_[t.file()].file;
  f.described = true;
  f.compression = CompressionName(t.compression());
  f.detected_by_suffix = t.detected_by_suffix();
  f.detected_by_header = t.detected_by_header();
  f.note = t.note();
}

void TfRecordAccumulator::OnFileEnd(const ProcessTrace& process) {
  for (auto& [id, c] : current_) {
    std::string path(process.Text(id));
    TfRecordFileAccumulator& into = files_[path];
    into.path = path;
    Merge(&into, c.file, 0);
  }
  current_.clear();
}

void TfRecordAccumulator::Absorb(TfRecordAccumulator&& other, int rank) {
  for (auto& [path, f] : other.files_) {
    TfRecordFileAccumulator& into = files_[path];
    into.path = path;
    Merge(&into, f, rank);
  }
  other.files_.clear();
}

std::vector<TfRecordFileAccumulator> TfRecordAccumulator::Files() const {
  std::vector<TfRecordFileAccumulator> out;
  for (const auto& [path, f] : files_) out.push_back(f);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.records > b.records; });
  return out;
}

}  // namespace iotap::analyzer
