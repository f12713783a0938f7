// `iotap top` on a real PyTorch job whose bottleneck changes half-way
// (programs/top_switch_train.py, watched by programs/top_watch.py): the
// one-line form says so within three refreshes, and a scrape of /metrics
// made right after a line holds that line's figures.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "analyzer/testing/metrics_check.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

using analyzer::MetricsSyntax;
using analyzer::ParsedMetrics;
using analyzer::ParseMetrics;

std::map<std::string, std::string> Pairs(const std::string& line) {
  std::map<std::string, std::string> out;
  for (absl::string_view word : absl::StrSplit(line, ' ', absl::SkipEmpty())) {
    std::vector<std::string> kv = absl::StrSplit(word, absl::MaxSplits('=', 1));
    if (kv.size() == 2) out[kv[0]] = kv[1];
  }
  return out;
}

double Number(const std::string& s) {
  double v = -1;
  EXPECT_TRUE(absl::SimpleAtod(s, &v)) << s;
  return v;
}

// The sample of family `name` (any labels) whose labels contain `with`.
const double* Find(const ParsedMetrics& m, const std::string& name, const std::string& with = "") {
  for (const auto& [key, value] : m.samples) {
    if (key.rfind(name + "{", 0) == 0 && key.find(with) != std::string::npos) return &value;
  }
  return nullptr;
}

TEST(TopTest, ABottleneckThatChangesHalfWayShowsWithinThreeRefreshes) {
  TempDir dir;
  RunOptions options;
  options.timeout_seconds = 240;
  RunResult r = RunProgram(
      {Python(), SourcePath("tests/integration/programs/top_watch.py"), IotapBinary(), dir.path()},
      options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  google::protobuf::Struct out;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &out).ok()) << r.out;
  const auto& f = out.fields();
  ASSERT_EQ(f.at("job_exit").number_value(), 0) << f.at("job_err").string_value();
  ASSERT_EQ(f.at("top_exit").number_value(), 0) << f.at("top_err").string_value();
  std::vector<std::string> lines;
  for (const auto& v : f.at("lines").list_value().values()) lines.push_back(v.string_value());
  std::string all;
  for (const std::string& l : lines) absl::StrAppend(&all, l, "\n");
  ASSERT_TRUE(f.at("switched_at").has_number_value()) << all;
  const size_t switched = static_cast<size_t>(f.at("switched_at").number_value());
  ASSERT_GE(switched, 1u);
  ASSERT_GE(lines.size(), switched + 3) << all;

  // Before: the worker keeps ahead, and the last window before the switch
  // waits little (on an idle machine about 3%; with every core busy, the
  // batches' hand-over alone can take a quarter of a step).
  std::map<std::string, std::string> last_before = Pairs(lines[switched - 1]);
  const std::string before = last_before["finding"];
  EXPECT_LT(Number(last_before["stall_pct"]), 50) << all;
  // After: within the three refreshes that follow, the loop waits for the
  // worker's CPU most of the time, and the first finding is another one.
  bool changed = false;
  for (size_t i = switched; i < switched + 3; ++i) {
    std::map<std::string, std::string> p = Pairs(lines[i]);
    if (p["stall_pct"] == "-") continue;
    changed = changed || (Number(p["stall_pct"]) >= Number(last_before["stall_pct"]) + 25 &&
                          Number(p["prep_pct"]) >= 50 && p["finding"] != before);
  }
  EXPECT_TRUE(changed) << all;

  // Each line's scrape: a valid OpenMetrics text; where no refresh came
  // between the line and the scrape (same window end), the line's figures.
  const auto& scrapes = f.at("scrapes").list_value().values();
  ASSERT_EQ(static_cast<size_t>(scrapes.size()), lines.size());
  int same_window = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    // The last line's scrape may come after top has exited (the job ended).
    if (scrapes[static_cast<int>(i)].has_null_value()) {
      EXPECT_EQ(i + 1, lines.size()) << "a scrape failed while top was running";
      continue;
    }
    absl::StatusOr<ParsedMetrics> m =
        ParseMetrics(scrapes[static_cast<int>(i)].string_value(), MetricsSyntax::kOpenMetrics);
    ASSERT_TRUE(m.ok()) << m.status();
    std::map<std::string, std::string> p = Pairs(lines[i]);
    const double* end = Find(*m, "iotap_window_end_seconds");
    ASSERT_NE(end, nullptr);
    if (absl::StrFormat("%.1f", *end) != p["t_s"]) continue;
    ++same_window;
    auto pct = [&](const std::string& name, const std::string& with) {
      const double* v = Find(*m, name, with);
      return v == nullptr ? std::string("-") : absl::StrFormat("%.1f", 100 * *v);
    };
    EXPECT_EQ(pct("iotap_job_data_stall_ratio", ""), p["stall_pct"]) << lines[i];
    EXPECT_EQ(pct("iotap_job_data_wait_split_ratio", "part=\"fetch\""), p["fetch_pct"]);
    EXPECT_EQ(pct("iotap_job_data_wait_split_ratio", "part=\"prep\""), p["prep_pct"]);
    EXPECT_EQ(pct("iotap_job_data_wait_split_ratio", "part=\"other\""), p["other_pct"]);
    EXPECT_EQ(absl::StrFormat("%.2f", *Find(*m, "iotap_job_steps_per_second")), p["steps_per_s"]);
    EXPECT_EQ(absl::StrFormat("%.2f", *Find(*m, "iotap_job_read_bytes_per_second") / 1e6),
              p["read_mb_per_s"]);
    EXPECT_EQ(absl::StrFormat("%.2f", *Find(*m, "iotap_cpu_cores", "role=\"loader\"")),
              p["loader_cores"]);
    EXPECT_NE(Find(*m, "iotap_finding", absl::StrCat("id=\"", p["finding"], "\"")), nullptr)
        << lines[i];
  }
  // A refresh a second, a scrape a few milliseconds after each line.
  EXPECT_GE(same_window, static_cast<int>(lines.size()) / 2) << all;
}

}  // namespace
}  // namespace iotap::testing
