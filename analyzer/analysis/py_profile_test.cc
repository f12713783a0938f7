#include "analyzer/analysis/py_profile.h"

#include <string>
#include <vector>

#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

constexpr char kTv[] = "/usr/lib/python3/dist-packages/torchvision/transforms/transforms.py";
constexpr char kModule[] = "/usr/lib/python3/dist-packages/torch/nn/modules/module.py";
constexpr char kFolder[] = "/usr/lib/python3/dist-packages/torchvision/datasets/folder.py";
constexpr char kFetch[] = "/usr/lib/python3/dist-packages/torch/utils/data/_utils/fetch.py";

PyCostGroup Classify(const std::vector<PyFunction>& frames) {
  std::vector<const PyFunction*> stack;
  for (const PyFunction& f : frames) stack.push_back(&f);
  return ClassifyPyStack(stack);
}

const PyFunction kWorker{"_worker_loop", "/x/torch/utils/data/_utils/worker.py", 200};
const PyFunction kFetcher{"_MapDatasetFetcher.fetch", kFetch, 46};
const PyFunction kGetItem{"DatasetFolder.__getitem__", kFolder, 220};
const PyFunction kCompose{"Compose.__call__", kTv, 90};
const PyFunction kCallImpl{"Module._call_impl", kModule, 1180};

TEST(ClassifyPyStackTest, TransformByClass) {
  PyCostGroup g = Classify({kWorker, kFetcher, kGetItem, kCompose, kCallImpl,
                            {"ColorJitter.forward", kTv, 1200},
                            {"adjust_hue", "/x/torchvision/transforms/functional.py", 900},
                            {"Image.convert", "/x/PIL/Image.py", 870}});
  EXPECT_STREQ(g.kind, "transform");
  EXPECT_EQ(g.name, "ColorJitter");
}

TEST(ClassifyPyStackTest, UserTransformThatComposeCalls) {
  PyCostGroup g = Classify({kWorker, kGetItem, kCompose, {"MyAugment.__call__", "/job/aug.py", 3},
                            {"helper", "/job/aug.py", 30}});
  EXPECT_STREQ(g.kind, "transform");
  EXPECT_EQ(g.name, "MyAugment");
}

TEST(ClassifyPyStackTest, DecodingInsideATransformIsDecoding) {
  PyCostGroup g = Classify({kWorker, kGetItem, kCompose, kCallImpl,
                            {"RandomResizedCrop.forward", kTv, 900},
                            {"ImageFile.load", "/x/PIL/ImageFile.py", 155}});
  EXPECT_STREQ(g.kind, "decoding");
  EXPECT_EQ(g.name, "PIL decoding (ImageFile.load)");
}

TEST(ClassifyPyStackTest, CollateAndGetItemAndOther) {
  PyCostGroup collate = Classify(
      {kWorker, kFetcher, {"default_collate", "/x/torch/utils/data/_utils/collate.py", 84}});
  EXPECT_STREQ(collate.kind, "collate");
  PyCostGroup getitem =
      Classify({kWorker, kFetcher, kGetItem, {"pil_loader", kFolder, 240}, {"open", "/x/io.py", 1}});
  EXPECT_STREQ(getitem.kind, "getitem");
  EXPECT_EQ(getitem.name, "DatasetFolder.__getitem__ (the rest)");
  PyCostGroup other = Classify({kWorker, {"Queue.put", "/x/multiprocessing/queues.py", 80}});
  EXPECT_STREQ(other.kind, "other");
}

TEST(PySampleCollectorTest, AFunctionOnItsFirstLineCountsForItsCaller) {
  ProcessTrace p("trace");
  p.AddString(1, InternedString::KIND_PY_FUNCTION, std::string("main\0/a.py\0" "1", 12));
  p.AddString(2, InternedString::KIND_PY_FUNCTION, std::string("work\0/a.py\0" "10", 13));
  p.AddString(3, InternedString::KIND_PY_STACK, Varints({1, 5, 2, 10}));  // entering work
  p.AddString(4, InternedString::KIND_PY_STACK, Varints({1, 5, 2, 12}));  // inside work
  PySampleCollector c;
  Event e;
  e.op = OP_PY_SAMPLE;
  e.start_ns = 100;
  e.end_ns = 200;
  e.requested = 7;
  e.aux = 42;
  for (uint32_t stack : {3u, 4u}) {
    e.file = stack;
    c.OnEvent(p, e, 1000);
  }
  PySamples s = c.Take();
  ASSERT_EQ(s.samples.size(), 2u);
  EXPECT_EQ(s.samples[0].start_unix_ns, 1100);
  EXPECT_EQ(s.samples[0].cpu_ns, 7);
  EXPECT_EQ(s.samples[0].tid, 42u);
  ASSERT_EQ(s.stacks.size(), 2u);
  ASSERT_EQ(s.stacks[s.samples[0].stack].size(), 1u);
  EXPECT_EQ(s.functions[s.stacks[s.samples[0].stack][0]].name, "main");
  ASSERT_EQ(s.stacks[s.samples[1].stack].size(), 2u);
  EXPECT_EQ(s.functions[s.stacks[s.samples[1].stack][1]].name, "work");
}

TEST(ParsePyFunctionTest, SplitsNameFileAndLine) {
  PyFunction f = ParsePyFunction(std::string("A.b\0/f.py\0" "17", 12));
  EXPECT_EQ(f.name, "A.b");
  EXPECT_EQ(f.file, "/f.py");
  EXPECT_EQ(f.line, 17);
}

}  // namespace
}  // namespace iotap::analyzer
