// Small reports for the tests of what compares and prints two runs
// (report_diff_test.cc, report_diff_output_test.cc): a run of steps with
// known figures, and findings added to it.
//
//   report::Report a = SampleReport(/*steps=*/9, /*step_s=*/0.5, /*wait_s=*/0.25);
//   AddFinding(&a, "data_stall_fetch", report::Finding::CRITICAL);

#ifndef IOTAP_ANALYZER_TESTING_SAMPLE_REPORTS_H_
#define IOTAP_ANALYZER_TESTING_SAMPLE_REPORTS_H_

#include <string>

#include "iotap/report.pb.h"

namespace iotap::analyzer::testing {

// A run of `steps` steps (the first one warm-up) of `step_s` each, waiting
// `wait_s` per counted step; values chosen to be exact in binary.
inline report::Report SampleReport(double steps, double step_s, double wait_s) {
  report::Report r;
  r.set_schema_version(1);
  r.mutable_run()->add_command("python3");
  r.mutable_run()->add_command("train.py");
  r.mutable_run()->set_steps(steps);
  r.mutable_run()->set_duration_s(64);
  r.mutable_run()->set_bytes_read(1024);
  r.mutable_run()->set_io_busy_s(8);
  report::StepStatistics* st = r.mutable_step_statistics();
  if (steps > 0) {
    st->set_steps(steps - 1);
    st->set_warmup_steps_skipped(1);
    st->set_median_step_s(step_s);
    st->set_p90_step_s(step_s);
    st->set_total_step_s(step_s * (steps - 1));
    st->set_total_data_wait_s(wait_s * (steps - 1));
    st->set_median_data_wait_s(wait_s);
    st->set_data_stall_share(wait_s / step_s);
    st->set_fetch_share(0.5);
    st->set_prep_share(0.25);
    st->set_other_share(0.25);
    r.mutable_overlap()->set_exposed_io_s(1);
    r.mutable_overlap()->set_hidden_io_s(3);
  } else {
    st->set_data_stall_share(-1);
    st->set_median_data_wait_s(-1);
  }
  r.mutable_data_files()->set_files(2);
  r.mutable_data_files()->set_reads(4);
  r.mutable_data_files()->set_median_read_bytes(256);
  r.mutable_data_files()->set_mean_read_latency_s(0.5);
  return r;
}

// A finding `id` of `severity` with a title and a summary that name it.
inline report::Finding* AddFinding(report::Report* r, const std::string& id,
                                   report::Finding::Severity severity) {
  report::Finding* f = r->add_findings();
  f->set_id(id);
  f->set_title("title of " + id);
  f->set_summary("summary of " + id);
  f->set_severity(severity);
  return f;
}

}  // namespace iotap::analyzer::testing

#endif  // IOTAP_ANALYZER_TESTING_SAMPLE_REPORTS_H_
