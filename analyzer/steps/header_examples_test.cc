// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/read/trace_reader.h"
#include "analyzer/steps/byte_source.h"
#include "analyzer/steps/decimal.h"
#include "analyzer/steps/json_tokenizer.h"
#include "analyzer/steps/marker_steps.h"
#include "analyzer/steps/step_log.h"
#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::Gzip;
using testing::TempDirectory;
using testing::WriteTemp;

TEST(HeaderExamplesTest, StepLog) {
  const std::string path = WriteTemp("example-steps.jsonl",
                                     "{\"step\": 1, \"start\": 1700000000.5, \"end\": 1700000001}\n"
                                     "not json\n"
                                     "{\"step\": 2, \"start\": 1700000001, \"end\": 1700000001.25}\n");
  std::vector<std::string> damage;
  std::vector<int64_t> steps;
  int64_t total_ns = 0;
  // step_log.h
  absl::StatusOr<StepLog> log = ReadStepLog(path);
  ASSERT_TRUE(log.ok()) << log.status();  // unreadable, not a step log, or nothing usable
  for (const std::string& e : log->errors) damage.push_back(e);  // damage read past: report it
  for (const StepSpan& s : log->spans) {
    steps.push_back(s.step);
    total_ns += s.end_ns - s.start_ns;
  }

  EXPECT_EQ(damage.size(), 1u);
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(total_ns, 750'000'000);
}

TEST(HeaderExamplesTest, MarkerSteps) {
  SyntheticProcess p(7, 1, "/usr/bin/python3", {"python3"}, 1'000'000'000);
  p.Marker(OP_STEP_BEGIN, 1'100'000'000, 1'100'000'000, 3);
  p.Marker(OP_STEP_END, 1'300'000'000, 1'300'000'000, 3);
  p.End(EndOfTrace::REASON_EXIT, 0);
  const std::vector<std::string> trace_files = {TempDirectory() + "/markers.iotap"};
  p.WriteTo(trace_files[0]);
  std::vector<ReadIssue> issues;
  // marker_steps.h
  MarkerCollector markers;
  for (const std::string& file : trace_files) {
    ASSERT_TRUE(ReadTraceFile(file, &markers, &issues).ok());  // the header returns the status
  }
  std::vector<StepLog> logs = markers.TakeLogs();

  ASSERT_EQ(logs.size(), 1u);
  ASSERT_EQ(logs[0].spans.size(), 1u);
  EXPECT_EQ(logs[0].spans[0].step, 3);
  EXPECT_EQ(logs[0].spans[0].duration_ns(), 200'000'000);
  EXPECT_TRUE(issues.empty());
}

TEST(HeaderExamplesTest, Decimal) {
  // decimal.h
  std::optional<int64_t> ns = ScaleDecimal("1212075529876.817", 3);  // us -> ns
  EXPECT_EQ(*ns, 1212075529876817);
}

TEST(HeaderExamplesTest, JsonTokenizer) {
  const std::string source = R"({"traceEvents": [], "other": {"a": 1}})";
  int keys = 0;
  bool trace_events = false;
  // json_tokenizer.h
  JsonTokenizer json(source);             // a ByteSource, or text in memory
  JsonToken t;
  while (true) {
    absl::Status s = json.Next(&t);
    ASSERT_TRUE(s.ok()) << s;             // "line 3, column 17 (byte 52): expected ':' ..."
    if (t.type == JsonToken::kEnd) break;
    if (t.type == JsonToken::kKey) ++keys;
    if (t.type == JsonToken::kKey && t.text == "traceEvents") trace_events = true;
  }

  EXPECT_EQ(keys, 3);
  EXPECT_TRUE(trace_events);
}

TEST(HeaderExamplesTest, ByteSource) {
  const std::string data(100000, 'x');
  const std::string path = WriteTemp("example.gz", Gzip(data));
  uint64_t total = 0;
  // byte_source.h
  absl::StatusOr<std::unique_ptr<ByteSource>> in = ByteSource::Open(path);
  ASSERT_TRUE(in.ok()) << in.status();
  char buf[65536];
  for (;;) {
    absl::StatusOr<size_t> n = (*in)->Read(buf, sizeof(buf));
    ASSERT_TRUE(n.ok()) << n.status();  // "FILE: the gzip stream is cut short after N bytes ..."
    if (*n == 0) break;
    total += *n;
  }

  EXPECT_EQ(total, data.size());
  EXPECT_TRUE((*in)->compressed());
}

}  // namespace
}  // namespace iotap::analyzer
