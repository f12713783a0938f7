// Rules about reads no system call shows (issue 15): page faults in file
// mappings (the MAPPED layer: a fault's time is non-zero only when it waited
// for storage).

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "analyzer/base/numbers.h"
#include "analyzer/base/text.h"
#include "analyzer/findings/findings_internal.h"

namespace iotap::analyzer::internal {

namespace {

const report::Layer* FindLayer(const Report& r, const std::string& name) {
  for (const report::Layer& l : r.layers()) {
    if (l.name() == name) return &l;
  }
  return nullptr;
}

// Data waits caused by page faults that read a memory-mapped dataset from
// storage: the faults' own time is most of the time spent reading data.
std::optional<Result> MappedReadsStorage(const Context& c) {
  const report::Layer* mapped = FindLayer(c.report(), "MAPPED");
  if (mapped == nullptr || mapped->time_s() < c.T("min_fault_time_s", 0.05)) return std::nullopt;
  double read_time = std::max(c.report().data_files().read_time_s(), mapped->time_s());
  double share = Ratio(mapped->time_s(), read_time);
  if (share < c.T("min_share_of_read_time", 0.5)) return std::nullopt;
  Result res;
  double fetch = c.steps_known() ? FetchSeconds(c.report()) * share : 0;
  res.score = c.steps_known() ? fetch : mapped->time_s();
  res.severity = c.Impact(res.score, Ratio(mapped->busy_s(), c.run_s()));
  std::string waited =
      c.steps_known() ? absl::StrFormat("; training waited %s for data while loaders faulted",
                                        HumanDuration(fetch))
                      : "";
  res.values = {{"span", HumanBytes(mapped->read_bytes())},
                {"faults", absl::StrCat(static_cast<int64_t>(mapped->reads()))},
                {"fault_time", HumanDuration(mapped->time_s())},
                {"share", Pct(share)},
                {"waited", waited}};
  AddEvidence(res, "time in page faults that read from storage", mapped->time_s(), "s",
              HumanDuration(mapped->time_s()));
  AddEvidence(res, "page faults in data mappings", mapped->reads(), "faults",
              absl::StrFormat("%d faults mapping %s", static_cast<int64_t>(mapped->reads()),
                              HumanBytes(mapped->read_bytes())));
  AddEvidence(res, "share of data read time spent in page faults", share, "share", Pct(share));
  if (c.steps_known()) {
    AddEvidence(res, "time the trainers waited while loaders faulted", fetch, "s",
                HumanDuration(fetch));
  }
  return res;
}

}  // namespace

void RegisterMappedRules(std::map<std::string, RuleFn>* rules) {
  (*rules)["mapped_reads_storage"] = MappedReadsStorage;
}

}  // namespace iotap::analyzer::internal
