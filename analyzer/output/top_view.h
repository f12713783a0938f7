// What `iotap top` shows at each refresh, read from the report of the last
// window (the report's analysis on a time range) and from running totals
// since the start, and the three forms it takes: a terminal screen, one line
// of key=value pairs, and metrics in the Prometheus text formats.
//
//   TopTotals totals;
//   totals.AddSteps(window_report, 10.0, 11.0);  // the steps new since 10 s
//   TopFigures f = TopFiguresOf(window_report, totals);
//   std::string line = TopLine(f);           // "t_s=11.0 window_s=10.0 stall_pct=43.1 ..."
//   std::string screen = TopScreen(f, /*width=*/100);
//   std::string metrics = TopMetrics(f, MetricsFormat::kOpenMetrics);  // ends "# EOF\n"
//
// Every figure is one of the report's; the view only picks and divides.

#ifndef IOTAP_ANALYZER_OUTPUT_TOP_VIEW_H_
#define IOTAP_ANALYZER_OUTPUT_TOP_VIEW_H_

#include <map>
#include <string>
#include <vector>

#include "iotap/report.pb.h"

namespace iotap::analyzer {

// One trainer's steps over a range: sums of the report's steps of its pid.
struct TrainerSteps {
  double steps = 0;
  double step_s = 0;
  double wait_s = 0;  // data waits (steps whose source says none are left out)
  double fetch_s = 0;
  double prep_s = 0;
  double other_s = 0;
  double waited_step_s = 0;  // durations of the steps that say their wait

  void Add(const report::Step& s);
  void Add(const TrainerSteps& o);
  // wait_s / waited_step_s, or -1 when no step says its wait.
  double Stall() const;
};

// Since the start: each step once (from the first window that holds its
// end after the last one added), and the bytes read so far.
struct TopTotals {
  double duration_s = 0;
  std::map<int, TrainerSteps> trainers;            // by pid
  std::map<std::string, double> layer_read_bytes;  // by layer name
  double read_bytes = 0;                           // at the lowest layers

  // Adds the window's steps that end at or after `from_s` (seconds from the
  // run's start), and says the totals run to `to_s`.
  void AddSteps(const report::Report& window, double from_s, double to_s);
};

struct TopTrainer {
  int pid = 0;
  int rank = 0;
  std::string host;
  TrainerSteps window;
  TrainerSteps total;
  int loaders = 0;  // processes that load data for it
};

struct TopRate {
  std::string name;  // a path, a directory or a layer
  double bytes_per_s = 0;
  double total_bytes = 0;  // layers only: since the start
};

struct TopFinding {
  std::string id;
  std::string title;
  std::string summary;
};

struct TopFigures {
  std::string job;         // the run's session id, or its command's first word
  double end_s = 0;        // the window's end, seconds from the run's start
  double window_s = 0;     // the window's length within the run
  double stall = -1;       // the report's data_stall_share over the window
  double fetch_share = 0;  // of the wait
  double prep_share = 0;
  double other_share = 0;
  double steps_per_s = 0;
  double read_bytes_per_s = 0;
  double loader_cores = 0;
  double trainer_cores = 0;
  double total_s = 0;  // since the start
  double total_stall = -1;
  double total_read_bytes = 0;
  std::vector<TopTrainer> trainers;
  std::vector<TopRate> layers;
  std::vector<TopRate> files;        // busiest first, up to 5
  std::vector<TopRate> directories;  // busiest first, up to 5
  std::vector<TopFinding> findings;  // most important first
};

TopFigures TopFiguresOf(const report::Report& window, const TopTotals& totals);

// One line (no newline), keys in this order, numbers with a fixed number of
// decimals, "-" where there is no figure:
//   t_s window_s stall_pct fetch_pct prep_pct other_pct steps_per_s
//   read_mb_per_s loader_cores total_stall_pct finding
std::string TopLine(const TopFigures& f);

// The terminal screen: lines of at most `width` columns, each ending with
// "\n" (the caller clears and positions).
std::string TopScreen(const TopFigures& f, int width);

enum class MetricsFormat {
  kPrometheus,   // the text format of the node exporter's textfile collector
  kOpenMetrics,  // OpenMetrics 1.0 text, ending with "# EOF"
};

// Every metric of `f` (README.md, "iotap top").
std::string TopMetrics(const TopFigures& f, MetricsFormat format);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_OUTPUT_TOP_VIEW_H_
