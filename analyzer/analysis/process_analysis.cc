#include "analyzer/analysis/process_analysis.h"

#include <algorithm>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

namespace {

// Intervals of one process overlap only across threads, and a thread's
// calls reach the file within one flush interval of ending; a call blocked
// longer than this is clipped (IntervalUnion).
constexpr int64_t kUnionHorizonNs = 30'000'000'000;
// The series start fine and coarsen as the run gets longer.
constexpr int64_t kInitialBinNs = 1'000'000;

std::string CudaDirection(Op op) {
  switch (op) {
    case OP_CUDA_MEMCPY_HTOD: return "HtoD";
    case OP_CUDA_MEMCPY_DTOH: return "DtoH";
    case OP_CUDA_MEMCPY_DTOD: return "DtoD";
    case OP_CUDA_MEMCPY_HTOH: return "HtoH";
    case OP_CUDA_MEMCPY_PEER: return "peer";
    default: return "default";
  }
}

}  // namespace

void FileAccumulator::Merge(const FileAccumulator& o) {
  if (kind == nullptr) kind = o.kind;
  if (category == nullptr) category = o.category;
  processes += o.processes;
  opens += o.opens;
  reads += o.reads;
  read_bytes += o.read_bytes;
  writes += o.writes;
  write_bytes += o.write_bytes;
  metadata_ops += o.metadata_ops;
  metadata_ns += o.metadata_ns;
  read_ns += o.read_ns;
  write_ns += o.write_ns;
  size_bytes = std::max(size_bytes, o.size_bytes);
  direct_opens += o.direct_opens;
  dontneed_advice += o.dontneed_advice;
  hdf5_reads += o.hdf5_reads;
  read_sizes.Merge(o.read_sizes);
  write_sizes.Merge(o.write_sizes);
  read_pattern.Merge(o.read_pattern);
  read_ranges.Merge(o.read_ranges);
}

void LayerAccumulator::Merge(const LayerAccumulator& o) {
  ops += o.ops;
  reads += o.reads;
  read_bytes += o.read_bytes;
  writes += o.writes;
  write_bytes += o.write_bytes;
  metadata_ops += o.metadata_ops;
  time_ns += o.time_ns;
  read_sizes.Merge(o.read_sizes);
  read_pattern.Merge(o.read_pattern);
}

void DatasetAccumulator::Merge(const DatasetAccumulator& o) {
  if (!described && o.described) {
    description = o.description;
    described = true;
  }
  reads += o.reads;
  logical_bytes += o.logical_bytes;
  posix_reads += o.posix_reads;
  posix_bytes += o.posix_bytes;
  read_ns += o.read_ns;
}

ProcessAnalyzer::ProcessAnalyzer(int64_t origin_unix_ns, int64_t resolution_ns, PathTable* paths,
                                 bool may_train)
    : origin_unix_ns_(origin_unix_ns),
      resolution_ns_(resolution_ns),
      own_paths_(paths == nullptr ? std::make_unique<PathTable>() : nullptr),
      paths_(paths == nullptr ? own_paths_.get() : paths),
      waits_(may_train, origin_unix_ns, resolution_ns) {}

void ProcessAnalyzer::OnProcess(const ProcessTrace& process) {
  markers_.OnProcess(process);
  waits_.OnProcess(process);
  result_.tfrecords.OnProcess(process);
  result_.io = std::make_unique<TimeSpans>(origin_unix_ns_, resolution_ns_);
  result_.writes = std::make_unique<TimeSpans>(origin_unix_ns_, resolution_ns_);
  for (int i = 0; i < kLayerCount; ++i) {
    result_.read_bytes_by_layer.emplace_back(origin_unix_ns_, kInitialBinNs);
  }
  result_.data_read_bytes = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.data_read_calls = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.data_read_ns = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.cpu_ns = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.run_queue_ns = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  TimeSpans* io = result_.io.get();
  io_union_ = std::make_unique<IntervalUnion>(
      kUnionHorizonNs, [io](int64_t start, int64_t end) { io->Add(start, end); });
}

ProcessAnalyzer::FileSlot& ProcessAnalyzer::NewSlot(const ProcessTrace& process, uint32_t id) {
  if (id >= slots_.size()) slots_.resize(id + 1);
  FileSlot& slot = slots_[id];
  slot.known = true;
  const InternedName& name = process.Name(id);
  if (name.kind == InternedString::KIND_PIPE || name.kind == InternedString::KIND_SOCKET) {
    slot.channel = waits_.Channel(name.value);
  }
  if (name.kind != InternedString::KIND_PATH && name.kind != InternedString::KIND_DEVICE) {
    return slot;  // pipes, sockets, datasets and marks are not files
  }
  PathTable::Entry path = paths_->Intern(name.value);
  auto [it, inserted] =
      file_of_path_.try_emplace(path.id, static_cast<uint32_t>(result_.files.size()));
  if (inserted) {
    FileAccumulator& f = result_.files.emplace_back();
    f.kind = name.kind == InternedString::KIND_DEVICE ? "device" : "file";
    f.category = path.category;
    f.processes = 1;
    result_.file_ids.push_back(path.id);
  }
  slot.file = it->second;
  slot.data = std::string_view(path.category) == "data";
  return slot;
}

void ProcessAnalyzer::OnIo(const ProcessTrace& process, const Event& e, const OpTraits& op,
                           int64_t start, int64_t end) {
  LayerAccumulator& layer = result_.layers[static_cast<int>(op.layer)];
  ++layer.ops;
  layer.time_ns += end - start;
  FileSlot& slot = Slot(process, e.file);
  Transfer t = op.transfer;
  uint64_t bytes = BytesMoved(e);
  if (t == Transfer::kRead) {
    ++layer.reads;
    layer.read_bytes += bytes;
    layer.read_sizes.Add(bytes);
    result_.read_bytes_by_layer[static_cast<int>(op.layer)].AddAt(end, bytes);
    ++result_.reads;
    result_.read_bytes += bytes;
  } else if (t == Transfer::kWrite) {
    ++layer.writes;
    layer.write_bytes += bytes;
    ++result_.write_calls;
    result_.write_bytes += bytes;
  } else if (op.metadata) {
    ++layer.metadata_ops;
    ++result_.metadata_ops;
  }
  if (e.parent != 0 && op.layer == Layer::kPosix && t == Transfer::kRead) {
    auto& child = hdf5_children_[e.parent];
    ++child.first;
    child.second += bytes;
  }
  if (slot.channel != WaitCollector::kNoChannel) {
    waits_.OnChannel(e, start, end, slot.channel, t == Transfer::kWrite);
  }
  if (slot.file == kNoFile) return;
  FileAccumulator* f = &result_.files[slot.file];
  if (op.open) {
    ++f->opens;
    if ((e.flags & FLAG_O_DIRECT) && !e.Failed()) ++f->direct_opens;
  }
  if (e.op == OP_FADVISE && e.aux == 4 /* POSIX_FADV_DONTNEED */) ++f->dontneed_advice;
  if (t == Transfer::kRead) {
    ++f->reads;
    f->read_bytes += bytes;
    f->read_ns += end - start;
    f->read_sizes.Add(bytes);
    if (e.parent != 0) ++f->hdf5_reads;
    if (e.HasOffset() && bytes > 0) {
      if (!slot.has_reader) {
        slot.has_reader = true;
        slot.reader_tid = e.tid;
      }
      AccessPatternTracker* tracker = &slot.reader;
      if (e.tid != slot.reader_tid) {
        if (slot.tracker == nullptr || slot.tracker_tid != e.tid) {
          slot.tracker = &patterns_[PatternKey{e.file, e.tid}];
          slot.tracker_tid = e.tid;
        }
        tracker = slot.tracker;
      }
      AccessKind kind = tracker->Add(e.offset, bytes);
      f->read_pattern.Count(kind);
      layer.read_pattern.Count(kind);
      f->read_ranges.Add(e.offset, bytes);
    }
    if (slot.data) {
      result_.data_read_sizes.Add(bytes);
      result_.data_read_bytes->AddAt(end, bytes);
      result_.data_read_calls->AddAt(end, 1);
      result_.data_read_ns->AddAt(end, static_cast<double>(end - start));
    }
  } else if (t == Transfer::kWrite) {
    ++f->writes;
    f->write_bytes += bytes;
    f->write_ns += end - start;
    f->write_sizes.Add(bytes);
    if (slot.data) result_.writes->Add(start, end);
  } else if (op.metadata) {
    ++f->metadata_ops;
    f->metadata_ns += end - start;
    // Flushing to the device is part of writing (a checkpoint's fsync).
    if (slot.data && (e.op == OP_FSYNC || e.op == OP_FDATASYNC)) result_.writes->Add(start, end);
    bool stat = e.op == OP_STAT || e.op == OP_LSTAT || e.op == OP_FSTAT || e.op == OP_FSTATAT ||
                e.op == OP_STATX;
    if (stat && !e.Failed()) f->size_bytes = std::max(f->size_bytes, static_cast<int64_t>(e.aux));
  }
  if (slot.data && e.op != OP_MMAP && e.op != OP_MUNMAP) {
    io_union_->Add(start, end);
    if (t != Transfer::kWrite && e.op != OP_FSYNC && e.op != OP_FDATASYNC) {
      waits_.OnDataFile(e, start, end);
    }
  }
}

void ProcessAnalyzer::OnWait(const ProcessTrace& process, const Event& e, int64_t start,
                             int64_t end) {
  uint32_t channel = e.file != 0 ? Slot(process, e.file).channel : WaitCollector::kNoChannel;
  waits_.OnWait(e, start, end, channel);
}

void ProcessAnalyzer::OnHdf5(const ProcessTrace& process, const Event& e, int64_t start,
                             int64_t end) {
  LayerAccumulator& layer = result_.layers[static_cast<int>(Layer::kHdf5)];
  ++layer.ops;
  layer.time_ns += end - start;
  if (e.op != OP_H5D_READ && e.op != OP_H5D_READ_CHUNK) return;
  // Time inside H5Dread is time spent fetching data, whatever the library
  // does between its POSIX reads (chunk lookups, decompression).
  io_union_->Add(start, end);
  waits_.OnDataFile(e, start, end);
  const InternedName& name = process.Name(e.file);
  DatasetAccumulator& d = result_.datasets[name.value];
  if (d.name.empty()) {
    size_t colon = name.value.rfind(':');
    d.file = colon == std::string::npos ? "" : name.value.substr(0, colon);
    d.name = colon == std::string::npos ? name.value : name.value.substr(colon + 1);
  }
  ++d.reads;
  d.logical_bytes += e.requested;
  d.read_ns += end - start;
  ++layer.reads;
  layer.read_bytes += e.requested;
  layer.read_sizes.Add(e.requested);
  result_.read_bytes_by_layer[static_cast<int>(Layer::kHdf5)].AddAt(end, e.requested);
  auto child = hdf5_children_.find(e.aux);
  if (child != hdf5_children_.end()) {
    d.posix_reads += child->second.first;
    d.posix_bytes += child->second.second;
    hdf5_children_.erase(child);
  }
}

CudaKey CudaKeyOf(Op op, uint32_t flags) {
  std::string host = (flags & FLAG_CUDA_PINNED)     ? "pinned"
                     : (flags & FLAG_CUDA_PAGEABLE) ? "pageable"
                                                    : "device";
  return CudaKey{CudaDirection(op), host, (flags & FLAG_CUDA_ASYNC) != 0};
}

void ProcessAnalyzer::OnCuda(const Event& e, int64_t start, int64_t end) {
  if (e.op < OP_CUDA_MEMCPY_HTOD || e.op > OP_CUDA_MEMCPY_DEFAULT) return;
  CudaAccumulator& c = result_.cuda[CudaKeyOf(e.op, e.flags)];
  ++c.copies;
  c.bytes += e.requested;
  c.time_ns += end - start;
  result_.cuda_copies.push_back(TimedEvent{e.op, start, end, e.aux, e.requested, e.flags});
  LayerAccumulator& layer = result_.layers[static_cast<int>(Layer::kCuda)];
  ++layer.ops;
  layer.time_ns += end - start;
  result_.read_bytes_by_layer[static_cast<int>(Layer::kCuda)].AddAt(end, e.requested);
}

void ProcessAnalyzer::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  if (batch.events.empty()) return;
  markers_.OnEvents(process, batch);
  // One wall-clock offset per chunk: clocks do not drift measurably within one.
  int64_t offset = process.ToRealtimeNs(batch.events.front().start_ns) -
                   batch.events.front().start_ns;
  result_.events += batch.size();
  for (const Event& e : batch.events) {
    int64_t start = e.start_ns + offset;
    int64_t end = e.end_ns + offset;
    result_.first_unix_ns = std::min(result_.first_unix_ns, start);
    result_.last_unix_ns = std::max(result_.last_unix_ns, end);
    const OpTraits& op = TraitsOf(e.op);
    switch (op.layer) {
      case Layer::kPosix:
      case Layer::kStdio:
      case Layer::kGds:
        OnIo(process, e, op, start, end);
        break;
      case Layer::kHdf5:
        OnHdf5(process, e, start, end);
        break;
      case Layer::kCuda:
        OnCuda(e, start, end);
        break;
      case Layer::kMarker:
        break;  // the marker collector has them
      case Layer::kWait:
        OnWait(process, e, start, end);
        break;
      case Layer::kTfRecord:
        result_.tfrecords.OnRecord(e);
        ++result_.layers[static_cast<int>(op.layer)].ops;
        break;
      case Layer::kOther:
        ++result_.layers[static_cast<int>(op.layer)].ops;
        break;
    }
  }
}

void ProcessAnalyzer::OnResources(const ResourceSample& sample, const ProcessTrace& process) {
  int64_t at = process.ToRealtimeNs(static_cast<int64_t>(sample.monotonic_ns()));
  int64_t cpu = static_cast<int64_t>(sample.user_cpu_ns() + sample.system_cpu_ns());
  int64_t run_queue = static_cast<int64_t>(sample.run_queue_ns());
  if (last_cpu_ns_ >= 0 && cpu >= last_cpu_ns_ && at > last_cpu_at_) {
    result_.cpu_ns->AddOver(last_cpu_at_, at, static_cast<double>(cpu - last_cpu_ns_));
    if (run_queue >= last_run_queue_ns_) {
      result_.run_queue_ns->AddOver(last_cpu_at_, at,
                                    static_cast<double>(run_queue - last_run_queue_ns_));
    }
  }
  last_cpu_ns_ = cpu;
  last_run_queue_ns_ = run_queue;
  last_cpu_at_ = at;
  result_.summary.set_cpu_user_s(Seconds(sample.user_cpu_ns()));
  result_.summary.set_cpu_system_s(Seconds(sample.system_cpu_ns()));
}

void ProcessAnalyzer::OnPacket(const ProcessTrace& process, const Packet& packet) {
  if (packet.has_resources()) {
    OnResources(packet.resources(), process);
  } else if (packet.has_hdf5_dataset()) {
    const Hdf5Dataset& h = packet.hdf5_dataset();
    DatasetAccumulator& d = result_.datasets[std::string(process.Text(h.id()))];
    d.description = h;
    d.described = true;
  } else if (packet.has_tfrecord_file()) {
    result_.tfrecords.OnPacket(process, packet);
  }
}

void ProcessAnalyzer::OnFileEnd(const ProcessTrace& process) {
  markers_.OnFileEnd(process);
  result_.tfrecords.OnFileEnd(process);
  result_.steps = markers_.TakeLogs();
  result_.waits = waits_.Finish();
  io_union_->Finish();
  result_.io_busy_ns = io_union_->total_ns();
  result_.late_clipped_ns = io_union_->late_clipped_ns();
  result_.dropped = process.dropped();
  report::Process& s = result_.summary;
  s.set_events(static_cast<double>(result_.events));
  s.set_dropped_events(static_cast<double>(process.dropped()));
  s.set_io_busy_s(Seconds(result_.io_busy_ns));
  s.set_reads(static_cast<double>(result_.reads));
  s.set_read_bytes(static_cast<double>(result_.read_bytes));
  s.set_writes(static_cast<double>(result_.write_calls));
  s.set_write_bytes(static_cast<double>(result_.write_bytes));
  s.set_metadata_ops(static_cast<double>(result_.metadata_ops));
  // Patterns and slots refer to ids of this file only.
  slots_.clear();
  patterns_.clear();
  file_of_path_.clear();
}

}  // namespace iotap::analyzer
