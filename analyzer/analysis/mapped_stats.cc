#include "analyzer/analysis/mapped_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

void MappedCollector::OnProcess(const ProcessTrace&) {
  threads_.clear();
  source_ = FaultSampling::SOURCE_UNSPECIFIED;
  lost_ = 0;
}

void MappedCollector::OnPacket(const ProcessTrace&, const Packet& packet) {
  if (packet.has_fault_sampling()) {
    const FaultSampling& s = packet.fault_sampling();
    // The last one a process wrote says how its run ended up (a refusal
    // after sampling began turns it to counters).
    source_ = s.source();
    lost_ = std::max<uint64_t>(lost_, s.lost_faults());
    if (s.source() == FaultSampling::SOURCE_THREAD_COUNTERS && !s.note().empty() &&
        std::find(totals_.notes.begin(), totals_.notes.end(), s.note()) == totals_.notes.end()) {
      totals_.notes.push_back(s.note());
    }
  } else if (packet.has_fault_counters()) {
    for (const FaultCounters::ThreadCounters& t : packet.fault_counters().thread()) {
      auto [it, added] = threads_.try_emplace(t.tid(), FirstLast{t, t});
      if (!added) it->second.last = t;
    }
  }
}

void MappedCollector::OnEvent(const ProcessTrace& process, const Event& e) {
  if (e.op == OP_MAPPED_READ) {
    MappedFileStats& f = mapped_[std::string(process.Text(e.file))];
    ++f.faults;
    f.span_bytes += e.result > 0 ? static_cast<uint64_t>(e.result) : 0;
    f.touched_bytes += e.requested;
    if (e.flags & FLAG_INCOMPLETE) ++f.estimated_spans;
    if (e.flags & FLAG_MAJOR_FAULT) {
      ++f.major_faults;
      f.major_ns += e.duration_ns();
    }
    return;
  }
  if (e.op == OP_URING_ENTER) {
    if (e.flags & FLAG_INCOMPLETE) {
      totals_.uring_unseen_requests += e.requested;
    } else {
      ++totals_.uring_calls;
    }
    return;
  }
  bool read = e.op == OP_URING_READ, write = e.op == OP_URING_WRITE;
  if (!read && !write && e.op != OP_URING_OPENAT && e.op != OP_URING_CLOSE &&
      e.op != OP_URING_STATX) {
    return;
  }
  UringFileStats& f = uring_[std::string(process.Text(e.file))];
  uint64_t bytes = BytesMoved(e);
  if (e.Failed()) ++f.failed;
  if (e.flags & FLAG_INCOMPLETE) ++f.incomplete;
  if (read) {
    ++f.reads;
    f.read_bytes += bytes;
    f.read_ns += e.duration_ns();
  } else if (write) {
    ++f.writes;
    f.write_bytes += bytes;
  } else {
    ++f.other;
  }
}

void MappedCollector::OnFileEnd(const ProcessTrace&) {
  if (source_ == FaultSampling::SOURCE_PERF_SAMPLES) ++totals_.processes_sampled;
  if (source_ == FaultSampling::SOURCE_THREAD_COUNTERS) ++totals_.processes_counted;
  totals_.lost_faults += lost_;
  for (const auto& [tid, t] : threads_) {
    totals_.counted_minor_faults += t.last.minor_faults() - t.first.minor_faults();
    totals_.counted_major_faults += t.last.major_faults() - t.first.major_faults();
    totals_.counted_read_bytes += t.last.read_bytes() - t.first.read_bytes();
  }
  threads_.clear();
}

MappedReport MappedCollector::Finish() const {
  MappedReport r = totals_;
  for (const auto& [path, f] : mapped_) {
    r.mapped.push_back(f);
    r.mapped.back().path = path;
  }
  for (const auto& [path, f] : uring_) {
    r.uring.push_back(f);
    r.uring.back().path = path;
  }
  std::stable_sort(r.mapped.begin(), r.mapped.end(),
                   [](const auto& a, const auto& b) { return a.span_bytes > b.span_bytes; });
  std::stable_sort(r.uring.begin(), r.uring.end(), [](const auto& a, const auto& b) {
    return a.read_bytes + a.write_bytes > b.read_bytes + b.write_bytes;
  });
  return r;
}

void WriteMappedJson(JsonWriter& j, const MappedReport& r) {
  auto uint = [&](const char* key, uint64_t v) {
    j.Key(key);
    j.Uint(v);
  };
  j.Key("mapped_reads");
  j.BeginObject();
  uint("processes_sampled", r.processes_sampled);
  uint("processes_counted", r.processes_counted);
  uint("lost_faults", r.lost_faults);
  uint("counted_minor_faults", r.counted_minor_faults);
  uint("counted_major_faults", r.counted_major_faults);
  uint("counted_read_bytes", r.counted_read_bytes);
  j.Key("notes");
  j.BeginArray();
  for (const std::string& n : r.notes) j.String(n);
  j.EndArray();
  j.Key("files");
  j.BeginArray();
  for (const MappedFileStats& f : r.mapped) {
    j.BeginObject();
    j.Key("path");
    j.String(f.path);
    uint("faults", f.faults);
    uint("major_faults", f.major_faults);
    uint("span_bytes", f.span_bytes);
    uint("touched_bytes", f.touched_bytes);
    uint("estimated_spans", f.estimated_spans);
    j.Key("major_s");
    j.Double(static_cast<double>(f.major_ns) / 1e9);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
  j.Key("io_uring");
  j.BeginObject();
  uint("calls", r.uring_calls);
  uint("unseen_requests", r.uring_unseen_requests);
  j.Key("files");
  j.BeginArray();
  for (const UringFileStats& f : r.uring) {
    j.BeginObject();
    j.Key("path");
    j.String(f.path);
    uint("reads", f.reads);
    uint("read_bytes", f.read_bytes);
    uint("writes", f.writes);
    uint("write_bytes", f.write_bytes);
    uint("other", f.other);
    uint("failed", f.failed);
    uint("incomplete", f.incomplete);
    j.Key("read_s");
    j.Double(static_cast<double>(f.read_ns) / 1e9);
    j.EndObject();
  }
  j.EndArray();
  j.EndObject();
}

std::string MappedToText(const MappedReport& r) {
  if (r.empty()) return "";
  std::string out;
  if (r.processes_sampled + r.processes_counted > 0) {
    absl::StrAppendFormat(&out, "mapped reads: page faults sampled in %d processes, counted only in %d\n",
                          r.processes_sampled, r.processes_counted);
    for (const std::string& n : r.notes) absl::StrAppend(&out, "  not sampled: ", DisplayName(n), "\n");
    if (r.lost_faults > 0) {
      absl::StrAppendFormat(&out, "  %d faults lost (the kernel's sample buffers were full)\n",
                            r.lost_faults);
    }
    if (r.processes_counted > 0) {
      absl::StrAppendFormat(&out,
                            "  counted while data files were mapped (any memory, no file named): "
                            "%d minor faults, %d major, %s read from storage\n",
                            r.counted_minor_faults, r.counted_major_faults,
                            HumanBytes(static_cast<double>(r.counted_read_bytes)));
    }
  }
  if (!r.mapped.empty()) {
    absl::StrAppend(&out,
                    "\n    faults      major   major time      span    touched  file\n");
    for (const MappedFileStats& f : r.mapped) {
      absl::StrAppendFormat(&out, "%10d %10d %11.3fs %9s %10s  %s%s\n", f.faults, f.major_faults,
                            static_cast<double>(f.major_ns) / 1e9,
                            HumanBytes(static_cast<double>(f.span_bytes)),
                            HumanBytes(static_cast<double>(f.touched_bytes)), DisplayName(f.path),
                            f.estimated_spans > 0 ? " (some spans estimated)" : "");
    }
  }
  if (!r.uring.empty() || r.uring_calls > 0 || r.uring_unseen_requests > 0) {
    absl::StrAppendFormat(&out, "\nio_uring: %d calls into the kernel\n", r.uring_calls);
    if (r.uring_unseen_requests > 0) {
      absl::StrAppendFormat(&out,
                            "  %d requests submitted by system calls the shim cannot see (the "
                            "program's own syscall instruction): counted, files and sizes "
                            "unknown\n",
                            r.uring_unseen_requests);
    }
    absl::StrAppend(&out,
                    "     reads         read     writes      written  other incomplete  file\n");
    for (const UringFileStats& f : r.uring) {
      absl::StrAppendFormat(&out, "%10d %12s %10d %12s %6d %10d  %s\n", f.reads,
                            HumanBytes(static_cast<double>(f.read_bytes)), f.writes,
                            HumanBytes(static_cast<double>(f.write_bytes)), f.other, f.incomplete,
                            DisplayName(f.path));
    }
  }
  return out;
}

}  // namespace iotap::analyzer
