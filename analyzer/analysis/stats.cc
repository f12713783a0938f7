#include "analyzer/analysis/stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/json_writer.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

const char* KindName(int kind) {
  switch (kind) {
    case InternedString::KIND_PATH: return "file";
    case InternedString::KIND_DEVICE: return "device";
    case InternedString::KIND_PIPE: return "pipe";
    case InternedString::KIND_SOCKET: return "socket";
    case InternedString::KIND_ANON: return "anonymous";
    default: return "unknown";
  }
}

std::string EndDescription(const ProcessTrace& p) {
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

// Counts `e`, whose traits are `op` and which moved `bytes`, into `f`.
void Count(FileStats* f, const Event& e, const OpTraits& op, uint64_t bytes) {
  if (e.Failed()) ++f->errors;
  if (op.open) ++f->opens;
  switch (op.transfer) {
    case Transfer::kRead:
      ++f->reads;
      f->read_bytes += bytes;
      f->read_ns += e.duration_ns();
      if (op.layer == Layer::kStdio) {
        ++f->stdio_reads;
      } else if (op.layer == Layer::kGds) {
        ++f->gds_reads;
      } else {
        ++f->posix_reads;
      }
      break;
    case Transfer::kWrite:
      ++f->writes;
      f->write_bytes += bytes;
      f->write_ns += e.duration_ns();
      if (op.layer == Layer::kStdio) {
        ++f->stdio_writes;
      } else if (op.layer == Layer::kGds) {
        ++f->gds_writes;
      } else {
        ++f->posix_writes;
      }
      break;
    case Transfer::kNone:
      if (e.op == OP_MMAP) {
        ++f->mmaps;
        if (!e.Failed()) f->mmap_bytes += e.requested;
      }
      if (op.metadata) {
        ++f->metadata_ops;
        f->metadata_ns += e.duration_ns();
      }
      break;
  }
}

void WriteFile(JsonWriter& j, const FileStats& f, bool with_path) {
  j.BeginObject();
  if (with_path) {
    j.Key("path");
    j.String(f.path);
  }
  j.Key("kind");
  j.String(KindName(f.kind));
  j.Key("reads");
  j.Uint(f.reads);
  j.Key("read_bytes");
  j.Uint(f.read_bytes);
  j.Key("writes");
  j.Uint(f.writes);
  j.Key("write_bytes");
  j.Uint(f.write_bytes);
  j.Key("opens");
  j.Uint(f.opens);
  j.Key("posix_reads");
  j.Uint(f.posix_reads);
  j.Key("stdio_reads");
  j.Uint(f.stdio_reads);
  j.Key("posix_writes");
  j.Uint(f.posix_writes);
  j.Key("stdio_writes");
  j.Uint(f.stdio_writes);
  j.Key("gds_reads");
  j.Uint(f.gds_reads);
  j.Key("gds_writes");
  j.Uint(f.gds_writes);
  j.Key("metadata_ops");
  j.Uint(f.metadata_ops);
  j.Key("mmaps");
  j.Uint(f.mmaps);
  j.Key("mmap_bytes");
  j.Uint(f.mmap_bytes);
  j.Key("errors");
  j.Uint(f.errors);
  j.Key("read_seconds");
  j.Double(Seconds(f.read_ns));
  j.Key("write_seconds");
  j.Double(Seconds(f.write_ns));
  j.Key("metadata_seconds");
  j.Double(Seconds(f.metadata_ns));
  j.Key("processes");
  j.Uint(f.processes);
  j.EndObject();
}

}  // namespace

void StatsCollector::OnProcess(const ProcessTrace& process) {
  by_id_.clear();
  ++process_number_;
  current_ = ProcessStats();
  hdf5_.OnProcess(process);
  tfrecord_.OnProcess(process);
}

void StatsCollector::OnPacket(const ProcessTrace& process, const Packet& packet) {
  hdf5_.OnPacket(process, packet);
  tfrecord_.OnPacket(process, packet);
}

FileStats* StatsCollector::Slot(const ProcessTrace& process, uint32_t id) {
  if (id < by_id_.size() && by_id_[id] != nullptr) return &by_id_[id]->stats;
  const InternedName& name = process.Name(id);
  Entry* slot = nullptr;
  switch (name.kind) {
    case InternedString::KIND_PATH:
    case InternedString::KIND_DEVICE: {
      auto it = file_index_.find(name.value);
      if (it == file_index_.end()) {
        Entry& added = files_.emplace_back();
        added.stats.path = name.value;
        // Keyed by the entry's own copy of the path: this process's names
        // go when its file has been read.
        it = file_index_.emplace(added.stats.path, &added).first;
      }
      Entry& f = *it->second;
      f.stats.kind = name.kind;
      slot = &f;
      break;
    }
    case InternedString::KIND_DATASET:
    case InternedString::KIND_MARK:
    case InternedString::KIND_THREAD_NAME:
    case InternedString::KIND_CUDA_STREAM:
      return nullptr;  // not files; other layers report them
    default: {
      Entry& f = ipc_[name.kind];
      f.stats.kind = name.kind;
      slot = &f;
      break;
    }
  }
  if (id >= by_id_.size()) by_id_.resize(id + 1, nullptr);
  by_id_[id] = slot;
  if (slot->last_process != process_number_) {
    slot->last_process = process_number_;
    ++slot->stats.processes;
  }
  return &slot->stats;
}

void StatsCollector::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  // One pass over the batch for every layer's collector.
  for (const Event& e : batch.events) {
    const OpTraits& op = TraitsOf(e.op);
    switch (op.layer) {
      case Layer::kPosix:
      case Layer::kStdio:
        if (e.parent != 0) hdf5_.OnEvent(process, e, op);  // beneath an HDF5 call
        break;
      case Layer::kGds:
        break;
      case Layer::kHdf5:
        hdf5_.OnEvent(process, e, op);
        continue;
      case Layer::kTfRecord:
        tfrecord_.OnRecord(e);
        continue;
      case Layer::kCuda:
        cuda_.Add(e);
        continue;
      default:
        continue;
    }
    uint64_t bytes = BytesMoved(e);
    if (op.transfer == Transfer::kRead) {
      ++current_.reads;
      current_.read_bytes += bytes;
    } else if (op.transfer == Transfer::kWrite) {
      ++current_.writes;
      current_.write_bytes += bytes;
    }
    if (FileStats* f = Slot(process, e.file)) Count(f, e, op, bytes);
  }
}

void StatsCollector::OnFileEnd(const ProcessTrace& process) {
  hdf5_.OnFileEnd(process);
  tfrecord_.OnFileEnd(process);
  const ProcessHeader& h = process.header();
  current_.trace_file = process.path();
  current_.pid = h.pid();
  current_.ppid = h.ppid();
  current_.hostname = h.hostname();
  current_.executable = h.executable();
  current_.argv.assign(h.argv().begin(), h.argv().end());
  current_.rank = h.rank();
  current_.events = process.events();
  current_.dropped = process.dropped();
  current_.end = EndDescription(process);
  events_ += process.events();
  dropped_ += process.dropped();
  processes_.push_back(std::move(current_));
  current_ = ProcessStats();
}

StatsReport StatsCollector::Finish(std::vector<ReadIssue> issues) {
  StatsReport r;
  r.processes = processes_.size();
  r.events = events_;
  r.dropped_events = dropped_;
  r.files.reserve(files_.size());
  for (const Entry& f : files_) r.files.push_back(f.stats);
  // Most bytes first; equal ones by path.
  std::sort(r.files.begin(), r.files.end(), [](const FileStats& a, const FileStats& b) {
    uint64_t a_bytes = a.read_bytes + a.write_bytes;
    uint64_t b_bytes = b.read_bytes + b.write_bytes;
    return a_bytes != b_bytes ? a_bytes > b_bytes : a.path < b.path;
  });
  for (auto& [kind, f] : ipc_) r.ipc.push_back(f.stats);
  r.process_list = processes_;
  std::sort(r.process_list.begin(), r.process_list.end(),
            [](const ProcessStats& a, const ProcessStats& b) {
              return a.hostname != b.hostname ? a.hostname < b.hostname : a.pid < b.pid;
            });
  r.cuda = cuda_.Finish();
  r.datasets = hdf5_.Finish();
  r.tfrecord_files = tfrecord_.Finish();
  for (TfRecordFileStats& t : r.tfrecord_files) {
    if (auto it = file_index_.find(t.path); it != file_index_.end()) {
      t.reads = it->second->stats.reads;
      t.read_bytes = it->second->stats.read_bytes;
    }
  }
  r.issues = std::move(issues);
  return r;
}

std::string StatsToJson(const StatsReport& r) {
  JsonWriter j;
  j.BeginObject();
  j.Key("processes");
  j.Uint(r.processes);
  j.Key("events");
  j.Uint(r.events);
  j.Key("dropped_events");
  j.Uint(r.dropped_events);
  j.Key("files");
  j.BeginArray();
  for (const FileStats& f : r.files) WriteFile(j, f, true);
  j.EndArray();
  j.Key("ipc");
  j.BeginArray();
  for (const FileStats& f : r.ipc) WriteFile(j, f, false);
  j.EndArray();
  WriteCudaJson(j, r.cuda);
  j.Key("process_list");
  j.BeginArray();
  for (const ProcessStats& p : r.process_list) {
    j.BeginObject();
    j.Key("pid");
    j.Int(p.pid);
    j.Key("ppid");
    j.Int(p.ppid);
    j.Key("hostname");
    j.String(p.hostname);
    j.Key("executable");
    j.String(p.executable);
    j.Key("argv");
    j.BeginArray();
    for (const std::string& a : p.argv) j.String(a);
    j.EndArray();
    j.Key("rank");
    j.Int(p.rank);
    j.Key("events");
    j.Uint(p.events);
    j.Key("dropped_events");
    j.Uint(p.dropped);
    j.Key("reads");
    j.Uint(p.reads);
    j.Key("read_bytes");
    j.Uint(p.read_bytes);
    j.Key("writes");
    j.Uint(p.writes);
    j.Key("write_bytes");
    j.Uint(p.write_bytes);
    j.Key("end");
    j.String(p.end);
    j.Key("trace_file");
    j.String(p.trace_file);
    j.EndObject();
  }
  j.EndArray();
  j.Key("datasets");
  DatasetsToJson(r.datasets, j);
  j.Key("tfrecord_files");
  TfRecordFilesToJson(r.tfrecord_files, j);
  j.Key("issues");
  j.BeginArray();
  for (const ReadIssue& i : r.issues) {
    j.BeginObject();
    j.Key("file");
    j.String(i.path);
    j.Key("offset");
    j.Uint(i.offset);
    j.Key("bytes_skipped");
    j.Uint(i.bytes_skipped);
    j.Key("truncated");
    j.Bool(i.truncated);
    j.Key("message");
    j.String(i.message);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  std::string out = j.Take();
  out += '\n';
  return out;
}

std::string StatsToText(const StatsReport& r) {
  std::string out = absl::StrFormat(
      "%d processes, %d events recorded, %d dropped\n\n", r.processes, r.events,
      r.dropped_events);
  uint64_t read_bytes = 0, write_bytes = 0, reads = 0, writes = 0, opens = 0;
  for (const FileStats& f : r.files) {
    read_bytes += f.read_bytes;
    write_bytes += f.write_bytes;
    reads += f.reads;
    writes += f.writes;
    opens += f.opens;
  }
  absl::StrAppendFormat(&out,
                        "files: %d, opens %d, reads %d (%s), writes %d (%s)\n\n",
                        r.files.size(), opens, reads, HumanBytes(read_bytes), writes,
                        HumanBytes(write_bytes));
  absl::StrAppendFormat(&out, "%10s %12s %10s %12s %7s %9s  %s\n", "reads", "read", "writes",
                        "written", "opens", "metadata", "file");
  constexpr size_t kShown = 40;
  for (size_t i = 0; i < r.files.size() && i < kShown; ++i) {
    const FileStats& f = r.files[i];
    absl::StrAppendFormat(&out, "%10d %12s %10d %12s %7d %9d  %s\n", f.reads,
                          HumanBytes(f.read_bytes), f.writes, HumanBytes(f.write_bytes), f.opens,
                          f.metadata_ops, DisplayName(f.path));
  }
  if (r.files.size() > kShown) {
    absl::StrAppendFormat(&out, "... and %d more files (--json lists all)\n",
                          r.files.size() - kShown);
  }
  for (const FileStats& f : r.ipc) {
    absl::StrAppendFormat(&out, "%10d %12s %10d %12s %7s %9s  (%s)\n", f.reads,
                          HumanBytes(f.read_bytes), f.writes, HumanBytes(f.write_bytes), "", "",
                          KindName(f.kind));
  }
  std::string cuda = CudaToText(r.cuda);
  if (!cuda.empty()) absl::StrAppend(&out, "\n", cuda);
  if (!r.datasets.empty()) absl::StrAppend(&out, "\n", DatasetsToText(r.datasets));
  if (!r.tfrecord_files.empty()) {
    absl::StrAppend(&out, "\n", TfRecordFilesToText(r.tfrecord_files));
  }
  out += "\nprocesses:\n";
  for (const ProcessStats& p : r.process_list) {
    absl::StrAppendFormat(&out, "  %s pid %d (parent %d): %d events, %d reads (%s), %s  %s\n",
                          DisplayName(p.hostname), p.pid, p.ppid, p.events, p.reads,
                          HumanBytes(p.read_bytes), p.end,
                          DisplayName(absl::StrJoin(p.argv, " ")));
  }
  if (!r.issues.empty()) {
    out += "\nproblems reading the traces:\n";
    for (const ReadIssue& i : r.issues) absl::StrAppend(&out, "  ", DisplayName(i.ToString()), "\n");
  }
  return out;
}

}  // namespace iotap::analyzer
