#include "analyzer/output/export/dump.h"

#include <cstring>
#include <ctime>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

std::string Utc(uint64_t realtime_ns) {
  time_t secs = static_cast<time_t>(realtime_ns / 1000000000ull);
  struct tm tm;
  gmtime_r(&secs, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%09dZ", tm.tm_year + 1900,
                         tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                         realtime_ns % 1000000000ull);
}

std::string ErrorName(uint32_t error) {
  if (error == 0) return "-";
  const char* name = strerrorname_np(static_cast<int>(error));
  return name != nullptr ? name : absl::StrCat("errno", error);
}

// "pinned", "pageable" or "" from a CUDA event's flags.
std::string HostMemoryWord(uint32_t flags) {
  if (flags & FLAG_CUDA_PINNED) return "pinned";
  if (flags & FLAG_CUDA_PAGEABLE) return "pageable";
  return "";
}

// What a CUDA copy was: " [pinned, async, stream 0x1006, driver API]".
std::string CudaCopyDetails(const Event& e) {
  std::vector<std::string> words;
  std::string host = HostMemoryWord(e.flags);
  if (!host.empty()) words.push_back(host);
  words.push_back((e.flags & FLAG_CUDA_ASYNC) ? "async" : "sync");
  words.push_back(absl::StrFormat("stream 0x%x", e.aux));
  if (e.flags & FLAG_CUDA_DRIVER_API) words.push_back("driver API");
  if (e.flags & FLAG_CUDA_ELEMENTS) words.push_back("requested counts array elements");
  return absl::StrCat(" [", absl::StrJoin(words, ", "), "]");
}

// CUpti_ActivityMemcpyKind of a device-side copy.
const char* DeviceCopyKind(int64_t kind) {
  constexpr const char* kNames[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                    "AtoD",    "DtoA", "DtoD", "HtoH", "peer"};
  return kind >= 0 && kind <= 10 ? kNames[kind] : "unknown";
}

// Op-specific details worth a word at the end of the line.
std::string Details(const ProcessTrace& p, const Event& e) {
  std::string d;
  switch (e.op) {
    case OP_CUDA_MEMCPY_HTOD:
    case OP_CUDA_MEMCPY_DTOH:
    case OP_CUDA_MEMCPY_DTOD:
    case OP_CUDA_MEMCPY_HTOH:
    case OP_CUDA_MEMCPY_PEER:
    case OP_CUDA_MEMCPY_DEFAULT:
      d = CudaCopyDetails(e);
      break;
    case OP_CUDA_HOST_ALLOC:
    case OP_CUDA_HOST_REGISTER:
      absl::StrAppendFormat(&d, " [flags 0x%x%s]", e.aux,
                            (e.flags & FLAG_CUDA_DRIVER_API) ? ", driver API" : "");
      break;
    case OP_CUDA_HOST_FREE:
    case OP_CUDA_HOST_UNREGISTER:
      if (e.flags & FLAG_CUDA_DRIVER_API) d = " [driver API]";
      break;
    case OP_CUPTI_MEMCPY: {
      std::string host = HostMemoryWord(e.flags);
      absl::StrAppend(&d, " [on the device, ", DeviceCopyKind(e.result),
                      host.empty() ? "" : ", ", host, ", stream ", e.aux, "]");
      break;
    }
    case OP_CUPTI_KERNEL:
      absl::StrAppend(&d, " [on the device, stream ", e.aux, "]");
      break;
    case OP_CUFILE_READ:
    case OP_CUFILE_WRITE:
      if (e.flags & FLAG_CUFILE_BATCH) {
        absl::StrAppendFormat(&d, " [batch 0x%x]", e.aux);
      } else if (e.flags & FLAG_CUDA_ASYNC) {
        absl::StrAppendFormat(&d, " [async, stream 0x%x]", e.aux);
      }
      break;
    case OP_CUFILE_HANDLE_REGISTER:
      absl::StrAppend(&d, " [fd ", static_cast<int64_t>(e.aux), "]");
      break;
    case OP_RENAME:
      absl::StrAppend(&d, " -> ", DisplayName(p.Text(static_cast<uint32_t>(e.aux))));
      break;
    case OP_COPY_FILE_RANGE_IN:
    case OP_SENDFILE_IN:
      absl::StrAppend(&d, " to ", DisplayName(p.Text(static_cast<uint32_t>(e.aux))));
      break;
    case OP_COPY_FILE_RANGE_OUT:
    case OP_SENDFILE_OUT:
      absl::StrAppend(&d, " from ", DisplayName(p.Text(static_cast<uint32_t>(e.aux))));
      break;
    case OP_OPEN:
    case OP_OPENAT:
    case OP_CREAT:
    case OP_MKSTEMP:
    case OP_FOPEN:
    case OP_FREOPEN:
      absl::StrAppendFormat(&d, " [flags 0%o]", e.aux);
      break;
    case OP_STAT:
    case OP_LSTAT:
    case OP_FSTAT:
    case OP_FSTATAT:
    case OP_STATX:
      if (!e.Failed()) absl::StrAppend(&d, " [size ", e.aux, "]");
      break;
    case OP_DUP:
      absl::StrAppend(&d, " [from fd ", e.aux, "]");
      break;
    case OP_LSEEK:
    case OP_FSEEK:
      absl::StrAppend(&d, " [whence ", e.aux, "]");
      break;
    case OP_STEP_BEGIN:
    case OP_STEP_END:
    case OP_DATA_WAIT:
    case OP_OPTIMIZER_STEP:
      absl::StrAppend(&d, " [step ", static_cast<int64_t>(e.aux), "]");
      break;
    case OP_MAPPED_READ:
      // A fault: the offset it touched, and how its span is known.
      absl::StrAppend(&d, " [fault at ", e.aux, (e.flags & FLAG_MAJOR_FAULT) ? ", major" : "",
                      (e.flags & FLAG_INCOMPLETE) ? ", span estimated" : "", "]");
      break;
    case OP_TFRECORD_RECORD:
      // A record, the reads that delivered it and the one that completed it.
      absl::StrAppend(&d, " [record ",
                      (e.flags & FLAG_TFRECORD_INDEX_UNKNOWN) ? "?" : absl::StrCat(e.aux),
                      ", data ", e.requested, " B, ", e.result, e.result == 1 ? " read" : " reads",
                      ", completed by read ", e.parent >> 40, ":", e.parent & ((1ull << 40) - 1),
                      "]");
      return d;
    default:
      if (LayerOf(e.op) == Layer::kHdf5) {
        absl::StrAppend(&d, " [call ", e.aux, "]");
      } else if (e.aux != 0) {
        absl::StrAppend(&d, " [aux ", e.aux, "]");
      }
      break;
  }
  if (e.parent != 0) absl::StrAppend(&d, " [in call ", e.parent, "]");
  return d;
}

std::string Dims(const google::protobuf::RepeatedField<uint64_t>& dims) {
  return dims.empty() ? "scalar" : absl::StrJoin(dims, "x");
}

}  // namespace

void DumpWriter::OnProcess(const ProcessTrace& process) {
  const ProcessHeader& h = process.header();
  origin_ns_ = static_cast<int64_t>(h.start_monotonic_ns());
  std::vector<std::string> argv;
  for (const std::string& a : h.argv()) argv.push_back(DisplayName(a));
  absl::FPrintF(out_, "# trace: %s\n", DisplayName(process.path()));
  absl::FPrintF(out_, "# process: pid %d, parent %d, host %s, rank %d, %s\n", h.pid(), h.ppid(),
                DisplayName(h.hostname()), h.rank(),
                h.origin() == ProcessHeader::ORIGIN_FORK ? "forked" : "started by exec");
  absl::FPrintF(out_, "# executable: %s\n", DisplayName(h.executable()));
  absl::FPrintF(out_, "# argv: %s\n", absl::StrJoin(argv, " "));
  absl::FPrintF(out_, "# start: %s (CLOCK_MONOTONIC %.9f s)\n", Utc(h.start_realtime_ns()),
                Seconds(h.start_monotonic_ns()));
  absl::FPrintF(out_, "# %11s %9s %6s %6s %-8s %-12s %12s %11s %11s %-7s %s\n", "time_s",
                "dur_us", "pid", "tid", "layer", "op", "offset", "requested", "result", "error",
                "file");
}

void DumpWriter::OnEvents(const ProcessTrace& process, const EventBatch& batch) {
  if (batch.dropped_before > 0) {
    absl::FPrintF(out_, "# thread %d lost %d events here\n", batch.tid, batch.dropped_before);
  }
  for (const Event& e : batch.events) {
    std::string offset = "-";
    if (e.HasOffset()) {
      // Pinned memory events carry a host address, not a file offset.
      bool address = e.op >= OP_CUDA_HOST_ALLOC && e.op <= OP_CUDA_HOST_UNREGISTER;
      offset = address ? absl::StrFormat("0x%x", e.offset) : absl::StrCat(e.offset);
    }
    absl::FPrintF(out_, "  %11.6f %9.3f %6d %6d %-8s %-12s %12s %11d %11d %-7s %s%s\n",
                  Seconds(e.start_ns - origin_ns_), e.duration_ns() / 1e3, process.pid(), e.tid,
                  LayerName(LayerOf(e.op)), OpName(e.op), offset, e.requested, e.result,
                  ErrorName(e.error), DisplayName(process.Text(e.file)), Details(process, e));
  }
}

void DumpWriter::OnPacket(const ProcessTrace& process, const Packet& packet) {
  if (packet.has_hdf5_dataset()) {
    const Hdf5Dataset& h = packet.hdf5_dataset();
    std::vector<std::string> filters;
    for (const auto& f : h.filter()) filters.push_back(absl::StrCat(DisplayName(f.name()), "(", f.id(), ")"));
    absl::FPrintF(out_, "# dataset %s: %s, %d B elements, dims %s, layout %s%s%s%s\n",
                  DisplayName(process.Text(h.id())), DisplayName(h.type_class()),
                  h.element_size(), Dims(h.dims()),
                  absl::AsciiStrToLower(
                      Hdf5Dataset::Layout_Name(h.layout()).substr(std::strlen("LAYOUT_"))),
                  h.chunk_dims().empty() ? "" : absl::StrCat(", chunks ", Dims(h.chunk_dims())),
                  filters.empty() ? "" : ", filters ", absl::StrJoin(filters, " "));
  }
  if (packet.has_tfrecord_file()) {
    const TfRecordFile& t = packet.tfrecord_file();
    absl::FPrintF(out_, "# tfrecord %s: %s%s%s%s\n", DisplayName(process.Text(t.file())),
                  absl::AsciiStrToLower(TfRecordFile::Compression_Name(t.compression())
                                            .substr(std::strlen("COMPRESSION_"))),
                  t.detected_by_suffix() ? ", named as TFRecord" : "",
                  t.detected_by_header() ? ", valid record header" : "",
                  t.note().empty() ? "" : absl::StrCat(": ", DisplayName(t.note())));
  }
  if (packet.has_exec()) {
    absl::FPrintF(out_, "# %s %s\n", packet.exec().spawn() ? "spawn" : "exec",
                  DisplayName(packet.exec().path()));
  }
}

void DumpWriter::OnFileEnd(const ProcessTrace& process) {
  if (!process.end().has_value()) {
    absl::FPrintF(out_, "# end: no end record (the process was killed or is still running)\n\n");
    return;
  }
  const EndOfTrace& end = *process.end();
  absl::FPrintF(out_, "# end: %s%s, %d events recorded, %d dropped\n\n",
                EndOfTrace::Reason_Name(end.reason()),
                end.exit_code_known() ? absl::StrCat(", code ", end.exit_code()) : "",
                process.events(), process.dropped());
}

}  // namespace iotap::analyzer
