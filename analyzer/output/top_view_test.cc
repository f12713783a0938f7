#include "analyzer/output/top_view.h"

#include "absl/strings/str_split.h"
#include "analyzer/testing/metrics_check.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

// A window of 10 s: one trainer (pid 7, rank 0, two loaders) with two
// steps of 1 s, waiting 0.5 s and unknown; 20 MB read through POSIX; two
// findings.
report::Report Window() {
  report::Report r;
  report::Run* run = r.mutable_run();
  run->set_session("job\"1\n");
  run->set_range_from_s(20);
  run->set_range_to_s(30);
  run->set_duration_s(10);
  run->set_steps(2);
  run->set_data_stall_share(0.5);
  run->set_read_throughput_bytes_per_s(2e6);
  report::StepStatistics* st = r.mutable_step_statistics();
  st->set_fetch_share(0.6);
  st->set_prep_share(0.3);
  st->set_other_share(0.1);
  st->set_loader_cores(1.25);
  st->set_trainer_cores(0.5);
  for (int pid : {7, 8, 9}) {
    report::Process* p = r.add_processes();
    p->set_pid(pid);
    p->set_host("node0");
    p->set_role(pid == 7 ? report::TRAINER : report::LOADER);
    p->set_trainer_pid(pid == 7 ? 0 : 7);
  }
  report::Step* s = r.add_steps();
  s->set_pid(7);
  s->set_end_s(25);
  s->set_duration_s(1);
  s->set_data_wait_s(0.5);
  s->set_fetch_s(0.3);
  s->set_prep_s(0.15);
  s->set_other_s(0.05);
  s = r.add_steps();
  s->set_pid(7);
  s->set_end_s(26);
  s->set_duration_s(1);
  s->set_data_wait_s(-1);
  report::Layer* l = r.add_layers();
  l->set_name("POSIX");
  l->set_read_bytes(20e6);
  report::File* f = r.add_files();
  f->set_path("/data/a");
  f->set_read_bytes(15e6);
  f = r.add_files();
  f->set_path("/data/b");
  f->set_read_bytes(5e6);
  r.add_findings()->set_id("data_stall_fetch");
  r.add_findings()->set_id("small_reads");
  return r;
}

TopFigures Figures() {
  TopTotals totals;
  totals.AddSteps(Window(), 0, 10);
  totals.AddSteps(Window(), 0, 20);  // as if another window of the same steps
  totals.layer_read_bytes["POSIX"] = 40e6;
  return TopFiguresOf(Window(), totals);
}

TEST(TopViewTest, OneLineHoldsTheWindowsFiguresInAFixedForm) {
  EXPECT_EQ(TopLine(Figures()),
            "t_s=30.0 window_s=10.0 stall_pct=50.0 fetch_pct=60.0 prep_pct=30.0 other_pct=10.0 "
            "steps_per_s=0.20 read_mb_per_s=2.00 loader_cores=1.25 total_stall_pct=50.0 "
            "finding=data_stall_fetch");
  report::Report none = Window();
  none.mutable_run()->set_data_stall_share(-1);
  none.clear_findings();
  EXPECT_EQ(TopLine(TopFiguresOf(none, TopTotals())),
            "t_s=30.0 window_s=10.0 stall_pct=- fetch_pct=- prep_pct=- other_pct=- "
            "steps_per_s=0.20 read_mb_per_s=2.00 loader_cores=1.25 total_stall_pct=- finding=-");
}

TEST(TopViewTest, TrainersAndTotalsAreSumsOfTheirSteps) {
  TopFigures f = Figures();
  ASSERT_EQ(f.trainers.size(), 1u);
  EXPECT_EQ(f.trainers[0].loaders, 2);
  EXPECT_EQ(f.trainers[0].window.steps, 2);
  EXPECT_EQ(f.trainers[0].window.Stall(), 0.5);  // the step that says its wait
  EXPECT_EQ(f.trainers[0].total.steps, 4);
  EXPECT_EQ(f.trainers[0].total.wait_s, 1.0);
  EXPECT_EQ(f.total_s, 20);
  ASSERT_EQ(f.files.size(), 2u);
  EXPECT_EQ(f.files[0].name, "/data/a");
  EXPECT_EQ(f.files[0].bytes_per_s, 1.5e6);
  ASSERT_EQ(f.layers.size(), 1u);
  EXPECT_EQ(f.layers[0].total_bytes, 40e6);
}

TEST(TopViewTest, MetricsPassBothParsersWithTheFiguresOfTheLine) {
  TopFigures f = Figures();
  const std::string trainer = "host=\"node0\",job=\"job\"1\n\",rank=\"0\",role=\"trainer\"";
  for (MetricsSyntax syntax : {MetricsSyntax::kPrometheus, MetricsSyntax::kOpenMetrics}) {
    std::string text =
        TopMetrics(f, syntax == MetricsSyntax::kOpenMetrics ? MetricsFormat::kOpenMetrics
                                                            : MetricsFormat::kPrometheus);
    absl::StatusOr<ParsedMetrics> m = ParseMetrics(text, syntax);
    ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
    EXPECT_EQ(m->samples.at("iotap_data_stall_ratio{" + trainer + "}"), 0.5);
    EXPECT_EQ(m->samples.at("iotap_data_wait_split_ratio{host=\"node0\",job=\"job\"1\n\","
                            "part=\"fetch\",rank=\"0\",role=\"trainer\"}"),
              0.6);
    EXPECT_EQ(m->samples.at("iotap_steps_per_second{" + trainer + "}"), 0.2);
    EXPECT_EQ(m->samples.at("iotap_steps_total{" + trainer + "}"), 4);
    EXPECT_EQ(m->samples.at("iotap_read_bytes_total{job=\"job\"1\n\",layer=\"POSIX\"}"), 40e6);
    EXPECT_EQ(m->samples.at("iotap_read_bytes_per_second{job=\"job\"1\n\",layer=\"POSIX\"}"), 2e6);
    EXPECT_EQ(m->samples.at("iotap_cpu_cores{job=\"job\"1\n\",role=\"loader\"}"), 1.25);
    EXPECT_EQ(m->samples.at("iotap_window_end_seconds{job=\"job\"1\n\"}"), 30);
    EXPECT_EQ(m->samples.at("iotap_job_data_stall_ratio{job=\"job\"1\n\"}"), 0.5);
    EXPECT_EQ(m->samples.at("iotap_job_data_wait_split_ratio{job=\"job\"1\n\",part=\"prep\"}"),
              0.3);
    EXPECT_EQ(m->samples.at("iotap_job_steps_per_second{job=\"job\"1\n\"}"), 0.2);
    EXPECT_EQ(m->samples.at("iotap_job_read_bytes_per_second{job=\"job\"1\n\"}"), 2e6);
    EXPECT_EQ(m->samples.at("iotap_finding{id=\"data_stall_fetch\",job=\"job\"1\n\",order=\"1\"}"),
              1);
    EXPECT_EQ(m->types.count(syntax == MetricsSyntax::kOpenMetrics ? "iotap_read_bytes"
                                                                   : "iotap_read_bytes_total"),
              1u);
  }
}

TEST(TopViewTest, TheScreenFitsItsWidth) {
  std::string screen = TopScreen(Figures(), 40);
  std::vector<std::string> lines = absl::StrSplit(screen, '\n');
  EXPECT_GT(lines.size(), 10u);
  for (const std::string& l : lines) EXPECT_LE(l.size(), 40u) << l;
  EXPECT_THAT(screen, ::testing::HasSubstr("data_stall_fetch"));
}

}  // namespace
}  // namespace iotap::analyzer
