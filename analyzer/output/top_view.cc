#include "analyzer/output/top_view.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

constexpr size_t kBusiest = 5;

double PerSecond(double amount, double seconds) { return seconds > 0 ? amount / seconds : 0; }

std::vector<TopRate> Busiest(const google::protobuf::RepeatedPtrField<report::File>& files,
                             double seconds) {
  std::vector<TopRate> out;
  for (const report::File& f : files) {
    if (f.read_bytes() > 0) out.push_back(TopRate{f.path(), PerSecond(f.read_bytes(), seconds)});
  }
  std::stable_sort(out.begin(), out.end(), [](const TopRate& a, const TopRate& b) {
    return a.bytes_per_s > b.bytes_per_s;
  });
  if (out.size() > kBusiest) out.resize(kBusiest);
  return out;
}

// "12.3" or "-" for a share that is not known (< 0).
std::string Percent(double share) { return share < 0 ? "-" : absl::StrFormat("%.1f", 100 * share); }

// A label value with \, " and newlines escaped (both text formats).
std::string LabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

// Numbers as both formats take them: finite, shortest round trip.
std::string Number(double v) {
  if (!std::isfinite(v)) return "0";
  return absl::StrFormat("%.17g", v);
}

}  // namespace

void TrainerSteps::Add(const report::Step& s) {
  steps += 1;
  step_s += s.duration_s();
  if (s.data_wait_s() < 0) return;
  waited_step_s += s.duration_s();
  wait_s += s.data_wait_s();
  fetch_s += s.fetch_s();
  prep_s += s.prep_s();
  other_s += s.other_s();
}

void TrainerSteps::Add(const TrainerSteps& o) {
  steps += o.steps;
  step_s += o.step_s;
  wait_s += o.wait_s;
  fetch_s += o.fetch_s;
  prep_s += o.prep_s;
  other_s += o.other_s;
  waited_step_s += o.waited_step_s;
}

double TrainerSteps::Stall() const { return waited_step_s > 0 ? wait_s / waited_step_s : -1; }

void TopTotals::AddSteps(const report::Report& window, double from_s, double to_s) {
  duration_s = std::max(duration_s, to_s);
  for (const report::Step& s : window.steps()) {
    if (s.end_s() >= from_s) trainers[s.pid()].Add(s);
  }
}

TopFigures TopFiguresOf(const report::Report& window, const TopTotals& totals) {
  TopFigures f;
  const report::Run& run = window.run();
  f.job = !run.session().empty()   ? run.session()
          : run.command_size() > 0 ? run.command(0)
                                   : "iotap";
  f.end_s = run.range_to_s();
  f.window_s = run.duration_s();
  f.stall = run.data_stall_share();
  const report::StepStatistics& st = window.step_statistics();
  f.fetch_share = st.fetch_share();
  f.prep_share = st.prep_share();
  f.other_share = st.other_share();
  f.steps_per_s = PerSecond(run.steps(), f.window_s);
  f.read_bytes_per_s = run.read_throughput_bytes_per_s();
  f.loader_cores = st.loader_cores();
  f.trainer_cores = st.trainer_cores();
  f.total_s = totals.duration_s;
  f.total_read_bytes = totals.read_bytes;
  TrainerSteps all;
  for (const auto& [pid, t] : totals.trainers) all.Add(t);
  f.total_stall = all.Stall();
  std::map<int, TrainerSteps> window_steps;
  for (const report::Step& s : window.steps()) window_steps[s.pid()].Add(s);
  for (const report::Process& p : window.processes()) {
    if (p.role() != report::TRAINER) continue;
    TopTrainer& t = f.trainers.emplace_back();
    t.pid = p.pid();
    t.rank = p.rank();
    t.host = p.host();
    if (auto it = window_steps.find(p.pid()); it != window_steps.end()) t.window = it->second;
    if (auto it = totals.trainers.find(p.pid()); it != totals.trainers.end()) t.total = it->second;
    for (const report::Process& q : window.processes()) {
      if (q.role() == report::LOADER && q.trainer_pid() == p.pid()) ++t.loaders;
    }
  }
  for (const report::Layer& l : window.layers()) {
    auto total = totals.layer_read_bytes.find(l.name());
    f.layers.push_back(TopRate{l.name(), PerSecond(l.read_bytes(), f.window_s),
                               total == totals.layer_read_bytes.end() ? 0 : total->second});
  }
  f.files = Busiest(window.files(), f.window_s);
  f.directories = Busiest(window.directories(), f.window_s);
  for (const report::Finding& x : window.findings()) {
    f.findings.push_back(TopFinding{x.id(), x.title(), x.summary()});
  }
  return f;
}

std::string TopLine(const TopFigures& f) {
  return absl::StrFormat(
      "t_s=%.1f window_s=%.1f stall_pct=%s fetch_pct=%s prep_pct=%s other_pct=%s "
      "steps_per_s=%.2f read_mb_per_s=%.2f loader_cores=%.2f total_stall_pct=%s finding=%s",
      f.end_s, f.window_s, Percent(f.stall), Percent(f.stall < 0 ? -1 : f.fetch_share),
      Percent(f.stall < 0 ? -1 : f.prep_share), Percent(f.stall < 0 ? -1 : f.other_share),
      f.steps_per_s, f.read_bytes_per_s / 1e6, f.loader_cores, Percent(f.total_stall),
      f.findings.empty() ? "-" : f.findings.front().id);
}

std::string TopScreen(const TopFigures& f, int width) {
  std::vector<std::string> lines;
  lines.push_back(absl::StrFormat("iotap top  %s  at %s, last %s (since start: %s)", f.job,
                                  HumanDuration(f.end_s), HumanDuration(f.window_s),
                                  HumanDuration(f.total_s)));
  lines.push_back(absl::StrFormat(
      "data stall %s%% (fetch %s%%, prep %s%%, other %s%% of the wait); since start %s%%",
      Percent(f.stall), Percent(f.stall < 0 ? -1 : f.fetch_share),
      Percent(f.stall < 0 ? -1 : f.prep_share), Percent(f.stall < 0 ? -1 : f.other_share),
      Percent(f.total_stall)));
  lines.push_back(absl::StrFormat("%.2f steps/s  read %s  loaders' CPU %.2f cores, trainers' %.2f",
                                  f.steps_per_s, HumanRate(f.read_bytes_per_s), f.loader_cores,
                                  f.trainer_cores));
  lines.push_back("");
  lines.push_back(
      "TRAINER        RANK  LOADERS  STEPS/S  STALL%  FETCH%  PREP%  OTHER%  "
      "STALL% SINCE START");
  for (const TopTrainer& t : f.trainers) {
    const TrainerSteps& w = t.window;
    double wait = w.wait_s;
    lines.push_back(absl::StrFormat(
        "%-14s %4d  %7d  %7.2f  %6s  %6s  %5s  %6s  %s", absl::StrCat(t.host, ":", t.pid), t.rank,
        t.loaders, PerSecond(w.steps, f.window_s), Percent(w.Stall()),
        Percent(wait > 0 ? w.fetch_s / wait : -1), Percent(wait > 0 ? w.prep_s / wait : -1),
        Percent(wait > 0 ? w.other_s / wait : -1), Percent(t.total.Stall())));
  }
  lines.push_back("");
  lines.push_back("LAYER      READ/S        READ SINCE START");
  for (const TopRate& l : f.layers) {
    lines.push_back(absl::StrFormat("%-10s %-13s %s", l.name, HumanRate(l.bytes_per_s),
                                    HumanBytes(l.total_bytes)));
  }
  for (const auto& [title, rates] :
       {std::pair{"BUSIEST FILES", &f.files}, std::pair{"BUSIEST DIRECTORIES", &f.directories}}) {
    lines.push_back("");
    lines.push_back(absl::StrCat(title, " (read/s)"));
    for (const TopRate& r : *rates) {
      lines.push_back(absl::StrFormat("%-13s %s", HumanRate(r.bytes_per_s), r.name));
    }
  }
  lines.push_back("");
  lines.push_back("FINDINGS (last window, most important first)");
  if (f.findings.empty()) lines.push_back("none");
  for (const TopFinding& x : f.findings) {
    lines.push_back(absl::StrCat(x.id, ": ", x.summary.empty() ? x.title : x.summary));
  }
  std::string out;
  for (std::string& l : lines) {
    if (width > 0 && static_cast<int>(l.size()) > width) l.resize(width);
    absl::StrAppend(&out, l, "\n");
  }
  return out;
}

std::string TopMetrics(const TopFigures& f, MetricsFormat format) {
  const bool om = format == MetricsFormat::kOpenMetrics;
  std::string out;
  const std::string job = absl::StrCat("job=\"", LabelValue(f.job), "\"");
  // A family: its HELP and TYPE lines, then its samples.
  auto family = [&](const std::string& name, const char* type, const char* help) {
    // OpenMetrics names a counter's family without its _total suffix.
    std::string family_name = name;
    if (om && std::string_view(type) == "counter") family_name.resize(name.size() - 6);
    absl::StrAppend(&out, "# HELP ", family_name, " ", help, "\n# TYPE ", family_name, " ", type,
                    "\n");
  };
  auto sample = [&](const std::string& name, const std::string& labels, double v) {
    absl::StrAppend(&out, name, "{", labels, "} ", Number(v), "\n");
  };
  auto trainer_labels = [&](const TopTrainer& t) {
    return absl::StrCat(job, ",host=\"", LabelValue(t.host), "\",rank=\"", t.rank,
                        "\",role=\"trainer\"");
  };
  family("iotap_window_seconds", "gauge", "Length of the window the gauges are over.");
  sample("iotap_window_seconds", job, f.window_s);
  family("iotap_window_end_seconds", "gauge", "End of the window, seconds from the run's start.");
  sample("iotap_window_end_seconds", job, f.end_s);
  // The job's figures, those of the one-line form.
  family("iotap_job_data_stall_ratio", "gauge",
         "Share of the training steps' time spent waiting for data over the window (0..1).");
  if (f.stall >= 0) sample("iotap_job_data_stall_ratio", job, f.stall);
  family("iotap_job_data_wait_split_ratio", "gauge",
         "Share of the job's data wait that was fetch, prep or other, over the window.");
  if (f.stall >= 0) {
    for (const auto& [part, share] :
         {std::pair{"fetch", f.fetch_share}, std::pair{"prep", f.prep_share},
          std::pair{"other", f.other_share}}) {
      sample("iotap_job_data_wait_split_ratio", absl::StrCat(job, ",part=\"", part, "\""), share);
    }
  }
  family("iotap_job_steps_per_second", "gauge",
         "Training steps of every rank per second over the window.");
  sample("iotap_job_steps_per_second", job, f.steps_per_s);
  family("iotap_job_read_bytes_per_second", "gauge",
         "Bytes read per second over the window, at the lowest layer (POSIX, STDIO, GDS).");
  sample("iotap_job_read_bytes_per_second", job, f.read_bytes_per_s);
  family("iotap_data_stall_ratio", "gauge",
         "Share of step time the trainer waited for data over the window (0..1).");
  for (const TopTrainer& t : f.trainers) {
    if (t.window.Stall() >= 0)
      sample("iotap_data_stall_ratio", trainer_labels(t), t.window.Stall());
  }
  family("iotap_data_wait_split_ratio", "gauge",
         "Share of the data wait that was fetch, prep or other, over the window.");
  for (const TopTrainer& t : f.trainers) {
    if (t.window.wait_s <= 0) continue;
    for (const auto& [part, s] :
         {std::pair{"fetch", t.window.fetch_s}, std::pair{"prep", t.window.prep_s},
          std::pair{"other", t.window.other_s}}) {
      sample("iotap_data_wait_split_ratio", absl::StrCat(trainer_labels(t), ",part=\"", part, "\""),
             s / t.window.wait_s);
    }
  }
  family("iotap_steps_per_second", "gauge", "Training steps per second over the window.");
  for (const TopTrainer& t : f.trainers) {
    sample("iotap_steps_per_second", trainer_labels(t), PerSecond(t.window.steps, f.window_s));
  }
  family("iotap_steps_total", "counter", "Training steps since the start.");
  for (const TopTrainer& t : f.trainers)
    sample("iotap_steps_total", trainer_labels(t), t.total.steps);
  family("iotap_data_wait_seconds_total", "counter",
         "Time the trainer waited for data since the start.");
  for (const TopTrainer& t : f.trainers) {
    sample("iotap_data_wait_seconds_total", trainer_labels(t), t.total.wait_s);
  }
  family("iotap_read_bytes_per_second", "gauge",
         "Bytes read per second over the window, by layer.");
  for (const TopRate& l : f.layers) {
    sample("iotap_read_bytes_per_second", absl::StrCat(job, ",layer=\"", l.name, "\""),
           l.bytes_per_s);
  }
  family("iotap_read_bytes_total", "counter", "Bytes read since the start, by layer.");
  for (const TopRate& l : f.layers) {
    sample("iotap_read_bytes_total", absl::StrCat(job, ",layer=\"", l.name, "\""), l.total_bytes);
  }
  family("iotap_cpu_cores", "gauge", "CPU cores in use over the window's counted steps, by role.");
  sample("iotap_cpu_cores", absl::StrCat(job, ",role=\"loader\""), f.loader_cores);
  sample("iotap_cpu_cores", absl::StrCat(job, ",role=\"trainer\""), f.trainer_cores);
  family("iotap_finding", "gauge",
         "1 for each finding that holds over the window; rank 1 is the most important.");
  for (size_t i = 0; i < f.findings.size(); ++i) {
    sample("iotap_finding",
           absl::StrCat(job, ",id=\"", LabelValue(f.findings[i].id), "\",order=\"", i + 1, "\""),
           1);
  }
  if (om) out += "# EOF\n";
  return out;
}

}  // namespace iotap::analyzer
