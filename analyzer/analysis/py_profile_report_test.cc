// The report's Python profile from synthetic traces: samples are cut to the
// trainer's data waits (preparation) and the rest of its steps (compute) by
// the share of their window inside, and grouped.

#include <filesystem>
#include <initializer_list>
#include <string>

#include "analyzer/analysis/run_analysis.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kMs = 1'000'000;

uint32_t Function(SyntheticProcess& p, const std::string& name, const std::string& file) {
  return p.Name(name + std::string(1, '\0') + file + std::string(1, '\0') + "10",
                InternedString::KIND_PY_FUNCTION);
}

// A sample of thread `tid` that used `cpu` over [start, end) ms.
void Sample(SyntheticProcess& p, uint32_t stack, int tid, int64_t start, int64_t end,
            int64_t cpu) {
  SyntheticProcess::EventSpec e;
  e.op = OP_PY_SAMPLE;
  e.start_ns = kT0 + start * kMs;
  e.end_ns = kT0 + end * kMs;
  e.file = stack;
  e.aux = static_cast<uint64_t>(tid);
  e.requested = static_cast<uint64_t>(cpu * kMs);
  e.flags = FLAG_EXPLICIT_TIMES;
  e.tid = static_cast<uint32_t>(tid + 1000);  // the sampler's thread
  p.Add(e);
}

TEST(PyProfileReportTest, SamplesAreCutToTheWaitsAndGrouped) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() /
                              ("iotap-pyprofile-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SyntheticProcess trainer(100, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  trainer.Marker(OP_STEP_BEGIN, kT0 + 10 * kMs, kT0 + 10 * kMs, 0);
  trainer.Marker(OP_DATA_WAIT, kT0 + 10 * kMs, kT0 + 20 * kMs, 0);
  trainer.Marker(OP_STEP_END, kT0 + 30 * kMs, kT0 + 30 * kMs, 0);
  uint32_t main = Function(trainer, "main", "/job/train.py");
  uint32_t backward = Function(trainer, "backward", "/x/torch/autograd/__init__.py");
  uint32_t next = Function(trainer, "__next__", "/x/torch/utils/data/dataloader.py");
  uint32_t in_backward =
      trainer.Name(Varints({main, 12, backward, 12}), InternedString::KIND_PY_STACK);
  uint32_t in_next = trainer.Name(Varints({main, 12, next, 12}), InternedString::KIND_PY_STACK);
  Sample(trainer, in_backward, 100, 22, 26, 4);  // compute
  Sample(trainer, in_next, 100, 12, 14, 2);      // in the wait: not compute
  trainer.End(EndOfTrace::REASON_EXIT, 0, kT0 + 40 * kMs);
  trainer.WriteTo((dir / "trainer.iotap").string());

  SyntheticProcess loader(101, 100, "/usr/bin/python3", {"python3", "train.py"}, kT0 + kMs,
                          ProcessHeader::ORIGIN_FORK);
  uint32_t loop = Function(loader, "_worker_loop", "/x/torch/utils/data/_utils/worker.py");
  uint32_t item = Function(loader, "DatasetFolder.__getitem__", "/x/torchvision/datasets/folder.py");
  uint32_t jitter =
      Function(loader, "ColorJitter.forward", "/x/torchvision/transforms/transforms.py");
  uint32_t load = Function(loader, "ImageFile.load", "/x/PIL/ImageFile.py");
  uint32_t in_jitter = loader.Name(Varints({loop, 12, item, 12, jitter, 12}),
                                   InternedString::KIND_PY_STACK);
  uint32_t in_load =
      loader.Name(Varints({loop, 12, item, 12, load, 12}), InternedString::KIND_PY_STACK);
  uint32_t in_item = loader.Name(Varints({loop, 12, item, 12}), InternedString::KIND_PY_STACK);
  Sample(loader, in_jitter, 101, 10, 14, 4);  // inside the wait
  Sample(loader, in_load, 101, 18, 22, 4);    // half inside
  Sample(loader, in_item, 101, 24, 26, 2);    // after it
  loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, kT0 + 40 * kMs);
  loader.WriteTo((dir / "loader.iotap").string());

  absl::StatusOr<report::Report> r = AnalyzeRun(dir.string(), AnalysisOptions());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->py_profiles_size(), 1);
  const report::PyProfile& p = r->py_profiles(0);
  EXPECT_EQ(p.trainer_pid(), 100);
  EXPECT_EQ(p.scope(), "data waits");
  EXPECT_NEAR(p.prep_cpu_s(), 0.006, 1e-9);
  EXPECT_NEAR(p.prep_samples(), 1.5, 1e-9);
  ASSERT_EQ(p.prep_costs_size(), 2);
  EXPECT_EQ(p.prep_costs(0).kind(), "transform");
  EXPECT_EQ(p.prep_costs(0).name(), "ColorJitter");
  EXPECT_NEAR(p.prep_costs(0).share(), 2.0 / 3, 1e-9);
  EXPECT_EQ(p.prep_costs(1).kind(), "decoding");
  EXPECT_NEAR(p.prep_costs(1).cpu_s(), 0.002, 1e-9);
  ASSERT_GE(p.prep_functions_size(), 3);
  EXPECT_EQ(p.prep_functions(0).function(), "ColorJitter.forward");
  EXPECT_NEAR(p.prep_functions(0).self_share(), 2.0 / 3, 1e-9);
  // Then the functions with no self time, by total, ties by name.
  ASSERT_GE(p.prep_functions_size(), 4);
  EXPECT_EQ(p.prep_functions(2).function(), "DatasetFolder.__getitem__");
  EXPECT_EQ(p.prep_functions(3).function(), "_worker_loop");
  EXPECT_NEAR(p.prep_functions(3).total_share(), 1, 1e-9);
  EXPECT_NEAR(p.compute_cpu_s(), 0.004, 1e-9);
  ASSERT_GE(p.compute_functions_size(), 1);
  EXPECT_EQ(p.compute_functions(0).function(), "backward");
  ASSERT_EQ(p.prep_stacks_size(), 2);
  EXPECT_NEAR(p.prep_stacks(0).cpu_s(), 0.004, 1e-9);
  ASSERT_EQ(p.prep_stacks(0).frames_size(), 3);
  EXPECT_EQ(p.prep_frame_names(p.prep_stacks(0).frames(2)), "ColorJitter.forward");
}

}  // namespace
}  // namespace iotap::analyzer
