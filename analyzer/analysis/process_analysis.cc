#include "analyzer/analysis/process_analysis.h"

#include <algorithm>
#include <tuple>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

namespace {

// Intervals of one process overlap only across threads, and a thread's
// calls reach the file within one flush interval of ending; a call blocked
// longer than this is clipped (IntervalUnion).
constexpr int64_t kUnionHorizonNs = 30'000'000'000;
// The series start fine and coarsen as the run gets longer.

}  // namespace

std::string EndText(const ProcessTrace& p) {
  if (!p.end().has_value()) return "killed (no end record)";
  const EndOfTrace& end = *p.end();
  std::string code = end.exit_code_known() ? absl::StrCat(" ", end.exit_code()) : "";
  switch (end.reason()) {
    case EndOfTrace::REASON_EXIT: return absl::StrCat("exit", code);
    case EndOfTrace::REASON_UNDERSCORE_EXIT: return absl::StrCat("_exit", code);
    case EndOfTrace::REASON_EXEC: return "exec";
    case EndOfTrace::REASON_ABORT: return "abort";
    case EndOfTrace::REASON_UNLOADED: return "unloaded";
    default: return "unknown";
  }
}

void LayerAccumulator::Merge(const LayerAccumulator& o) {
  ops += o.ops;
  reads += o.reads;
  AddTo(&read_bytes, o.read_bytes);
  writes += o.writes;
  AddTo(&write_bytes, o.write_bytes);
  metadata_ops += o.metadata_ops;
  AddTo(&time_ns, o.time_ns);
  read_sizes.Merge(o.read_sizes);
  read_pattern.Merge(o.read_pattern);
}

ProcessAnalyzer::ProcessAnalyzer(AnalysisScope scope, PathTable* paths, int64_t origin_unix_ns,
                                 int64_t resolution_ns, bool may_train)
    : full_(scope == AnalysisScope::kFull),
      origin_unix_ns_(origin_unix_ns),
      cpu_origin_unix_ns_(origin_unix_ns),
      resolution_ns_(resolution_ns),
      own_paths_(paths == nullptr ? std::make_unique<PathTable>() : nullptr),
      paths_(paths == nullptr ? own_paths_.get() : paths),
      waits_(may_train, origin_unix_ns, resolution_ns) {}

void ProcessAnalyzer::OnProcess(const ProcessTrace& process) {
  if (!full_) return;
  markers_.OnProcess(process);
  waits_.OnProcess(process);
  result_.io = std::make_unique<TimeSpans>(origin_unix_ns_, resolution_ns_);
  result_.writes = std::make_unique<TimeSpans>(origin_unix_ns_, resolution_ns_);
  for (int i = 0; i < kLayerCount; ++i) {
    result_.read_bytes_by_layer.emplace_back(origin_unix_ns_, kInitialBinNs);
    result_.layer_busy.emplace_back(origin_unix_ns_, resolution_ns_);
  }
  result_.data_read_bytes = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.data_read_calls = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.data_read_ns = std::make_unique<AdaptiveSeries>(origin_unix_ns_, kInitialBinNs);
  result_.cpu_ns = std::make_unique<AdaptiveSeries>(cpu_origin_unix_ns_, kInitialBinNs);
  result_.run_queue_ns = std::make_unique<AdaptiveSeries>(cpu_origin_unix_ns_, kInitialBinNs);
  TimeSpans* io = result_.io.get();
  io_union_ = std::make_unique<IntervalUnion>(
      kUnionHorizonNs, [io](int64_t start, int64_t end) { io->Add(start, end); });
}

ProcessAnalyzer::FileSlot& ProcessAnalyzer::SlotSlow(const ProcessTrace& process, uint32_t id) {
  if (sparse_ids_) {
    auto [it, added] = sparse_slot_of_.try_emplace(id, 0);
    if (!added) return slots_[it->second - 1];
    it->second = static_cast<uint32_t>(slots_.size() + 1);
    return NewSlot(process, id);
  }
  if (id >= slot_of_.size()) slot_of_.resize(std::max<size_t>(id + 1, slot_of_.size() * 2));
  slot_of_[id] = static_cast<uint32_t>(slots_.size() + 1);
  return NewSlot(process, id);
}

const ProcessAnalyzer::FileSlot* ProcessAnalyzer::FindSlot(uint32_t id) const {
  uint32_t index = 0;
  if (id < slot_of_.size()) {
    index = slot_of_[id];
  } else if (auto it = sparse_slot_of_.find(id); it != sparse_slot_of_.end()) {
    index = it->second;
  }
  return index == 0 ? nullptr : &slots_[index - 1];
}

ProcessAnalyzer::FileSlot& ProcessAnalyzer::NewSlot(const ProcessTrace& process, uint32_t id) {
  FileSlot& slot = slots_.emplace_back();
  const InternedName& name = process.Name(id);
  switch (name.kind) {
    case InternedString::KIND_PATH:
    case InternedString::KIND_DEVICE: {
      PathTable::Entry path = paths_->Intern(name.value, /*categorize=*/full_);
      if (shared_files_ != nullptr) {
        std::tie(slot.counts, slot.detail) = shared_files_->Of(path.id);
        if (!full_) slot.detail = nullptr;
      } else {
        slot.counts = &result_.files.emplace_back();
        if (full_) slot.detail = &result_.file_details.emplace_back();
      }
      result_.file_refs.push_back(FileRef{path.id, name.kind, path.category});
      if (full_) {
        slot.data = std::string_view(path.category) == "data";
        slot.shared_memory = IsSharedMemory(name.value);
      }
      break;
    }
    case InternedString::KIND_DATASET:
    case InternedString::KIND_MARK:
    case InternedString::KIND_THREAD_NAME:
    case InternedString::KIND_CUDA_STREAM:
      break;  // not files; other layers count them
    default:
      // Pipes, sockets, anonymous descriptors, names the trace never
      // defined: one row per kind.
      slot.counts = &result_.ipc[name.kind];
      if (full_) slot.channel = ChannelOf(name);
      break;
  }
  return slot;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void ProcessAnalyzer::OnIo(const ProcessTrace& process, const Event& e,
                                  const OpTraits& op, int64_t offset) {
  FileSlot& slot = Slot(process, e.file);
  const Transfer t = op.transfer;
  const uint64_t bytes = BytesMoved(e, op);
  if (t == Transfer::kRead) {
    ++result_.reads;
    AddTo(&result_.read_bytes, bytes);
  } else if (t == Transfer::kWrite) {
    ++result_.write_calls;
    AddTo(&result_.write_bytes, bytes);
  } else if (op.metadata) {
    ++result_.metadata_ops;
  }
  // Inside an HDF5 call (GPUDirect Storage calls never are).
  if (e.parent != 0 && op.layer != Layer::kGds) hdf5_.OnBeneath(e, op, bytes);
  if (slot.counts != nullptr) slot.counts->Count(e, op, bytes);
  if (full_) OnIoDetail(e, op, offset, bytes, slot);
}

void ProcessAnalyzer::OnIoDetail(const Event& e, const OpTraits& op, int64_t offset,
                                 uint64_t bytes, FileSlot& slot) {
  const Transfer t = op.transfer;
  const int64_t start = e.start_ns + offset;
  const int64_t end = e.end_ns + offset;
  LayerAccumulator& layer = result_.layers[static_cast<int>(op.layer)];
  ++layer.ops;
  AddTo(&layer.time_ns, end - start);
  Busy(op.layer, start, end);
  if (t == Transfer::kRead) {
    ++layer.reads;
    AddTo(&layer.read_bytes, bytes);
    layer.read_sizes.Add(bytes);
    result_.read_bytes_by_layer[static_cast<int>(op.layer)].AddAt(end, bytes);
  } else if (t == Transfer::kWrite) {
    ++layer.writes;
    AddTo(&layer.write_bytes, bytes);
  } else if (op.metadata) {
    ++layer.metadata_ops;
  }
  if (slot.channel != WaitCollector::kNoChannel) {
    waits_.OnChannel(e, start, end, slot.channel, t == Transfer::kWrite);
  }
  if (slot.shared_memory) waits_.OnSharedMemory(e, start, end);
  FileDetail* f = slot.detail;
  if (f == nullptr) return;
  if (op.open && (e.flags & FLAG_O_DIRECT) && !e.Failed()) ++f->direct_opens;
  if (e.op == OP_FADVISE && e.aux == 4 /* POSIX_FADV_DONTNEED */) ++f->dontneed_advice;
  if (t == Transfer::kRead) {
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
    f->write_sizes.Add(bytes);
    if (slot.data) result_.writes->Add(start, end);
  } else if (op.metadata) {
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

uint32_t ProcessAnalyzer::ChannelOf(const InternedName& name) {
  if (name.kind != InternedString::KIND_PIPE && name.kind != InternedString::KIND_SOCKET) {
    return WaitCollector::kNoChannel;
  }
  return waits_.Channel(std::string(name.value));
}

void ProcessAnalyzer::OnWait(const ProcessTrace& process, const Event& e, int64_t offset) {
  // A descriptor's slot when its I/O made one; otherwise its name alone (a
  // slot would add an empty row to the counts of pipes and sockets).
  uint32_t channel = WaitCollector::kNoChannel;
  if (e.file != 0) {
    const FileSlot* slot = FindSlot(e.file);
    channel = slot != nullptr ? slot->channel : ChannelOf(process.Name(e.file));
  }
  waits_.OnWait(e, e.start_ns + offset, e.end_ns + offset, channel);
}

void ProcessAnalyzer::OnHdf5(const ProcessTrace& process, const Event& e, int64_t offset) {
  hdf5_.OnCall(process, e);
  if (!full_) return;
  const int64_t start = e.start_ns + offset;
  const int64_t end = e.end_ns + offset;
  LayerAccumulator& layer = result_.layers[static_cast<int>(Layer::kHdf5)];
  ++layer.ops;
  AddTo(&layer.time_ns, end - start);
  Busy(Layer::kHdf5, start, end);
  if (e.op != OP_H5D_READ && e.op != OP_H5D_READ_CHUNK) return;
  // Time inside H5Dread is time spent fetching data, whatever the library
  // does between its POSIX reads (chunk lookups, decompression).
  io_union_->Add(start, end);
  waits_.OnDataFile(e, start, end);
  ++layer.reads;
  AddTo(&layer.read_bytes, e.requested);
  layer.read_sizes.Add(e.requested);
  result_.read_bytes_by_layer[static_cast<int>(Layer::kHdf5)].AddAt(end, e.requested);
}

void ProcessAnalyzer::OnCuda(const Event& e, int64_t offset) {
  result_.cuda.Add(e);
  if (!full_ || e.op < OP_CUDA_MEMCPY_HTOD || e.op > OP_CUDA_MEMCPY_DEFAULT) return;
  const int64_t start = e.start_ns + offset;
  const int64_t end = e.end_ns + offset;
  result_.cuda_copies.push_back(TimedEvent{e.op, start, end, e.aux, e.requested, e.flags});
  LayerAccumulator& layer = result_.layers[static_cast<int>(Layer::kCuda)];
  ++layer.ops;
  AddTo(&layer.time_ns, end - start);
  Busy(Layer::kCuda, start, end);
  result_.read_bytes_by_layer[static_cast<int>(Layer::kCuda)].AddAt(end, e.requested);
}

void ProcessAnalyzer::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  if (batch.events.empty()) return;
  result_.events += batch.size();
  // One wall-clock offset per chunk: a host's own clock does not drift
  // measurably within one. Another host's clock put on the reference's
  // (clock_correction.h) does, so that correction is per event.
  int64_t offset = 0;
  if (full_) {
    markers_.OnEvents(process, batch);
    offset = process.OwnRealtimeNs(batch.events.front().start_ns) - batch.events.front().start_ns;
    for (const Event& e : batch.events) {
      result_.first_unix_ns =
          std::min(result_.first_unix_ns, process.OnReferenceClock(e.start_ns + offset));
      result_.last_unix_ns =
          std::max(result_.last_unix_ns, process.OnReferenceClock(e.end_ns + offset));
    }
  }
  for (const Event& e : batch.events) {
    const OpTraits& op = TraitsOf(e.op);
    const int64_t at = full_ ? process.OnReferenceClock(e.start_ns + offset) - e.start_ns : 0;
    switch (op.layer) {
      case Layer::kPosix:
      case Layer::kStdio:
      case Layer::kGds:
        OnIo(process, e, op, at);
        break;
      case Layer::kMapped:  // a major fault's time is a read's wait
      case Layer::kUring:
        result_.mapped.OnEvent(process, e);
        OnIo(process, e, op, at);
        break;
      case Layer::kHdf5:
        OnHdf5(process, e, at);
        break;
      case Layer::kCuda:
        OnCuda(e, at);
        break;
      case Layer::kMarker:
        // The marker collector has the rest (kFull only, as the samples).
        if (full_ && (e.op == OP_PY_SAMPLE || e.op == OP_PY_SAMPLER)) {
          py_.OnEvent(process, e, at);
        }
        break;
      case Layer::kWait:
        if (full_) OnWait(process, e, at);
        break;
      case Layer::kTfRecord:
        result_.tfrecords.OnRecord(e);
        if (full_) ++result_.layers[static_cast<int>(op.layer)].ops;
        break;
      case Layer::kOther:
        if (full_) ++result_.layers[static_cast<int>(op.layer)].ops;
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
  if (packet.has_hdf5_dataset()) {
    hdf5_.OnDescription(packet.hdf5_dataset());
  } else if (packet.has_tfrecord_file()) {
    result_.tfrecords.OnPacket(process, packet);
  } else if (packet.has_fault_sampling() || packet.has_fault_counters()) {
    result_.mapped.OnPacket(packet);
  } else if (packet.has_resources() && full_) {
    OnResources(packet.resources(), process);
  }
}

void ProcessAnalyzer::OnFileEnd(const ProcessTrace& process) {
  result_.header = process.header();
  result_.end = EndText(process);
  result_.dropped = process.dropped();
  result_.tfrecords.OnFileEnd(process);
  result_.mapped.OnFileEnd();
  result_.datasets = hdf5_.Finish(process);
  // Slots and patterns refer to ids of this file only.
  slots_.clear();
  slot_of_.clear();
  sparse_slot_of_.clear();
  patterns_.clear();
  if (!full_) return;
  markers_.OnFileEnd(process);
  result_.steps = markers_.TakeLogs();
  result_.py = py_.Take();
  if (process.end().has_value()) {
    result_.end_unix_ns = process.ToRealtimeNs(static_cast<int64_t>(process.end()->monotonic_ns()));
  }
  result_.waits = waits_.Finish();
  // The union hands every segment it holds on now: one allocation for them
  // rather than a growing vector's dozen (an analyzer of one second of a
  // file, sliced_run.h, ends every second).
  result_.io->Reserve(io_union_->pending_segments());
  io_union_->Finish();
  result_.io_busy_ns = io_union_->total_ns();
  result_.late_clipped_ns = io_union_->late_clipped_ns();
  report::Process& s = result_.summary;
  s.set_events(static_cast<double>(result_.events));
  s.set_dropped_events(static_cast<double>(result_.dropped));
  s.set_io_busy_s(Seconds(result_.io_busy_ns));
  s.set_reads(static_cast<double>(result_.reads));
  s.set_read_bytes(static_cast<double>(result_.read_bytes));
  s.set_writes(static_cast<double>(result_.write_calls));
  s.set_write_bytes(static_cast<double>(result_.write_bytes));
  s.set_metadata_ops(static_cast<double>(result_.metadata_ops));
  s.set_end(result_.end);
}

}  // namespace iotap::analyzer
