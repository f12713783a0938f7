#include "analyzer/steps/step_log.h"

#include <array>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "analyzer/steps/byte_source.h"
#include "analyzer/steps/json_tokenizer.h"
#include "analyzer/steps/jsonl_reader.h"
#include "analyzer/steps/marker_steps.h"
#include "analyzer/steps/profiler_reader.h"
#include "analyzer/steps/tensorboard_reader.h"

namespace iotap::analyzer {

namespace {

// Bytes of (decompressed) content looked at to tell formats apart.
constexpr size_t kHeadBytes = 64 * 1024;

enum class Kind { kUnknown, kTensorBoard, kProfiler, kJsonLines, kTrace };

// Top-level keys that only a profiler trace has.
constexpr std::array<std::string_view, 7> kProfilerKeys = {
    "traceEvents",         "schemaVersion",   "deviceProperties", "distributedInfo",
    "baseTimeNanoseconds", "displayTimeUnit", "traceName"};

// A JSON object at the start of `head`: a profiler trace or a JSON-lines
// step, by the first key that tells.
Kind KindOfObject(std::string_view head) {
  JsonTokenizer json(head);
  JsonToken key, value;
  if (!json.Next(&key).ok() || key.type != JsonToken::kBeginObject) {
    return Kind::kUnknown;
  }
  for (;;) {
    if (!json.Next(&key).ok() || key.type != JsonToken::kKey) return Kind::kUnknown;
    if (key.text == "step") return Kind::kJsonLines;
    for (std::string_view k : kProfilerKeys) {
      if (key.text == k) return Kind::kProfiler;
    }
    if (!json.Next(&value).ok() || !json.SkipValue(value).ok()) return Kind::kUnknown;
  }
}

Kind KindOf(std::string_view head) {
  if (head.size() >= 4 && head.substr(0, 4) == std::string_view("\x28\xb5\x2f\xfd", 4)) {
    return Kind::kTrace;  // zstd frame: an iotap trace
  }
  if (LooksLikeTfRecord(head)) return Kind::kTensorBoard;
  size_t first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return Kind::kUnknown;
  if (head[first] == '[') return Kind::kProfiler;
  if (head[first] == '{') return KindOfObject(head.substr(first));
  return Kind::kUnknown;
}

// When the contents do not tell (damage at the very start), the name may.
Kind KindOfName(const std::string& path) {
  std::string_view name = path;
  if (size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    name.remove_prefix(slash + 1);
  }
  if (name.find("tfevents") != std::string_view::npos) return Kind::kTensorBoard;
  if (name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")) return Kind::kJsonLines;
  if (name.ends_with(".json") || name.ends_with(".json.gz")) return Kind::kProfiler;
  if (name.ends_with(".iotap")) return Kind::kTrace;
  return Kind::kUnknown;
}

}  // namespace

int64_t StepSpan::data_wait_ns() const {
  int64_t total = 0;
  for (const TimeWindow& w : data_waits) total += w.duration_ns();
  return total;
}

const char* StepSourceName(StepSource source) {
  switch (source) {
    case StepSource::kTensorBoard:
      return "TensorBoard";
    case StepSource::kProfiler:
      return "PyTorch profiler";
    case StepSource::kJsonLines:
      return "JSON lines";
    case StepSource::kMarkers:
      return "iotap markers";
  }
  return "unknown";
}

absl::StatusOr<StepLog> ReadStepLog(const std::string& path) {
  std::string head(kHeadBytes, '\0');
  {
    absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
    if (!in.ok()) return in.status();
    // A cut .gz still shows its start (the reader reports the cut later);
    // one that shows nothing is an error now.
    absl::StatusOr<size_t> n = (*in)->Read(head.data(), head.size());
    if (!n.ok()) return n.status();
    head.resize(*n);
  }
  if (head.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty file"));
  Kind kind = KindOf(head);
  if (kind == Kind::kUnknown) kind = KindOfName(path);
  switch (kind) {
    case Kind::kTensorBoard:
      return ReadTensorBoardLog(path);
    case Kind::kProfiler:
      return ReadProfilerTrace(path);
    case Kind::kJsonLines:
      return ReadJsonLinesLog(path);
    case Kind::kTrace:
      return ReadMarkerSteps(path);
    case Kind::kUnknown:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      path,
      ": not a step log iotap reads: neither a TensorBoard event file (TFRecord framing), "
      "a PyTorch profiler trace (JSON with \"traceEvents\"), a JSON-lines step log (objects "
      "with \"step\", \"start\", \"end\") nor an iotap trace"));
}

}  // namespace iotap::analyzer
