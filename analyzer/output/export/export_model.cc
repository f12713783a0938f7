#include "analyzer/output/export/export_model.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/py_profile.h"
#include "analyzer/analysis/run_analysis.h"
#include "analyzer/base/text.h"
#include "analyzer/clocks/clock_alignment.h"
#include "analyzer/read/run_catalog.h"
#include "analyzer/read/trace_reader.h"
#include "analyzer/read/trace_set.h"

namespace iotap::analyzer {

uint32_t ExportStrings::Intern(const std::string& value) {
  if (value.empty()) return 0;
  auto [it, added] = ids_.emplace(value, static_cast<uint32_t>(values_.size()));
  if (added) values_.push_back(value);
  return it->second;
}

int ExportIds::Renumber(std::unordered_map<int, std::string>* hosts, const std::string& host,
                        int id) {
  auto [it, added] = hosts->emplace(id, host);
  if (added || it->second == host) return id;
  auto [entry, fresh] = renumbered_.emplace(std::make_pair(host, id), 0);
  if (fresh) entry->second = kFirst + static_cast<int>(renumbered_.size()) - 1 + fresh_;
  return entry->second;
}

std::string ExportProcess::Title() const {
  std::string what;
  switch (role) {
    case report::TRAINER:
      what = "trainer";
      break;
    case report::LOADER:
      what = absl::StrCat("loader of ", trainer_pid);
      break;
    case report::HELPER:
      what = "helper";
      break;
    default:
      what = "process";
      break;
  }
  return absl::StrCat(name, " [pid ", pid, " on ", host, ", ", what, "]");
}

uint64_t NestSlices(std::vector<ExportSlice>* slices) {
  std::stable_sort(slices->begin(), slices->end(), [](const ExportSlice& a, const ExportSlice& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  });
  uint64_t clipped = 0;
  std::vector<int64_t> open_ends;  // ends of the slices the next one may lie in
  for (ExportSlice& s : *slices) {
    if (s.end_ns < s.start_ns) s.end_ns = s.start_ns;
    while (!open_ends.empty() && open_ends.back() <= s.start_ns) open_ends.pop_back();
    if (!open_ends.empty() && s.end_ns > open_ends.back()) {
      s.end_ns = open_ends.back();
      ++clipped;
    }
    if (!s.instant) open_ends.push_back(s.end_ns);
  }
  return clipped;
}

std::vector<ExportTrack> InFlightLanes(const std::string& thread, std::vector<ExportSlice> slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const ExportSlice& a, const ExportSlice& b) {
    return a.start_ns < b.start_ns;
  });
  std::vector<ExportTrack> lanes;
  for (ExportSlice& s : slices) {
    if (s.end_ns < s.start_ns) s.end_ns = s.start_ns;
    auto free = std::find_if(lanes.begin(), lanes.end(), [&](const ExportTrack& lane) {
      return lane.slices.back().end_ns <= s.start_ns;
    });
    if (free == lanes.end()) {
      lanes.emplace_back();
      free = lanes.end() - 1;
    }
    free->slices.push_back(s);
  }
  for (size_t k = 0; k < lanes.size(); ++k) {
    lanes[k].kind = ExportTrack::kUringRequests;
    lanes[k].name =
        absl::StrCat("io_uring requests of ", thread,
                     lanes.size() > 1 ? absl::StrCat(" [", k + 1, " of ", lanes.size(), "]") : "");
  }
  return lanes;
}

namespace {

// Reads one trace file into an ExportProcess.
class Collector : public TraceVisitor {
 public:
  Collector(int64_t origin_ns, ExportProcess* out) : origin_ns_(origin_ns), out_(out) {}

  void OnProcess(const ProcessTrace& p) override { header_ = p.header(); }

  void OnEvents(const ProcessTrace& p, const EventBatch& batch) override {
    for (const Event& e : batch.events) Add(p, e);
  }

  void OnPacket(const ProcessTrace& p, const Packet& packet) override {
    if (packet.has_thread())
      thread_names_[packet.thread().tid()] = ValidUtf8(packet.thread().name());
  }

  const ProcessHeader& header() const { return header_; }

  // Moves the tracks into the process, named and nested.
  void Finish() {
    for (auto& [key, track] : tracks_) {
      if (track.kind == ExportTrack::kUringRequests) {
        for (ExportTrack& lane : InFlightLanes(ThreadName(track.id), std::move(track.slices))) {
          out_->tracks.push_back(std::move(lane));
        }
        continue;
      }
      if (track.kind == ExportTrack::kThread) track.name = ThreadName(track.id);
      out_->clipped += NestSlices(&track.slices);
      out_->tracks.push_back(std::move(track));
    }
  }

 private:
  void Add(const ProcessTrace& p, const Event& e) {
    const Layer layer = LayerOf(e.op);
    ExportSlice s;
    // The duration is the monotonic one: clock snapshots on either side of an
    // event must not stretch it.
    s.start_ns = p.ToRealtimeNs(e.start_ns) - origin_ns_;
    s.end_ns = s.start_ns + std::max<int64_t>(0, e.duration_ns());
    s.name = out_->strings.Intern(OpName(e.op));
    s.category = out_->strings.Intern(LayerName(layer));
    if (e.file != 0 && layer != Layer::kCuda)
      s.file = out_->strings.Intern(ValidUtf8(p.Text(e.file)));
    if (TransferOf(e.op) != Transfer::kNone) s.bytes = static_cast<int64_t>(BytesMoved(e));
    if (layer == Layer::kCuda && TransferOf(e.op) == Transfer::kNone) {
      s.bytes = static_cast<int64_t>(e.requested);
    }
    if (e.HasOffset() && layer != Layer::kCuda) s.offset = e.offset;
    s.error =
        e.error != 0 ? e.error : (layer == Layer::kCuda ? static_cast<uint32_t>(e.result) : 0);
    switch (e.op) {
      case OP_STEP_BEGIN:
      case OP_STEP_END:
      case OP_MARK:
        s.instant = true;
        s.end_ns = s.start_ns;
        s.step = e.op == OP_MARK ? -1 : static_cast<int64_t>(e.aux);
        break;
      case OP_DATA_WAIT:
      case OP_OPTIMIZER_STEP:
        s.step = static_cast<int64_t>(e.aux);
        break;
      case OP_MAPPED_READ:
        s.major = (e.flags & FLAG_MAJOR_FAULT) != 0 ? 1 : 0;
        s.incomplete = (e.flags & FLAG_INCOMPLETE) != 0;
        break;
      case OP_URING_READ:
      case OP_URING_WRITE:
      case OP_URING_OPENAT:
      case OP_URING_CLOSE:
      case OP_URING_STATX:
        s.incomplete = (e.flags & FLAG_INCOMPLETE) != 0;
        AddTo({kRequestKey, e.tid}, s);
        return;
      case OP_PY_SAMPLE: {
        // An instant on the sampled thread, when its stack was read: named
        // by its innermost function, the whole stack as its file.
        std::vector<std::string> stack = PyStackFunctions(p, e.file);
        if (stack.empty()) return;
        s.start_ns += std::max<int64_t>(0, e.duration_ns());
        s.end_ns = s.start_ns;
        s.instant = true;
        s.name = out_->strings.Intern(ValidUtf8(stack.back()));
        s.category = out_->strings.Intern("Python");
        s.file = out_->strings.Intern(ValidUtf8(absl::StrJoin(stack, " > ")));
        AddTo({kThreadKey, e.aux}, s);
        return;
      }
      default:
        break;
    }
    bool device = e.op == OP_CUPTI_MEMCPY || e.op == OP_CUPTI_KERNEL;
    AddTo({device ? kDeviceKey : kThreadKey, device ? e.aux : e.tid}, s);
  }

  std::string ThreadName(uint32_t tid) const {
    auto name = thread_names_.find(tid);
    return name != thread_names_.end() && !name->second.empty()
               ? absl::StrCat(name->second, " (", tid, ")")
               : absl::StrCat("thread ", tid);
  }

  // Track keys: (kind, tid or stream).
  static constexpr int kThreadKey = 0, kDeviceKey = 1, kRequestKey = 2;

  void AddTo(std::pair<int, uint64_t> key, const ExportSlice& s) {
    auto [it, added] = tracks_.try_emplace(key);
    if (added) {
      it->second.kind = key.first == kDeviceKey    ? ExportTrack::kGpuStream
                        : key.first == kRequestKey ? ExportTrack::kUringRequests
                                                   : ExportTrack::kThread;
      it->second.id = static_cast<uint32_t>(key.second);
      if (key.first == kDeviceKey)
        it->second.name = absl::StrCat("GPU stream ", key.second, " (CUPTI)");
    }
    it->second.slices.push_back(s);
  }

  int64_t origin_ns_;
  ExportProcess* out_;
  ProcessHeader header_;
  std::map<std::pair<int, uint64_t>, ExportTrack> tracks_;  // (device?, tid or stream)
  std::map<uint32_t, std::string> thread_names_;
};

// The trainer's steps and data waits, from the analysis, as a track.
ExportTrack StepTrack(const report::Report& r, int pid, ExportProcess* p) {
  ExportTrack track;
  track.kind = ExportTrack::kSteps;
  track.name = "training steps";
  const uint32_t category = p->strings.Intern("steps");
  for (const report::Span& span : r.timeline().spans()) {
    if (span.pid() != pid) continue;
    ExportSlice s;
    s.start_ns = static_cast<int64_t>(span.start_s() * 1e9);
    s.end_ns = static_cast<int64_t>(span.end_s() * 1e9);
    s.name = p->strings.Intern(span.kind() == "data_wait" ? "waiting for data"
                               : span.kind() == "step"    ? "step"
                                                          : ValidUtf8(span.kind()));
    s.category = category;
    s.step = static_cast<int64_t>(span.step());
    track.slices.push_back(s);
  }
  p->clipped += NestSlices(&track.slices);
  return track;
}

std::string ProcessName(const ProcessHeader& h) {
  std::vector<std::string> words;
  for (int i = 0; i < h.argv_size() && i < 4; ++i) {
    std::string a = ValidUtf8(h.argv(i));
    if (i == 0) a = a.substr(a.rfind('/') == std::string::npos ? 0 : a.rfind('/') + 1);
    words.push_back(a.size() > 60 ? a.substr(0, 60) + "..." : a);
  }
  if (words.empty()) words.push_back(ValidUtf8(h.executable()));
  return absl::StrJoin(words, " ");
}

}  // namespace

absl::Status ExportRun(const std::string& path, const ExportOptions& options, ExportSink* sink) {
  absl::StatusOr<std::vector<std::string>> files = ListTraceFiles(path);
  if (!files.ok()) return files.status();
  // The hosts' clocks are fitted once, for the analysis and for the events.
  RunCatalog catalog = CatalogTraceFiles(*files);
  RunClocks clocks = FitRunClocks(catalog, {}, options.threads);
  if (!options.correct_clocks) DropClockCorrections("turned off (--no-clock-correction)", &clocks);
  AnalysisOptions analysis;
  analysis.timeline_bins = options.timeline_bins;
  analysis.threads = options.threads;
  analysis.correct_clocks = options.correct_clocks;
  analysis.clocks = &clocks;
  absl::StatusOr<report::Report> report = AnalyzeTraceFiles(*files, analysis);
  if (!report.ok()) return report.status();
  if (!clocks.corrections.empty()) CorrectCatalogClocks(clocks.corrections, &catalog);
  RunInfo run;
  run.origin_unix_ns = catalog.start_unix_ns;
  run.report = std::move(*report);
  if (absl::Status s = sink->Begin(run); !s.ok()) return s;

  std::map<std::string, const report::Process*> by_file;
  for (const report::Process& p : run.report.processes()) by_file[p.trace_file()] = &p;
  for (const std::string& file : *files) {
    ExportProcess process;
    Collector collector(run.origin_unix_ns, &process);
    std::vector<ReadIssue> issues;
    if (!ReadTraceFile(file, &collector, &issues, &clocks.corrections).ok()) {
      continue;  // the analysis noted it
    }
    collector.Finish();
    const ProcessHeader& h = collector.header();
    process.pid = h.pid();
    process.host = ValidUtf8(h.hostname());
    process.name = ProcessName(h);
    for (const std::string& a : h.argv()) process.argv.push_back(ValidUtf8(a));
    auto summary = by_file.find(ValidUtf8(file));
    if (summary != by_file.end()) {
      process.role = summary->second->role();
      process.trainer_pid = summary->second->trainer_pid();
      if (process.role == report::TRAINER) {
        ExportTrack steps = StepTrack(run.report, process.pid, &process);
        if (!steps.slices.empty()) process.tracks.push_back(std::move(steps));
      }
    }
    if (absl::Status s = sink->AddProcess(process); !s.ok()) return s;
  }
  return sink->Finish(run);
}

}  // namespace iotap::analyzer
