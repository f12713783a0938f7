#include "analyzer/output/report_condense.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace iotap::analyzer {

namespace {

using report::Report;

// Sums `steps` (one trainer's, in order) into a bucket.
report::StepBucket Bucket(const std::vector<const report::Step*>& steps, size_t begin, size_t end) {
  report::StepBucket b;
  const report::Step& first = *steps[begin];
  b.set_pid(first.pid());
  b.set_rank(first.rank());
  b.set_first_step(first.step());
  b.set_last_step(steps[end - 1]->step());
  b.set_steps(static_cast<double>(end - begin));
  b.set_start_s(first.start_s());
  b.set_end_s(steps[end - 1]->end_s());
  bool wait_known = true;
  for (size_t i = begin; i < end; ++i) {
    const report::Step& s = *steps[i];
    b.set_duration_s(b.duration_s() + s.duration_s());
    b.set_max_step_s(std::max(b.max_step_s(), s.duration_s()));
    if (s.data_wait_s() < 0) wait_known = false;
    b.set_data_wait_s(b.data_wait_s() + std::max(0.0, s.data_wait_s()));
    b.set_fetch_s(b.fetch_s() + s.fetch_s());
    b.set_prep_s(b.prep_s() + s.prep_s());
    b.set_other_s(b.other_s() + s.other_s());
    b.set_exposed_io_s(b.exposed_io_s() + s.exposed_io_s());
    b.set_hidden_io_s(b.hidden_io_s() + s.hidden_io_s());
    b.set_read_bytes(b.read_bytes() + s.read_bytes());
  }
  if (!wait_known) b.set_data_wait_s(-1);
  return b;
}

// Replaces `out->steps` by buckets of consecutive steps of each trainer, and
// drops the step and wait spans they had on the timeline.
void BucketSteps(const Report& in, const CondenseOptions& options, Report* out) {
  // By (pid, rank): trainers on different hosts may share a pid.
  std::map<std::pair<int, int>, std::vector<const report::Step*>> by_trainer;
  std::map<std::pair<int, int>, double> waited;
  for (const report::Step& s : in.steps()) {
    by_trainer[{s.pid(), s.rank()}].push_back(&s);
    waited[{s.pid(), s.rank()}] += std::max(0.0, s.data_wait_s());
  }
  // Buckets of the trainers that waited longest only, so that their number
  // does not grow with the job's.
  std::vector<std::pair<double, std::pair<int, int>>> ranked;
  for (const auto& [trainer, wait] : waited) ranked.emplace_back(wait, trainer);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  const size_t kept =
      std::min(ranked.size(), static_cast<size_t>(std::max(1, options.max_group_series)));
  for (size_t i = kept; i < ranked.size(); ++i) by_trainer.erase(ranked[i].second);
  out->mutable_condensed()->set_step_trainers_left_out(static_cast<double>(ranked.size() - kept));
  const size_t per_trainer =
      std::max<size_t>(20, static_cast<size_t>(std::max(1, options.target_buckets)) / kept);
  for (auto& [trainer, steps] : by_trainer) {
    std::stable_sort(steps.begin(), steps.end(), [](const report::Step* a, const report::Step* b) {
      return a->start_s() < b->start_s();
    });
    const size_t width = (steps.size() + per_trainer - 1) / per_trainer;
    for (size_t i = 0; i < steps.size(); i += width) {
      *out->add_step_buckets() = Bucket(steps, i, std::min(steps.size(), i + width));
    }
  }
  out->mutable_condensed()->set_steps_left_out(in.steps_size());
  out->clear_steps();
  report::Timeline* t = out->mutable_timeline();
  t->clear_spans();
  double left_out = 0;
  for (const report::Span& span : in.timeline().spans()) {
    if (span.kind() == "step" || span.kind() == "data_wait" || span.kind() == "inferred_wait" ||
        span.kind() == "between_steps") {
      ++left_out;
    } else {
      *t->add_spans() = span;
    }
  }
  out->mutable_condensed()->set_spans_left_out(left_out);
}

// Keeps every trainer, then the processes that read most, in their order.
void KeepBusiestProcesses(const Report& in, int max_processes, Report* out) {
  std::vector<int> order(in.processes_size());
  for (int i = 0; i < in.processes_size(); ++i) order[i] = i;
  auto rank = [&](int i) {
    const report::Process& p = in.processes(i);
    return std::make_pair(p.role() == report::TRAINER, p.read_bytes() + p.write_bytes());
  };
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rank(a) > rank(b); });
  order.resize(static_cast<size_t>(max_processes));
  std::sort(order.begin(), order.end());
  out->clear_processes();
  for (int i : order) *out->add_processes() = in.processes(i);
  out->mutable_condensed()->set_processes_left_out(in.processes_size() - max_processes);
}

bool PerProcessGroup(const std::string& group) {
  return group == "process" || group == "cpu" || group == "wait";
}

// Keeps the per-process series of the `max_trainers` groups that read most.
void KeepBusiestSeries(int max_trainers, Report* r) {
  std::map<int, double> read_by_trainer;
  for (const report::Series& s : r->timeline().series()) {
    if (!PerProcessGroup(s.group())) continue;
    double& sum = read_by_trainer[s.pid()];
    if (s.group() == "process") {
      for (double v : s.values()) sum += v;
    }
  }
  if (static_cast<int>(read_by_trainer.size()) <= max_trainers) return;
  std::vector<std::pair<double, int>> ranked;
  for (const auto& [pid, sum] : read_by_trainer) ranked.emplace_back(sum, pid);
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::set<int> kept;
  for (int i = 0; i < max_trainers; ++i) kept.insert(ranked[i].second);
  google::protobuf::RepeatedPtrField<report::Series> all;
  all.Swap(r->mutable_timeline()->mutable_series());
  double left_out = 0;
  for (report::Series& s : all) {
    if (PerProcessGroup(s.group()) && kept.count(s.pid()) == 0) {
      ++left_out;
    } else {
      *r->mutable_timeline()->add_series() = std::move(s);
    }
  }
  r->mutable_condensed()->set_series_left_out(left_out);
}

// Step figures at `digits` significant digits; times of day (start and end,
// which can be hours into a run and must still order the steps) at 3 more.
template <typename StepLike>
void RoundStep(int digits, StepLike* s) {
  auto round = [digits](double v) { return RoundSignificant(v, digits); };
  s->set_start_s(RoundSignificant(s->start_s(), digits + 3));
  s->set_end_s(RoundSignificant(s->end_s(), digits + 3));
  s->set_duration_s(round(s->duration_s()));
  s->set_data_wait_s(round(s->data_wait_s()));
  s->set_fetch_s(round(s->fetch_s()));
  s->set_prep_s(round(s->prep_s()));
  s->set_other_s(round(s->other_s()));
  s->set_exposed_io_s(round(s->exposed_io_s()));
  s->set_hidden_io_s(round(s->hidden_io_s()));
  s->set_read_bytes(round(s->read_bytes()));
}

}  // namespace

double RoundSignificant(double value, int digits) {
  if (digits <= 0 || value == 0 || !std::isfinite(value)) return value;
  const int exponent = digits - static_cast<int>(std::ceil(std::log10(std::fabs(value))));
  // Scale by an exact power of ten on the side that keeps it an integer.
  if (exponent >= 0) {
    const double scale = std::pow(10.0, exponent);
    return std::round(value * scale) / scale;
  }
  const double scale = std::pow(10.0, -exponent);
  return std::round(value / scale) * scale;
}

report::Report CondenseReport(const Report& report, const CondenseOptions& options) {
  Report out = report;
  out.clear_step_buckets();
  out.clear_condensed();
  if (report.steps_size() > options.max_steps) BucketSteps(report, options, &out);
  if (report.processes_size() > options.max_processes) {
    KeepBusiestProcesses(report, options.max_processes, &out);
  }
  KeepBusiestSeries(options.max_group_series, &out);
  if (options.significant_digits > 0) {
    for (report::Series& s : *out.mutable_timeline()->mutable_series()) {
      for (double& v : *s.mutable_values()) v = RoundSignificant(v, options.significant_digits);
    }
    for (report::Step& s : *out.mutable_steps()) {
      RoundStep(options.significant_digits, &s);
      s.set_io_busy_s(RoundSignificant(s.io_busy_s(), options.significant_digits));
      s.set_write_busy_s(RoundSignificant(s.write_busy_s(), options.significant_digits));
    }
    for (report::StepBucket& b : *out.mutable_step_buckets()) {
      RoundStep(options.significant_digits, &b);
      b.set_max_step_s(RoundSignificant(b.max_step_s(), options.significant_digits));
    }
    out.mutable_condensed()->set_significant_digits(options.significant_digits);
  }
  return out;
}

}  // namespace iotap::analyzer
