#include "analyzer/accumulate/file_accumulator.h"

#include <algorithm>

#include "analyzer/base/numbers.h"

namespace iotap::analyzer {

const char* FileKindName(InternedString::Kind kind) {
  switch (kind) {
    case InternedString::KIND_PATH: return "file";
    case InternedString::KIND_DEVICE: return "device";
    case InternedString::KIND_PIPE: return "pipe";
    case InternedString::KIND_SOCKET: return "socket";
    case InternedString::KIND_ANON: return "anonymous";
    default: return "unknown";
  }
}

void FileCounts::Merge(const FileCounts& o) {
  opens += o.opens;
  posix_reads += o.posix_reads;
  stdio_reads += o.stdio_reads;
  gds_reads += o.gds_reads;
  AddTo(&read_bytes, o.read_bytes);
  posix_writes += o.posix_writes;
  stdio_writes += o.stdio_writes;
  gds_writes += o.gds_writes;
  AddTo(&write_bytes, o.write_bytes);
  metadata_ops += o.metadata_ops;
  mmaps += o.mmaps;
  AddTo(&mmap_bytes, o.mmap_bytes);
  errors += o.errors;
  AddTo(&read_ns, o.read_ns);
  AddTo(&write_ns, o.write_ns);
  AddTo(&metadata_ns, o.metadata_ns);
}

void FileDetail::Merge(const FileDetail& o) {
  size_bytes = std::max(size_bytes, o.size_bytes);
  direct_opens += o.direct_opens;
  dontneed_advice += o.dontneed_advice;
  hdf5_reads += o.hdf5_reads;
  read_sizes.Merge(o.read_sizes);
  write_sizes.Merge(o.write_sizes);
  read_pattern.Merge(o.read_pattern);
  read_ranges.Merge(o.read_ranges);
}

}  // namespace iotap::analyzer
