#include "analyzer/steps/profiler_reader.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "analyzer/steps/byte_source.h"
#include "analyzer/steps/decimal.h"
#include "analyzer/steps/json_tokenizer.h"
#include "analyzer/steps/span_building.h"

namespace iotap::analyzer {

namespace {

constexpr std::string_view kStepPrefix = "ProfilerStep#";
constexpr std::string_view kWaitPrefix = "enumerate(DataLoader)#";

// A collective that every rank completes together (CollectiveEnd). gloo runs
// each on a thread of its own and records it there, to its completion. For
// NCCL, the kernel on the GPU's timeline: the CPU-side "nccl:all_reduce"
// only launches it.
bool IsCollective(std::string_view name) {
  for (std::string_view op :
       {"gloo:all_reduce", "gloo:allreduce", "gloo:all_gather", "gloo:reduce_scatter"}) {
    if (name == op) return true;
  }
  for (std::string_view prefix : {"ncclKernel_", "ncclDevKernel_"}) {
    if (!name.starts_with(prefix)) continue;
    std::string_view op = name.substr(prefix.size());
    return op.starts_with("AllReduce") || op.starts_with("AllGather") ||
           op.starts_with("ReduceScatter");
  }
  return false;
}
constexpr std::string_view kWaitSuffix = ".__next__";
// Epoch microseconds after 2001-09-09 have 16 digits; smaller `ts` without a
// base are relative to something else.
constexpr int64_t kEpochThresholdNs = 1000000000000000000;

struct RawSpan {
  int64_t step = 0;
  int pid = 0;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
};

// Walks the JSON and keeps the step and wait spans, and what says how to
// read their times.
class TraceParser {
 public:
  explicit TraceParser(JsonTokenizer* json) : json_(json) {}

  absl::Status Run() {
    JsonToken t;
    if (absl::Status s = json_->Next(&t); !s.ok()) return s;
    if (t.type == JsonToken::kBeginArray) {
      saw_events_ = true;
      if (absl::Status s = Events(); !s.ok()) return s;
    } else if (t.type == JsonToken::kBeginObject) {
      if (absl::Status s = TopObject(); !s.ok()) return s;
    } else {
      return absl::InvalidArgumentError("not a profiler trace: not a JSON object or array");
    }
    if (!saw_events_) {
      return absl::InvalidArgumentError("not a profiler trace: no \"traceEvents\" array");
    }
    return json_->Next(&t);  // only the end may follow
  }

  std::vector<RawSpan> steps;
  std::vector<RawSpan> waits;
  std::vector<RawSpan> collectives;
  std::optional<int64_t> base_ns;
  int rank = -1;
  bool cpu_functions = false;  // "pid": "CPU functions", PyTorch without Kineto
  int64_t events = 0;
  int64_t unusable = 0;  // step or wait spans without usable times or number

 private:
  absl::Status TopObject() {
    JsonToken key, value;
    for (;;) {
      if (absl::Status s = json_->Next(&key); !s.ok()) return s;
      if (key.type == JsonToken::kEndObject) return absl::OkStatus();
      if (absl::Status s = json_->Next(&value); !s.ok()) return s;
      absl::Status s;
      if (key.text == "traceEvents" && value.type == JsonToken::kBeginArray) {
        saw_events_ = true;
        s = Events();
      } else if (key.text == "baseTimeNanoseconds" && value.type == JsonToken::kNumber) {
        base_ns = ScaleDecimal(value.text, 0);
      } else if (key.text == "distributedInfo" && value.type == JsonToken::kBeginObject) {
        s = DistributedInfo();
      } else {
        s = json_->SkipValue(value);
      }
      if (!s.ok()) return s;
    }
  }

  absl::Status DistributedInfo() {
    JsonToken key, value;
    for (;;) {
      if (absl::Status s = json_->Next(&key); !s.ok()) return s;
      if (key.type == JsonToken::kEndObject) return absl::OkStatus();
      if (absl::Status s = json_->Next(&value); !s.ok()) return s;
      int r;
      if (key.text == "rank" && value.type == JsonToken::kNumber &&
          absl::SimpleAtoi(value.text, &r)) {
        rank = r;
      }
      if (absl::Status s = json_->SkipValue(value); !s.ok()) return s;
    }
  }

  absl::Status Events() {
    JsonToken t;
    for (;;) {
      if (absl::Status s = json_->Next(&t); !s.ok()) return s;
      if (t.type == JsonToken::kEndArray) return absl::OkStatus();
      absl::Status s = t.type == JsonToken::kBeginObject ? Event() : json_->SkipValue(t);
      if (!s.ok()) return s;
      ++events;
    }
  }

  absl::Status Event() {
    name_.clear();
    ph_.clear();
    cat_.clear();
    ts_.clear();
    dur_.clear();
    int pid = 0;
    JsonToken key, value;
    for (;;) {
      if (absl::Status s = json_->Next(&key); !s.ok()) return s;
      if (key.type == JsonToken::kEndObject) break;
      if (absl::Status s = json_->Next(&value); !s.ok()) return s;
      const std::string& k = key.text;
      bool text = value.type == JsonToken::kString;
      bool number = value.type == JsonToken::kNumber;
      if (k == "name" && text) {
        name_.swap(value.text);
      } else if (k == "ph" && text) {
        ph_.swap(value.text);
      } else if (k == "cat" && text) {
        cat_.swap(value.text);
      } else if (k == "ts" && number) {
        ts_.swap(value.text);
      } else if (k == "dur" && number) {
        dur_.swap(value.text);
      } else if (k == "pid" && (number || text)) {
        if (number && !absl::SimpleAtoi(value.text, &pid)) pid = 0;
        if (text && value.text == "CPU functions") cpu_functions = true;
      } else if (absl::Status s = json_->SkipValue(value); !s.ok()) {
        return s;
      }
    }
    if (ph_ != "X") return absl::OkStatus();
    bool is_step = name_.starts_with(kStepPrefix) && !cat_.starts_with("gpu_");
    bool is_wait = name_.starts_with(kWaitPrefix) && name_.ends_with(kWaitSuffix);
    bool is_collective = !is_step && !is_wait && IsCollective(name_);
    if (!is_step && !is_wait && !is_collective) return absl::OkStatus();
    RawSpan span;
    span.pid = pid;
    std::optional<int64_t> ts = ScaleDecimal(ts_, 3);
    std::optional<int64_t> dur = ScaleDecimal(dur_, 3);
    bool numbered = !is_step || absl::SimpleAtoi(name_.substr(kStepPrefix.size()), &span.step);
    if (!ts || !dur || *dur < 0 || !numbered) {
      if (!is_collective) ++unusable;
      return absl::OkStatus();
    }
    span.ts_ns = *ts;
    span.dur_ns = *dur;
    (is_step ? steps : is_wait ? waits : collectives).push_back(span);
    return absl::OkStatus();
  }

  JsonTokenizer* json_;
  bool saw_events_ = false;
  std::string name_, ph_, cat_, ts_, dur_;
};

bool ByStart(const RawSpan& a, const RawSpan& b) { return a.ts_ns < b.ts_ns; }

}  // namespace

absl::StatusOr<StepLog> ReadProfilerTrace(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
  if (!in.ok()) return in.status();
  JsonTokenizer json(in->get());
  TraceParser parser(&json);
  absl::Status parsed = parser.Run();
  if (!parsed.ok() && parser.events == 0 && parser.steps.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", parsed.message()));
  }
  StepLog log;
  log.source = StepSource::kProfiler;
  log.path = path;
  if (!parsed.ok()) {
    // The tokenizer's messages say where; the source's name the file already.
    std::string message = parsed.code() == absl::StatusCode::kInvalidArgument
                              ? absl::StrCat(path, ": ", parsed.message())
                              : std::string(parsed.message());
    log.errors.push_back(absl::StrCat(message, " (after ", parser.events,
                                      " trace events; the steps before it are kept)"));
  }

  std::vector<RawSpan>& steps = parser.steps;
  std::vector<RawSpan>& waits = parser.waits;
  std::sort(steps.begin(), steps.end(), ByStart);
  std::sort(waits.begin(), waits.end(), ByStart);
  int64_t origin = 0;
  if (parser.base_ns) {
    origin = *parser.base_ns;
    log.notes.push_back(
        "Kineto trace with baseTimeNanoseconds: times are that base plus ts microseconds");
  } else if (!steps.empty() || !waits.empty()) {
    int64_t first = steps.empty()   ? waits[0].ts_ns
                    : waits.empty() ? steps[0].ts_ns
                                    : std::min(steps[0].ts_ns, waits[0].ts_ns);
    if (first >= kEpochThresholdNs) {
      log.notes.push_back(
          "older profiler format without baseTimeNanoseconds: ts are absolute epoch "
          "microseconds");
    } else {
      log.wall_clock = false;
      log.notes.push_back(absl::StrCat(
          "ts count microseconds from the moment the profiler began recording, a moment the "
          "file does not give",
          parser.cpu_functions ? " (PyTorch built without Kineto, as Debian's python3-torch "
                                 "1.13: \"pid\": \"CPU functions\")"
                               : "",
          ": step durations and data waits are exact, but the steps cannot be placed on the "
          "wall clock or lined up with I/O, so their times start near 0; for aligned steps "
          "use `iotap run --torch-steps` or a PyTorch built with Kineto"));
    }
  }

  std::vector<TimeWindow> windows;
  for (const RawSpan& w : waits) {
    windows.push_back({origin + w.ts_ns, origin + w.ts_ns + w.dur_ns});
  }
  size_t cursor = 0;
  for (const RawSpan& s : steps) {
    StepSpan span;
    span.step = s.step;
    span.rank = parser.rank;
    span.pid = s.pid;
    span.start_ns = origin + s.ts_ns;
    span.end_ns = span.start_ns + s.dur_ns;
    span.has_data_wait = !waits.empty();
    internal::AddWaitsInside(windows, &cursor, &span);
    log.spans.push_back(std::move(span));
  }
  // Each collective in the step whose span holds its end, numbered there in
  // the order they ended.
  std::vector<RawSpan>& collectives = parser.collectives;
  std::sort(collectives.begin(), collectives.end(), [](const RawSpan& a, const RawSpan& b) {
    return a.ts_ns + a.dur_ns < b.ts_ns + b.dur_ns;
  });
  std::map<int64_t, int> in_step;
  for (const RawSpan& c : collectives) {
    const int64_t end = origin + c.ts_ns + c.dur_ns;
    for (const StepSpan& span : log.spans) {
      if (span.start_ns <= end && end <= span.end_ns) {
        log.collectives.push_back({span.step, in_step[span.step]++, parser.rank, end});
        break;
      }
    }
  }
  std::vector<TimeWindow> extents;
  for (const StepSpan& span : log.spans) extents.push_back({span.start_ns, span.end_ns});
  int64_t outside = internal::CountOutside(windows, extents);
  if (steps.empty()) {
    log.notes.push_back(
        "no ProfilerStep#N spans: the trace was not taken with torch.profiler's schedule and "
        "prof.step(), so it has no steps");
  } else {
    log.notes.push_back(
        waits.empty()
            ? "a step is a ProfilerStep#N span; there are no enumerate(DataLoader) spans, so "
              "data waits are unknown"
            : absl::StrCat("a step is a ProfilerStep#N span; its data waits are the "
                           "enumerate(DataLoader)#...__next__ spans inside it (",
                           waits.size(), " waits, ", outside, " of them outside every step)"));
  }
  if (parser.unusable > 0) {
    log.notes.push_back(absl::StrCat(parser.unusable,
                                     " step or wait spans without a usable ts, dur or step "
                                     "number were left out"));
  }
  return internal::FinishStepLog(std::move(log));
}

}  // namespace iotap::analyzer
