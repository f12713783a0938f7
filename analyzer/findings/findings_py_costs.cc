// What the preparation-bound findings say about the Python code behind the
// wait, from the report's Python profiles (report::PyProfile): the two
// largest costs with their shares, and advice for the largest.

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/findings/findings_internal.h"

namespace iotap::analyzer::internal {

namespace {

std::string Share(double share) { return absl::StrFormat("%.0f%%", share * 100); }

std::string Advice(const report::PyCost& top) {
  if (top.kind() == "decoding") {
    return "Decoding costs most: decode at a lower resolution (PIL's Image.draft for JPEG, or "
           "store smaller images), decode on the GPU (torchvision.io.decode_jpeg on CUDA, NVIDIA "
           "DALI), or cache decoded samples. ";
  }
  if (top.kind() == "transform") {
    return absl::StrCat("The ", top.name(),
                        " transform costs most: move augmentation to the GPU (torchvision."
                        "transforms.v2 on batched tensors, NVIDIA DALI), make it cheaper (work on "
                        "smaller images, fewer random ops), or cache what it computes that does "
                        "not change between epochs. ");
  }
  if (top.kind() == "collate") {
    return "collate_fn costs most: return compact tensors from __getitem__ so batching copies "
           "less, or batch on the GPU. ";
  }
  if (top.kind() == "getitem") {
    return absl::StrCat(top.name(), " costs most: the Python profile's functions show where; "
                        "cache per-sample results that do not change between epochs. ");
  }
  return "";
}

}  // namespace

void AddPyCosts(const Report& r, Result* res) {
  const report::PyProfile* best = nullptr;
  for (const report::PyProfile& p : r.py_profiles()) {
    if (p.prep_costs_size() > 0 && (best == nullptr || p.prep_cpu_s() > best->prep_cpu_s())) {
      best = &p;
    }
  }
  if (best == nullptr) {
    res->values["costs"] = " (decoding, transforms)";
    res->values["advice"] = "";
    res->values["top_costs"] = "";
    return;
  }
  std::string costs;
  for (int i = 0; i < best->prep_costs_size() && i < 2; ++i) {
    const report::PyCost& c = best->prep_costs(i);
    absl::StrAppend(&costs, i > 0 ? ", " : "", Share(c.share()), " in ", c.name());
  }
  res->values["costs"] = absl::StrCat(": ", costs);
  res->values["top_costs"] = absl::StrCat(" Preparation's largest costs: ", costs, ".");
  res->values["advice"] = Advice(best->prep_costs(0));
  AddEvidence(*res, "largest preparation cost (Python samples)", best->prep_costs(0).share(),
              "share", absl::StrCat(Share(best->prep_costs(0).share()), " in ",
                                    best->prep_costs(0).name()));
}

}  // namespace iotap::analyzer::internal
