// A trainer group's steps (group_steps.cc) from a state made by hand: whose
// step-log spans are whose, and which source wins, the markers or a log.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "analyzer/analysis/run_state.h"
#include "gtest/gtest.h"

namespace iotap::analyzer::run_state {
namespace {

constexpr int64_t kMs = 1'000'000;

// Catalog entry `index` as a process of `pid` and `rank` on host "h".
void AddProcess(RunState& s, int pid, int rank) {
  CatalogEntry& e = s.catalog.entries.emplace_back();
  e.header.set_pid(pid);
  e.header.set_rank(rank);
  e.header.set_hostname("h");
}

StepSpan Span(int64_t step, int rank, int pid, int64_t start_ms, int64_t end_ms) {
  StepSpan span;
  span.step = step;
  span.rank = rank;
  span.pid = pid;
  span.start_ns = start_ms * kMs;
  span.end_ns = end_ms * kMs;
  return span;
}

void AddLog(RunState& s, const std::string& path, std::vector<StepSpan> spans,
            bool wall_clock = true) {
  StepLog log;
  log.path = path;
  log.spans = std::move(spans);
  log.wall_clock = wall_clock;
  s.step_logs.emplace_back(path, std::move(log));
}

TEST(GroupStepsTest, LogSpansGoToTheGroupOfTheirRankOrPidOrElseTheFirst) {
  RunState s;
  AddProcess(s, 100, 0);   // 0: trainer of rank 0
  AddProcess(s, 101, -1);  // 1: its loader
  AddProcess(s, 200, 1);   // 2: trainer of rank 1
  AddProcess(s, 300, -1);  // 3: a trainer that says no rank
  for (int trainer : {0, 2, 3}) s.groups[trainer].trainer = trainer;
  AddLog(s, "steps.jsonl",
         {Span(0, 1, 0, 0, 10),       // rank 1: group 2
          Span(0, -1, 300, 0, 10),    // pid 300: group 3
          Span(1, 0, 300, 10, 20),    // rank 0 (group 0) and pid 300 (group 3): group 0
          Span(2, 7, 999, 20, 30),    // nobody's: the first group, and said so
          Span(3, 1, 100, 30, 40)});  // rank 1 (group 2) and pid 100 (group 0): group 0
  AddLog(s, "profile.json", {Span(0, 0, 100, 0, 10)}, /*wall_clock=*/false);
  s.step_logs.emplace_back("broken.tfevents", absl::DataLossError("bad record"));

  const StepLogSpans logs = AssignStepLogs(s);
  EXPECT_EQ(logs.used, (std::vector<bool>{true, false, false}));
  EXPECT_EQ(logs.unmatched, (std::vector<bool>{true, false, false}));
  ASSERT_EQ(logs.of_group.size(), 3u);
  const std::map<int, std::vector<size_t>> want = {{0, {2, 3, 4}}, {2, {0}}, {3, {1}}};
  EXPECT_EQ(logs.of_group[0], want);
  EXPECT_TRUE(logs.of_group[1].empty());
  EXPECT_TRUE(logs.of_group[2].empty());
}

TEST(GroupStepsTest, OneGroupTakesEveryUnnamedSpanWithoutSayingSo) {
  RunState s;
  AddProcess(s, 100, -1);
  s.groups[0].trainer = 0;
  AddLog(s, "steps.jsonl", {Span(0, -1, 0, 0, 10), Span(1, 5, 55, 10, 20)});
  const StepLogSpans logs = AssignStepLogs(s);
  EXPECT_EQ(logs.used, (std::vector<bool>{true}));
  EXPECT_EQ(logs.unmatched, (std::vector<bool>{false}));
  EXPECT_EQ(logs.of_group[0].at(0), (std::vector<size_t>{0, 1}));
}

// A trainer (pid 100, rank 4) whose markers gave two steps and two epochs.
void AddMarkedTrainer(RunState& s) {
  AddProcess(s, 100, 4);
  s.end_ns = 400 * kMs;
  s.groups[0].trainer = 0;
  StepLog markers;
  markers.source = StepSource::kMarkers;
  markers.spans = {Span(0, -1, 100, 50, 150), Span(1, -1, 100, 150, 260)};
  markers.marks = {StepMark{"epoch", 250 * kMs}, StepMark{"epoch", 50 * kMs}};
  markers.step_definition = "loader iterations";
  s.marker_steps = {{markers}};
}

TEST(GroupStepsTest, MarkersGiveTheStepsTheirEpochsAndTheTrainersRank) {
  RunState s;
  AddMarkedTrainer(s);
  TrainerGroup& g = s.groups.at(0);
  GroupResult out;
  CollectSteps(s, 0, g, AssignStepLogs(s), &out);
  ASSERT_EQ(g.steps.size(), 2u);
  EXPECT_EQ(g.steps[0].start_ns, 50 * kMs);
  EXPECT_EQ(g.steps[1].start_ns, 150 * kMs);
  EXPECT_EQ(g.steps[0].rank, 4);
  EXPECT_EQ(g.steps[1].rank, 4);
  EXPECT_STREQ(g.step_source, "iotap markers");
  EXPECT_TRUE(out.has_steps);
  EXPECT_EQ(out.step_sources, (std::vector<std::string>{"markers of pid 100"}));
  EXPECT_EQ(out.notes, (std::vector<std::string>{"pid 100: loader iterations"}));
  // Epochs from the sorted marks, the last to the run's end.
  ASSERT_EQ(g.epochs.size(), 2u);
  EXPECT_EQ(g.epochs[0].start_ns, 50 * kMs);
  EXPECT_EQ(g.epochs[0].end_ns, 250 * kMs);
  EXPECT_EQ(g.epochs[1].start_ns, 250 * kMs);
  EXPECT_EQ(g.epochs[1].end_ns, 400 * kMs);
}

TEST(GroupStepsTest, AStepLogReplacesTheMarkersAndItsSpansAreSortedByStart) {
  RunState s;
  AddMarkedTrainer(s);
  AddLog(s, "steps.jsonl", {Span(7, 4, 0, 300, 350), Span(6, 4, 0, 100, 200)});
  TrainerGroup& g = s.groups.at(0);
  GroupResult out;
  CollectSteps(s, 0, g, AssignStepLogs(s), &out);
  ASSERT_EQ(g.steps.size(), 2u);
  EXPECT_EQ(g.steps[0].step, 6);
  EXPECT_EQ(g.steps[1].step, 7);
  EXPECT_STREQ(g.step_source, "JSON lines");
  // The run-wide stage names the log (step_analysis.cc); the markers are no
  // longer a source of this group's.
  EXPECT_TRUE(out.step_sources.empty());
  EXPECT_TRUE(out.has_steps);
  EXPECT_EQ(g.epochs.size(), 2u);  // still the markers' epochs
}

TEST(GroupStepsTest, ALogWithNoneOfTheGroupsStepsLeavesItWithout) {
  RunState s;
  AddMarkedTrainer(s);
  AddProcess(s, 200, 5);  // a second trainer, whose steps the log holds
  s.groups[1].trainer = 1;
  s.marker_steps.emplace_back();
  AddLog(s, "steps.jsonl", {Span(0, 5, 0, 0, 10)});
  TrainerGroup& g = s.groups.at(0);
  GroupResult out;
  CollectSteps(s, 0, g, AssignStepLogs(s), &out);
  EXPECT_TRUE(g.steps.empty());
  EXPECT_FALSE(out.has_steps);
}

}  // namespace
}  // namespace iotap::analyzer::run_state
