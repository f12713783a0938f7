#include "analyzer/output/py_profile_output.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

report::Report WithProfile() {
  report::Report r;
  report::PyProfile* p = r.add_py_profiles();
  p->set_trainer_pid(42);
  p->set_scope("data waits");
  p->set_prep_cpu_s(2);
  p->set_prep_samples(200);
  report::PyCost* c = p->add_prep_costs();
  c->set_kind("transform");
  c->set_name("GaussianBlur");
  c->set_cpu_s(1.5);
  c->set_share(0.75);
  report::PyFunctionCost* f = p->add_prep_functions();
  f->set_function("gaussian_blur");
  f->set_file("/x/torchvision/transforms/functional.py");
  f->set_line(1306);
  f->set_self_share(0.5);
  f->set_total_share(0.75);
  *p->add_compute_functions() = *f;
  p->set_compute_cpu_s(1);
  return r;
}

TEST(PyProfileOutputTest, TextHasTheCostsTheFunctionsAndTheHotSpots) {
  std::string text = PyProfilesToText(WithProfile());
  EXPECT_NE(text.find("trainer 42: the loaders' CPU during its data waits (2.00 s sampled, 200 "
                      "samples)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  75.0%"), std::string::npos) << text;
  EXPECT_NE(text.find("transform  GaussianBlur\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gaussian_blur (functional.py:1306)"), std::string::npos) << text;
  EXPECT_NE(text.find("trainer 42's hot spots during compute"), std::string::npos) << text;
  EXPECT_EQ(PyProfilesToText(report::Report()), "");
}

TEST(PyProfileOutputTest, MarkdownEscapesNames) {
  report::Report r = WithProfile();
  r.mutable_py_profiles(0)->mutable_prep_costs(0)->set_name("<b>|x");
  std::string md = PyProfilesToMarkdown(r);
  EXPECT_EQ(md.find("<b>"), std::string::npos) << md;
  EXPECT_NE(md.find("| 75.0% |"), std::string::npos) << md;
}

}  // namespace
}  // namespace iotap::analyzer
