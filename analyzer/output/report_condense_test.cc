#include "analyzer/output/report_condense.h"

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

// `steps` steps of trainer `pid`, step k lasting (k % 3 + 1) s with a wait of
// 0.5 s, plus their two timeline spans each, and a checkpoint span.
report::Report WithSteps(int pid, int steps) {
  report::Report r;
  double t = 0;
  for (int k = 0; k < steps; ++k) {
    report::Step* s = r.add_steps();
    s->set_pid(pid);
    s->set_step(k);
    s->set_start_s(t);
    s->set_duration_s(k % 3 + 1);
    s->set_end_s(t + s->duration_s());
    s->set_data_wait_s(0.5);
    s->set_exposed_io_s(0.25);
    s->set_hidden_io_s(0.125);
    s->set_read_bytes(1000);
    for (const char* kind : {"step", "data_wait"}) {
      report::Span* span = r.mutable_timeline()->add_spans();
      span->set_kind(kind);
      span->set_pid(pid);
      span->set_start_s(t);
      span->set_end_s(t + 0.5);
    }
    t = s->end_s();
  }
  r.mutable_timeline()->add_spans()->set_kind("checkpoint");
  return r;
}

TEST(CondenseReportTest, SmallReportsKeepEveryStepAndSpan) {
  report::Report r = WithSteps(7, 100);
  report::Report c = CondenseReport(r, CondenseOptions{});
  EXPECT_EQ(c.steps_size(), 100);
  EXPECT_EQ(c.timeline().spans_size(), 201);
  EXPECT_EQ(c.step_buckets_size(), 0);
  EXPECT_EQ(c.condensed().steps_left_out(), 0);
}

TEST(CondenseReportTest, ManyStepsBecomeBucketsWithTheSameTotals) {
  report::Report r = WithSteps(7, 10'000);
  CondenseOptions options;
  options.max_steps = 1000;
  options.target_buckets = 100;
  report::Report c = CondenseReport(r, options);
  EXPECT_EQ(c.steps_size(), 0);
  ASSERT_EQ(c.step_buckets_size(), 100);  // 100 steps each
  EXPECT_EQ(c.condensed().steps_left_out(), 10'000);
  EXPECT_EQ(c.condensed().spans_left_out(), 20'000);
  ASSERT_EQ(c.timeline().spans_size(), 1);
  EXPECT_EQ(c.timeline().spans(0).kind(), "checkpoint");
  double steps = 0, duration = 0, wait = 0, exposed = 0, bytes = 0;
  for (const report::StepBucket& b : c.step_buckets()) {
    EXPECT_EQ(b.pid(), 7);
    steps += b.steps();
    duration += b.duration_s();
    wait += b.data_wait_s();
    exposed += b.exposed_io_s();
    bytes += b.read_bytes();
  }
  EXPECT_EQ(steps, 10'000);
  EXPECT_EQ(duration, 3334 * 1 + 3333 * 2 + 3333 * 3);
  EXPECT_EQ(wait, 5000);
  EXPECT_EQ(exposed, 2500);
  EXPECT_EQ(bytes, 10'000'000);
  const report::StepBucket& first = c.step_buckets(0);
  EXPECT_EQ(first.first_step(), 0);
  EXPECT_EQ(first.last_step(), 99);
  EXPECT_EQ(first.start_s(), 0);
  EXPECT_EQ(first.max_step_s(), 3);
  EXPECT_EQ(c.step_buckets(99).last_step(), 9999);
}

TEST(CondenseReportTest, BucketsOnlyTheTrainersThatWaitedLongest) {
  report::Report r;
  for (int pid = 1; pid <= 5; ++pid) {
    report::Report one = WithSteps(pid, 1000);
    for (report::Step& s : *one.mutable_steps()) {
      s.set_data_wait_s(0.1 * pid);
      *r.add_steps() = s;
    }
  }
  CondenseOptions options;
  options.max_group_series = 2;
  options.target_buckets = 100;
  report::Report c = CondenseReport(r, options);
  ASSERT_EQ(c.step_buckets_size(), 100);  // 50 each for the two that waited longest
  for (const report::StepBucket& b : c.step_buckets()) EXPECT_GE(b.pid(), 4);
  EXPECT_EQ(c.condensed().step_trainers_left_out(), 3);
  EXPECT_EQ(c.condensed().steps_left_out(), 5000);
}

TEST(CondenseReportTest, UnknownWaitsStayUnknownInTheirBucket) {
  report::Report r = WithSteps(7, 5000);
  r.mutable_steps(3)->set_data_wait_s(-1);
  CondenseOptions options;
  options.target_buckets = 50;
  report::Report c = CondenseReport(r, options);
  EXPECT_EQ(c.step_buckets(0).data_wait_s(), -1);
  EXPECT_EQ(c.step_buckets(1).data_wait_s(), 50);
}

TEST(CondenseReportTest, KeepsTrainersThenTheBusiestProcesses) {
  report::Report r;
  for (int i = 0; i < 10; ++i) {
    report::Process* p = r.add_processes();
    p->set_pid(i);
    p->set_role(i == 9 ? report::TRAINER : report::LOADER);
    p->set_read_bytes(i == 9 ? 0 : 100 * i);
  }
  CondenseOptions options;
  options.max_processes = 3;
  report::Report c = CondenseReport(r, options);
  ASSERT_EQ(c.processes_size(), 3);
  EXPECT_EQ(c.processes(0).pid(), 7);  // in their order: 7, 8, then the trainer
  EXPECT_EQ(c.processes(1).pid(), 8);
  EXPECT_EQ(c.processes(2).pid(), 9);
  EXPECT_EQ(c.condensed().processes_left_out(), 7);
}

TEST(CondenseReportTest, KeepsTheSeriesOfTheTrainersThatReadMost) {
  report::Report r;
  for (int pid = 1; pid <= 5; ++pid) {
    for (const char* group : {"process", "cpu", "wait"}) {
      report::Series* s = r.mutable_timeline()->add_series();
      s->set_group(group);
      s->set_pid(pid);
      s->add_values(pid * 10.0);
    }
  }
  r.mutable_timeline()->add_series()->set_group("layer");
  CondenseOptions options;
  options.max_group_series = 2;
  report::Report c = CondenseReport(r, options);
  ASSERT_EQ(c.timeline().series_size(), 7);  // 3 each of pids 4 and 5, and the layer
  for (const report::Series& s : c.timeline().series()) {
    if (s.group() != "layer") {
      EXPECT_GE(s.pid(), 4);
    }
  }
  EXPECT_EQ(c.condensed().series_left_out(), 9);
}

TEST(CondenseReportTest, RoundsStepFiguresButNotStepNumbers) {
  report::Report r = WithSteps(7, 3);
  r.mutable_steps(2)->set_step(123456);
  r.mutable_steps(2)->set_start_s(3600.123456);
  r.mutable_steps(2)->set_duration_s(0.0123456);
  r.mutable_steps(2)->set_read_bytes(987654);
  report::Report c = CondenseReport(r, CondenseOptions{});
  EXPECT_EQ(c.steps(2).step(), 123456);
  EXPECT_EQ(c.steps(2).pid(), 7);
  EXPECT_EQ(c.steps(2).start_s(), 3600.123);
  EXPECT_EQ(c.steps(2).duration_s(), 0.01235);
  EXPECT_EQ(c.steps(2).read_bytes(), 987700);
  EXPECT_EQ(c.steps(2).data_wait_s(), 0.5);
}

TEST(RoundSignificantTest, KeepsTheLeadingDigits) {
  EXPECT_EQ(RoundSignificant(123456.0, 4), 123500.0);
  EXPECT_EQ(RoundSignificant(0.000123456, 3), 0.000123);
  EXPECT_EQ(RoundSignificant(-98765.0, 2), -99000.0);
  EXPECT_EQ(RoundSignificant(0.0, 4), 0.0);
  EXPECT_EQ(RoundSignificant(1234.5, 0), 1234.5);
}

}  // namespace
}  // namespace iotap::analyzer
