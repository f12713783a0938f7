#include "analyzer/output/py_profile_output.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"

namespace iotap::analyzer {

namespace {

constexpr int kTextRows = 12;

std::string Pct(double share) { return absl::StrFormat("%.1f%%", share * 100); }

std::string Where(const report::PyFunctionCost& f) {
  std::string file = f.file();
  size_t slash = file.rfind('/');
  if (slash != std::string::npos) file = file.substr(slash + 1);
  return absl::StrCat(file, ":", f.line());
}

std::string Title(const report::PyProfile& p) {
  return p.scope() == "data waits"
             ? absl::StrFormat("trainer %d: the loaders' CPU during its data waits", p.trainer_pid())
             : absl::StrFormat("trainer %d: its loaders' CPU over the whole run (steps or waits "
                               "unknown)",
                               p.trainer_pid());
}

}  // namespace

std::string PyProfilesToText(const report::Report& r) {
  std::string out;
  for (const report::PyProfile& p : r.py_profiles()) {
    absl::StrAppendFormat(&out, "\nPython: what preparation costs, %s (%s sampled, %d samples)\n",
                          Title(p), HumanDuration(p.prep_cpu_s()),
                          static_cast<int64_t>(p.prep_samples() + 0.5));
    for (const report::PyCost& c : p.prep_costs()) {
      absl::StrAppendFormat(&out, "  %6s %9s  %-10s %s\n", Pct(c.share()), HumanDuration(c.cpu_s()),
                            c.kind(), DisplayName(c.name()));
    }
    if (p.prep_functions_size() > 0) {
      absl::StrAppend(&out, "  by function:    total     self\n");
      for (int i = 0; i < p.prep_functions_size() && i < kTextRows; ++i) {
        const report::PyFunctionCost& f = p.prep_functions(i);
        absl::StrAppendFormat(&out, "  %15s %8s  %s (%s)\n", Pct(f.total_share()),
                              Pct(f.self_share()), DisplayName(f.function()),
                              DisplayName(Where(f)));
      }
    }
    if (p.compute_functions_size() > 0) {
      absl::StrAppendFormat(&out, "\nPython: trainer %d's hot spots during compute (%s sampled)\n"
                                  "                   total     self\n",
                            p.trainer_pid(), HumanDuration(p.compute_cpu_s()));
      for (int i = 0; i < p.compute_functions_size() && i < kTextRows; ++i) {
        const report::PyFunctionCost& f = p.compute_functions(i);
        absl::StrAppendFormat(&out, "  %15s %8s  %s (%s)\n", Pct(f.total_share()),
                              Pct(f.self_share()), DisplayName(f.function()),
                              DisplayName(Where(f)));
      }
    }
  }
  return out;
}

std::string PyProfilesToMarkdown(const report::Report& r) {
  std::string out;
  for (const report::PyProfile& p : r.py_profiles()) {
    absl::StrAppendFormat(&out, "\n### Python: what preparation costs\n\n%s: %s sampled.\n\n"
                                "| share | CPU | kind | what |\n|---:|---:|---|---|\n",
                          MarkdownText(Title(p)), HumanDuration(p.prep_cpu_s()));
    for (const report::PyCost& c : p.prep_costs()) {
      absl::StrAppendFormat(&out, "| %s | %s | %s | %s |\n", Pct(c.share()),
                            HumanDuration(c.cpu_s()), c.kind(), MarkdownText(c.name()));
    }
    auto table = [&](const auto& rows) {
      absl::StrAppend(&out, "| total | self | function | where |\n|---:|---:|---|---|\n");
      for (int i = 0; i < rows.size() && i < kTextRows; ++i) {
        absl::StrAppendFormat(&out, "| %s | %s | %s | %s |\n", Pct(rows[i].total_share()),
                              Pct(rows[i].self_share()), MarkdownCode(rows[i].function()),
                              MarkdownText(Where(rows[i])));
      }
    };
    if (p.prep_functions_size() > 0) {
      absl::StrAppend(&out, "\nBy function:\n\n");
      table(p.prep_functions());
    }
    if (p.compute_functions_size() > 0) {
      absl::StrAppendFormat(&out, "\n### Python: trainer %d's hot spots during compute\n\n",
                            p.trainer_pid());
      table(p.compute_functions());
    }
  }
  return out;
}

}  // namespace iotap::analyzer
