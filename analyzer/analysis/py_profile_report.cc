// The report's Python profiles (report::PyProfile): the stack samples of each
// trainer's group, weighed by the CPU time they stand for and cut to the
// trainer's data waits (preparation) and the rest of its steps (compute).

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "analyzer/analysis/py_profile.h"
#include "analyzer/analysis/run_state.h"

namespace iotap::analyzer::run_state {

namespace {

constexpr int kTopFunctions = 30;  // by self time
constexpr int kTopTotals = 10;     // and functions with no self time, by total
constexpr int kTopStacks = 400;

// Sorted, disjoint windows.
std::vector<TimeWindow> Merged(std::vector<TimeWindow> w) {
  std::sort(w.begin(), w.end(),
            [](const TimeWindow& a, const TimeWindow& b) { return a.start_ns < b.start_ns; });
  std::vector<TimeWindow> out;
  for (const TimeWindow& x : w) {
    if (x.end_ns <= x.start_ns) continue;
    if (!out.empty() && x.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, x.end_ns);
    } else {
      out.push_back(x);
    }
  }
  return out;
}

// Nanoseconds of [start, end) inside `windows`.
int64_t Overlap(const std::vector<TimeWindow>& windows, int64_t start, int64_t end) {
  auto it = std::upper_bound(windows.begin(), windows.end(), start,
                             [](int64_t t, const TimeWindow& w) { return t < w.end_ns; });
  int64_t total = 0;
  for (; it != windows.end() && it->start_ns < end; ++it) {
    total += std::min(end, it->end_ns) - std::max(start, it->start_ns);
  }
  return total;
}

bool Inside(const std::vector<TimeWindow>& windows, int64_t t) {
  auto it = std::upper_bound(windows.begin(), windows.end(), t,
                             [](int64_t x, const TimeWindow& w) { return x < w.end_ns; });
  return it != windows.end() && it->start_ns <= t;
}

// Samples of several processes, by stack of run-wide function indices.
class Profile {
 public:
  explicit Profile(std::vector<PyFunction>* functions,
                   absl::flat_hash_map<std::string, uint32_t>* index)
      : functions_(functions), index_(index) {}

  // Adds `p`'s samples, each weighed by its CPU time times the share of its
  // window that `keep` gives (1 for all).
  template <typename Keep>
  void Add(const PySamples& p, Keep keep) {
    std::vector<double> by_stack(p.stacks.size(), 0);
    std::vector<double> count(p.stacks.size(), 0);
    for (const PySample& s : p.samples) {
      double share = keep(s);
      if (share <= 0) continue;
      by_stack[s.stack] += static_cast<double>(s.cpu_ns) * share;
      count[s.stack] += share;
    }
    std::vector<uint32_t> local(p.functions.size(), UINT32_MAX);
    for (size_t i = 0; i < p.stacks.size(); ++i) {
      if (by_stack[i] <= 0) continue;
      std::vector<uint32_t> frames;
      for (uint32_t f : p.stacks[i]) {
        if (local[f] == UINT32_MAX) local[f] = Intern(p.functions[f]);
        frames.push_back(local[f]);
      }
      stacks_[frames] += by_stack[i];
      total_ns_ += by_stack[i];
      samples_ += count[i];
    }
  }

  double total_ns() const { return total_ns_; }
  double samples() const { return samples_; }
  const std::map<std::vector<uint32_t>, double>& stacks() const { return stacks_; }

 private:
  uint32_t Intern(const PyFunction& f) {
    std::string key = absl::StrCat(f.name, "\n", f.file, "\n", f.line);
    auto [it, inserted] = index_->try_emplace(key, static_cast<uint32_t>(functions_->size()));
    if (inserted) functions_->push_back(f);
    return it->second;
  }

  std::vector<PyFunction>* functions_;
  absl::flat_hash_map<std::string, uint32_t>* index_;
  std::map<std::vector<uint32_t>, double> stacks_;
  double total_ns_ = 0;
  double samples_ = 0;
};

void FillFunctions(const Profile& p, const std::vector<PyFunction>& functions, int top,
                   google::protobuf::RepeatedPtrField<report::PyFunctionCost>* out) {
  std::map<uint32_t, std::pair<double, double>> cost;  // self, total
  for (const auto& [stack, ns] : p.stacks()) {
    cost[stack.back()].first += ns;
    std::vector<uint32_t> seen = stack;
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (uint32_t f : seen) cost[f].second += ns;
  }
  // The hot spots (most self time) first, then the largest totals not among
  // them (the frames that hold the hot spots: __getitem__, the worker loop).
  std::vector<std::pair<uint32_t, std::pair<double, double>>> all(cost.begin(), cost.end());
  // Ties by name, so that the order does not depend on the sort.
  auto name = [&](const auto& row) -> const std::string& { return functions[row.first].name; };
  std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    if (a.second != b.second) {
      return std::tie(a.second.first, a.second.second) >
             std::tie(b.second.first, b.second.second);
    }
    return name(a) < name(b);
  });
  std::vector<std::pair<uint32_t, std::pair<double, double>>> rows;
  for (const auto& row : all) {
    if (row.second.first > 0 && static_cast<int>(rows.size()) < top) rows.push_back(row);
  }
  std::sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    if (a.second.second != b.second.second) return a.second.second > b.second.second;
    return name(a) < name(b);
  });
  for (const auto& row : all) {
    if (static_cast<int>(rows.size()) >= top + kTopTotals) break;
    if (row.second.first <= 0) rows.push_back(row);
  }
  for (int i = 0; i < static_cast<int>(rows.size()); ++i) {
    const PyFunction& f = functions[rows[i].first];
    report::PyFunctionCost* c = out->Add();
    c->set_function(f.name);
    c->set_file(f.file);
    c->set_line(f.line);
    c->set_self_s(rows[i].second.first / 1e9);
    c->set_total_s(rows[i].second.second / 1e9);
    c->set_self_share(rows[i].second.first / p.total_ns());
    c->set_total_share(rows[i].second.second / p.total_ns());
  }
}

void FillPrep(const Profile& p, const std::vector<PyFunction>& functions,
              report::PyProfile* out) {
  out->set_prep_cpu_s(p.total_ns() / 1e9);
  out->set_prep_samples(p.samples());
  if (p.total_ns() <= 0) return;
  std::map<std::pair<std::string, std::string>, double> groups;  // (name, kind)
  std::vector<const PyFunction*> frames;
  for (const auto& [stack, ns] : p.stacks()) {
    frames.clear();
    for (uint32_t f : stack) frames.push_back(&functions[f]);
    PyCostGroup g = ClassifyPyStack(frames);
    groups[{g.name, g.kind}] += ns;
  }
  std::vector<std::pair<double, std::pair<std::string, std::string>>> rows;
  for (const auto& [key, ns] : groups) rows.push_back({ns, key});
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a > b; });
  for (const auto& [ns, key] : rows) {
    report::PyCost* c = out->add_prep_costs();
    c->set_name(key.first);
    c->set_kind(key.second);
    c->set_cpu_s(ns / 1e9);
    c->set_share(ns / p.total_ns());
  }
  FillFunctions(p, functions, kTopFunctions, out->mutable_prep_functions());
  // The flame graph: the heaviest stacks, by function name.
  std::vector<std::pair<double, const std::vector<uint32_t>*>> stacks;
  for (const auto& [stack, ns] : p.stacks()) stacks.push_back({ns, &stack});
  std::sort(stacks.begin(), stacks.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  if (stacks.size() > kTopStacks) stacks.resize(kTopStacks);
  std::map<std::string, uint32_t> names;
  for (const auto& [ns, stack] : stacks) {
    report::PyStackCost* s = out->add_prep_stacks();
    s->set_cpu_s(ns / 1e9);
    for (uint32_t f : *stack) {
      auto [it, inserted] = names.try_emplace(functions[f].name, names.size());
      if (inserted) out->add_prep_frame_names(functions[f].name);
      s->add_frames(it->second);
    }
  }
}

double Share(const std::vector<TimeWindow>& windows, const PySample& s) {
  if (s.end_unix_ns > s.start_unix_ns) {
    return static_cast<double>(Overlap(windows, s.start_unix_ns, s.end_unix_ns)) /
           static_cast<double>(s.end_unix_ns - s.start_unix_ns);
  }
  return Inside(windows, s.end_unix_ns) ? 1 : 0;
}

void AddSamplingNotes(RunState& s) {
  std::vector<std::string> silent;
  std::map<std::string, std::vector<std::string>> unavailable;
  std::map<std::string, std::vector<std::string>> with_gil;
  for (size_t i = 0; i < s.catalog.entries.size() && i < s.py_samples.size(); ++i) {
    const ProcessHeader& h = s.catalog.entries[i].header;
    const PySamples& p = s.py_samples[i];
    if (!p.with_gil.empty()) with_gil[p.with_gil].push_back(absl::StrCat(h.pid()));
    if (!p.unavailable.empty()) {
      unavailable[p.unavailable].push_back(absl::StrCat(h.pid()));
    } else if (h.py_sample_hz() > 0 && !p.started && s.read_ok[i] &&
               s.catalog.entries[i].role != report::HELPER) {
      // Trainers and loaders only: under --torch-steps a Python helper
      // process that never imports torch is not sampled, by design.
      std::string exe = h.executable();
      std::string base = exe.substr(exe.rfind('/') + 1);
      if (absl::StartsWith(base, "python")) silent.push_back(absl::StrCat(h.pid()));
    }
  }
  std::vector<std::string>& notes = s.notes;
  for (const auto& [why, pids] : unavailable) {
    notes.push_back(absl::StrCat("Python stack samples unavailable in process(es) ",
                                 absl::StrJoin(pids, ", "), ": ", why));
  }
  for (const auto& [why, pids] : with_gil) {
    notes.push_back(absl::StrCat(
        "Python stack samples of process(es) ", absl::StrJoin(pids, ", "),
        " were taken with the GIL (", why,
        "): CPU time in C code that holds the GIL (PIL's filters and resizing, some "
        "decoders) is counted for the Python code that runs after it, so such a "
        "transform can show below its share and the next one above"));
  }
  if (!silent.empty()) {
    notes.push_back(absl::StrCat(
        "Python process(es) ", absl::StrJoin(silent, ", "),
        " recorded no stack samples: the interpreter did not run iotap's sitecustomize "
        "(python -S or -I, or PYTHONPATH reset), so their code is missing from the "
        "Python profiles"));
  }
}

}  // namespace

void ComputePyProfile(const RunState& s, const TrainerGroup& g, GroupResult* out) {
  if (g.trainer < 0 || static_cast<size_t>(g.trainer) >= s.py_samples.size()) return;
  std::vector<TimeWindow> waits, steps;
  bool waits_known = false;
  for (const StepSpan& span : g.steps) {
    waits_known = waits_known || span.has_data_wait;
    waits.insert(waits.end(), span.data_waits.begin(), span.data_waits.end());
    steps.push_back(TimeWindow{span.start_ns, span.end_ns});
  }
  waits = Merged(std::move(waits));
  steps = Merged(std::move(steps));
  std::vector<PyFunction> functions;
  absl::flat_hash_map<std::string, uint32_t> index_of;
  Profile prep(&functions, &index_of), compute(&functions, &index_of);
  const PySamples& trainer = s.py_samples[g.trainer];
  std::vector<int> preparers = g.loaders;
  if (preparers.empty()) preparers.push_back(g.trainer);
  for (int l : preparers) {
    if (static_cast<size_t>(l) >= s.py_samples.size()) continue;
    if (waits_known) {
      prep.Add(s.py_samples[l], [&](const PySample& x) { return Share(waits, x); });
    } else {
      prep.Add(s.py_samples[l], [](const PySample&) { return 1.0; });
    }
  }
  if (waits_known) {
    compute.Add(trainer, [&](const PySample& x) {
      return std::max(0.0, Share(steps, x) - Share(waits, x));
    });
  } else {
    compute.Add(trainer, [](const PySample&) { return 1.0; });
  }
  if (prep.samples() <= 0 && compute.samples() <= 0) return;
  report::PyProfile* p = &out->py_profile.emplace();
  p->set_trainer_pid(s.catalog.entries[g.trainer].header.pid());
  p->set_scope(waits_known ? "data waits" : "whole run");
  FillPrep(prep, functions, p);
  p->set_compute_cpu_s(compute.total_ns() / 1e9);
  p->set_compute_samples(compute.samples());
  if (compute.total_ns() > 0) {
    FillFunctions(compute, functions, kTopFunctions, p->mutable_compute_functions());
  }
}

void BuildPyProfiles(RunState& s, report::Report* r) {
  AddSamplingNotes(s);
  for (const auto& [index, g] : s.groups) {
    std::optional<report::PyProfile>& profile = s.results.at(index).py_profile;
    if (profile.has_value()) *r->add_py_profiles() = std::move(*profile);
    profile.reset();
  }
}

}  // namespace iotap::analyzer::run_state
