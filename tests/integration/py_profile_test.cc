// The report's Python profile of a real job: examples/imagefolder/train.py
// under `iotap run --torch-steps` (which samples Python stacks by default),
// with 2 DataLoader workers started by fork.
// - Heavy transforms on small PNGs: the top cost of preparation is the
//   transform class that the example's own timer
//   (IMAGEFOLDER_TRANSFORM_TIMES: each transform's thread CPU time, and the
//   worker's CPU time) says costs most, with a share within 10 points of the
//   timer's. (The smaller transforms may be further off: see README, "What
//   it costs", for the spread measured, with the signal sampler and with the
//   GIL sampler, which charges C code that holds the GIL to what follows.)
// - Large JPEGs with a light transform (a centre crop): decoding comes first.
// The preparation-bound findings name the top costs.

#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <string>

#include "analyzer/analysis/run_analysis.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

namespace fs = std::filesystem;

std::string TrainScript() { return SourcePath("examples/imagefolder/train.py"); }

struct Job {
  std::string format;
  int images;
  int size;
  std::string transform;
};

struct Outcome {
  report::Report report;
  // The timer's figures, summed over the workers: CPU ns per transform
  // class, "loader" (the dataset's loader: open, decode, convert) and
  // "process_cpu_ns" (the workers' CPU time).
  std::map<std::string, double> timed;
};

Outcome RunJob(const Job& job) {
  TempDir dir;
  std::string data = dir.Sub("images");
  RunResult g = RunProgram({Python(), TrainScript(), "--data", data, "--generate-only", "--images",
                            std::to_string(job.images), "--image-size", std::to_string(job.size),
                            "--format", job.format});
  EXPECT_EQ(g.exit_code, 0) << g.err;
  std::string times = dir.Sub("times");
  fs::create_directory(times);
  RunOptions o;
  o.env["IMAGEFOLDER_TRANSFORM_TIMES"] = times;
  RunResult r = RunProgram({IotapBinary(), "run", "-o", dir.Sub("trace"), "--torch-steps", "--",
                            Python(), TrainScript(), "--data", data, "--num-workers", "2",
                            "--transform-cost", job.transform, "--batch-size", "25"},
                           o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  Outcome out;
  analyzer::AnalysisOptions options;
  absl::StatusOr<report::Report> rep = analyzer::AnalyzeRun(dir.Sub("trace"), options);
  EXPECT_TRUE(rep.ok()) << rep.status();
  if (rep.ok()) out.report = *rep;
  std::regex entry("\"([A-Za-z_]+)\": ([0-9]+)");
  for (const auto& f : fs::directory_iterator(times)) {
    std::string text = ReadFile(f.path().string());
    for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it) {
      out.timed[(*it)[1]] += std::stod((*it)[2]);
    }
  }
  return out;
}

const report::PyProfile* Profile(const Outcome& o) {
  if (o.report.py_profiles_size() != 1) return nullptr;
  return &o.report.py_profiles(0);
}

std::string Costs(const report::PyProfile& p) {
  std::string s;
  for (const report::PyCost& c : p.prep_costs()) {
    s += c.name() + " " + std::to_string(c.share()) + "; ";
  }
  return s;
}

const report::Finding* PrepFinding(const report::Report& r) {
  for (const report::Finding& f : r.findings()) {
    if (f.id() == "data_stall_prep" || f.id() == "too_few_workers") return &f;
  }
  return nullptr;
}

TEST(PyProfileTest, HeavyTransformIsTheTopCostAtItsOwnShare) {
  // JPEGs: by the timers the blur costs about 31% and the loader 19%. With
  // PNGs of the same size the loader costs 25% against the blur's 28%, a
  // margin the samples' spread (a few points from run to run) can cross.
  // 3,000 images: with 1,200, the data waits held about 66 samples of the
  // workers (a binomial spread of 5.7 points at 31%), and the blur's share
  // came out from 25% to 45% in 19 runs, with either signal scheme
  // (py_signal.cc); with 3,000, from 29% to 36% in 8.
  Outcome o = RunJob({"jpeg", 3000, 96, "heavy"});
  const report::PyProfile* p = Profile(o);
  ASSERT_NE(p, nullptr) << o.report.py_profiles_size() << " profiles";
  EXPECT_EQ(p->scope(), "data waits");
  ASSERT_GT(p->prep_costs_size(), 0);
  ASSERT_GT(o.timed["process_cpu_ns"], 0);
  // The transform the timer says costs most.
  std::string slowest;
  for (const auto& [name, ns] : o.timed) {
    if (name == "process_cpu_ns" || name == "loader") continue;
    if (slowest.empty() || ns > o.timed[slowest]) slowest = name;
  }
  // The job is what the test says: the transform well ahead of decoding.
  // How far ahead depends on the machine (on a day this VM took 2 to 3 us
  // per page fault, the blur led the loader by 4.2 and 4.7 points of the
  // workers' CPU, under the samples' spread): a job that is not what the
  // test needs tells nothing of the report, so the test stands aside, as
  // PlantedSourcesTest.PrepBound does on a busy host.
  ASSERT_GT(o.timed["loader"], 0);
  const double margin = (o.timed[slowest] - o.timed["loader"]) / o.timed["process_cpu_ns"];
  if (margin <= 0.05) {
    GTEST_SKIP() << "by the example's own timer, " << slowest << " (" << o.timed[slowest]
                 << " ns) led the loader (" << o.timed["loader"] << " ns) by "
                 << 100 * margin << " points of the workers' CPU, not the 5 the test needs";
  }
  const report::PyCost& top = p->prep_costs(0);
  EXPECT_EQ(top.kind(), "transform") << Costs(*p);
  EXPECT_EQ(top.name(), slowest) << Costs(*p);
  EXPECT_NEAR(top.share(), o.timed[slowest] / o.timed["process_cpu_ns"], 0.10) << Costs(*p);
  // Every transform's figures, for the record (README, "What it costs").
  for (const auto& [name, ns] : o.timed) {
    if (name == "process_cpu_ns" || name == "loader") continue;
    double reported = 0;
    for (const report::PyCost& c : p->prep_costs()) {
      if (c.kind() == "transform" && c.name() == name) reported = c.share();
    }
    std::cout << name << ": " << 100 * reported << "% in the report, "
              << 100 * ns / o.timed["process_cpu_ns"] << "% by the timer\n";
  }
  // The loader (open, decode, convert) is split in the report between PIL
  // decoding and the dataset's __getitem__: its timer share, and the costs.
  std::cout << "loader: " << 100 * o.timed["loader"] / o.timed["process_cpu_ns"]
            << "% by the timer; the report's costs: " << Costs(*p) << "\n";
  const report::Finding* f = PrepFinding(o.report);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary().find(slowest), std::string::npos) << f->summary();
  EXPECT_NE(f->recommendation().find("GPU"), std::string::npos) << f->recommendation();
}

TEST(PyProfileTest, LargeJpegsMakeDecodingTheTopCost) {
  Outcome o = RunJob({"jpeg", 300, 640, "crop"});
  const report::PyProfile* p = Profile(o);
  ASSERT_NE(p, nullptr) << o.report.py_profiles_size() << " profiles";
  ASSERT_GT(p->prep_costs_size(), 0);
  EXPECT_EQ(p->prep_costs(0).kind(), "decoding") << Costs(*p);
  EXPECT_EQ(p->prep_costs(0).name(), "PIL decoding (ImageFile.load)") << Costs(*p);
  const report::Finding* f = PrepFinding(o.report);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary().find("PIL decoding"), std::string::npos) << f->summary();
  EXPECT_NE(f->recommendation().find("lower resolution"), std::string::npos)
      << f->recommendation();
}

}  // namespace
}  // namespace iotap::testing
