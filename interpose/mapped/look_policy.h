// Whether the writer looks at a region's page table for its faults' spans,
// or predicts them by the fault-around rule.
//
// A look (fault_spans.h, pagemap.h) is a system call per page-table region
// a drain's faults fell in. A DataLoader worker reading shuffled samples of
// a memmap takes a region per sample: about 1,600 looks an epoch of 2,048
// samples, two thirds of the writer's time (2.9 us of writer CPU a fault on
// the test VM, most of it the call's fixed cost). Where the page cache holds
// the file in small folios, nearly every look finds what the kernel's
// fault-around rule says (MarkWindows): each fault mapped its 64 KiB window,
// less the pages already mapped.
//
// So the writer checks the rule on the regions it looks at, and once
// kTrustAfter checks in a row have found it held, predicts the spans of the
// regions that follow and looks at one in kCheckEvery only, checking again.
// A check that finds it broken (a cold page cache: fault-around maps only
// cached pages; large folios, which a fault maps whole; pages reclaimed)
// takes the trust back: every region is looked at again until kTrustAfter
// checks in a row hold. Regions with a major fault, or a fault on a page an
// earlier span was given (reclaimed since), are always looked at and are no
// checks. Predicted spans carry FLAG_INCOMPLETE (estimated), as do the
// spans of regions no look could be made for (the mapping gone before the
// drain, the drain's looks spent), which the rule estimates too;
// IOTAP_MAPPED_SPANS=measure turns prediction off.
//
//   LookPolicy policy;
//   if (policy.WantsLook()) {
//     ... look, and compare with the rule's prediction ...
//     policy.Checked(held);
//   } else {
//     ... predict ...
//   }

#ifndef IOTAP_INTERPOSE_MAPPED_LOOK_POLICY_H_
#define IOTAP_INTERPOSE_MAPPED_LOOK_POLICY_H_

#include <stdint.h>

namespace iotap::interpose::faults {

class LookPolicy {
 public:
  static constexpr uint32_t kTrustAfter = 32;
  static constexpr uint32_t kCheckEvery = 8;

  // Whether the next region whose spans could be predicted is to be looked
  // at (and the rule checked with Checked) rather than predicted.
  bool WantsLook() {
    if (!Trusted()) return true;
    if (++since_check_ < kCheckEvery) return false;
    since_check_ = 0;
    return true;
  }

  // Whether the rule may stand in for a look.
  bool Trusted() const { return streak_ >= kTrustAfter; }

  // What a look found of the rule's prediction of a region WantsLook gave
  // it.
  void Checked(bool held) {
    if (held) {
      if (streak_ < kTrustAfter) ++streak_;
      return;
    }
    streak_ = 0;
    since_check_ = 0;
  }

 private:
  uint32_t streak_ = 0;       // checks in a row that held, up to kTrustAfter
  uint32_t since_check_ = 0;  // regions predicted since the last check
};

}  // namespace iotap::interpose::faults

#endif  // IOTAP_INTERPOSE_MAPPED_LOOK_POLICY_H_
