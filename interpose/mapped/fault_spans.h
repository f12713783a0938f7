// How much of a file each sampled page fault brought into the process.
//
// The kernel maps more than the faulting page: fault-around maps the pages
// of the 64 KiB around it that are in the page cache, and recent kernels map
// a whole large folio at once. No sample says how much. The writer therefore
// looks, shortly after, at which pages of the fault's page table are mapped
// (/proc/self/pagemap) and shares each run of mapped pages out among the
// faults that fell in it: the first fault of a run from the run's start,
// each one up to the next fault, the last to the run's end.
//
// A region is looked at again and again while a program reads through it
// (each drain looks at the regions of the faults it holds), and the pages
// earlier faults mapped are still mapped at the next look. So that no page
// is given to two faults, the writer keeps, per region, the pages given out
// at earlier looks (`credited`): a run stops at them. A credited page that a
// look finds unmapped (reclaimed, unmapped) is credited no longer, so that
// the fault that maps it again counts it. Spans never overlap, then, and
// their union is what the faults mapped, whenever every fault was measured.
//
// Faults that happened before the look but are not written at it (the last
// one, held for its major sample; those the thread took while the writer
// read its buffers; other threads' not yet drained) are `pending`: a run
// stops at a pending fault's page, and the pages between a pending fault and
// the next fault stay ungiven for it, so that each fault still gets what it
// mapped when it is written at a later look.
//
//   bool present[512] = ...;                 // the region's pages, mapped or not
//   bool credited[512] = {};                 // kept from look to look
//   uint32_t pages[] = {3, 40};              // faults, sorted
//   uint32_t held[] = {60};                  // pending faults, sorted
//   PageSpan spans[2];
//   ShareSpans(present, credited, 512, pages, 2, held, 1, spans);  // {0, 40}, {40, 60}

#ifndef IOTAP_INTERPOSE_MAPPED_FAULT_SPANS_H_
#define IOTAP_INTERPOSE_MAPPED_FAULT_SPANS_H_

#include <stddef.h>
#include <stdint.h>

namespace iotap::interpose {

// Pages [first, end) of a region; `measured` is false when the fault's own
// page was not mapped when the shim looked (reclaimed already, or unmapped):
// the span is then that page alone.
struct PageSpan {
  uint32_t first;
  uint32_t end;
  bool measured;
};

// `present[i]` tells whether page i of the region (n pages) is mapped;
// `credited[i]` whether an earlier look gave it to a fault (updated: pages
// not present are cleared, the pages of the measured spans set). A run is
// made of present pages not credited; a fault whose own page is credited
// gets an empty span (measured): an earlier look saw the page mapped while
// the fault waited to be written, and gave it to an earlier fault.
// `fault_pages` are the pages the faults hit, ascending (repeats allowed: a
// repeated page, mapped again within one look, gets that page alone);
// `pending_pages` those of the pending faults (any order, pages outside the
// region ignored). Fills `spans[j]` for fault j. `n` is at most
// kMaxRegionPages.
inline constexpr uint32_t kMaxRegionPages = 512;
void ShareSpans(const bool* present, bool* credited, uint32_t n, const uint32_t* fault_pages,
                size_t k, const uint32_t* pending_pages, size_t pending_k, PageSpan* spans);

// The pages [first, end) of a region of `n` pages a look reads first for
// faults on pages `first_fault` to `last_fault` (ascending): the faults'
// fault-around windows and one page either side, which tells whether a run
// goes on past them (WidenLook reads further where one does). Reading all
// of /proc/self/pagemap for a region at every drain cost a memmap
// DataLoader's epoch 43 ms of kernel time; each entry read costs the writer
// a cache miss or two on the page tables and pages the faulting thread has
// just written (about 0.1 us), so a look reads no more than it must.
struct LookRange {
  uint32_t first;
  uint32_t end;
};
LookRange FaultsLookRange(uint32_t first_fault, uint32_t last_fault, uint32_t n);

// Whether a run of ShareSpans could reach past `range`: a page at either of
// its ends (other than the region's own ends) is present and not credited
// (`credited` null: none is). If not, ShareSpans over the range alone gives
// the spans it gives over the whole region; if so, the whole region must be
// read.
bool RunMayLeave(const bool* present, const bool* credited, LookRange range, uint32_t n);

// Widens `range` on each side through which a run may leave it
// (RunMayLeave) until none can, each step adding at least as many pages as
// the range held (and at least kMinWidening): `read(first, end)` fills
// present[first, end) for the pages a step adds and returns false if it
// cannot, when so does WidenLook. ShareSpans over the widened range then
// gives the spans it gives over the whole region, having read a few dozen
// pages where a reader of adjacent samples (whose pages before the faults
// are mapped) would otherwise make every look read all 512.
inline constexpr uint32_t kMinWidening = 32;
template <typename Read>
bool WidenLook(const bool* present, const bool* credited, LookRange* range, uint32_t n, Read read) {
  auto open = [&](uint32_t page) {
    return present[page] && !(credited != nullptr && credited[page]);
  };
  while (RunMayLeave(present, credited, *range, n)) {
    const uint32_t width = range->end - range->first;
    const uint32_t step = width > kMinWidening ? width : kMinWidening;
    if (range->first > 0 && open(range->first)) {
      uint32_t first = range->first > step ? range->first - step : 0;
      if (!read(first, range->first)) return false;
      range->first = first;
    }
    if (range->end < n && open(range->end - 1)) {
      uint32_t end = n - range->end > step ? range->end + step : n;
      if (!read(range->end, end)) return false;
      range->end = end;
    }
  }
  return true;
}

// The nominal fault-around window around `page` in a region of `n` pages
// whose first page is page `table_first` of its page table: the 16 pages
// (64 KiB of 4 KiB pages) that hold it, aligned in the page table as the
// kernel aligns them (not in the region, which starts where the mapping
// does), clipped to the region.
PageSpan NominalSpan(uint32_t page, uint32_t n, uint32_t table_first);

// Marks in present[0, n) the nominal window (NominalSpan) of each of the `k`
// pages (any order; pages past the region ignored): the pages the kernel
// maps for a fault there when the window is in the page cache in small
// folios. With present[] holding the region's pages mapped before (its
// credited pages), ShareSpans over the result gives the spans a look would
// give wherever the page cache is warm, no large folio is mapped whole past
// a window, and no credited page was reclaimed (fault_drain.cc estimates
// spans so where it cannot look).
void MarkWindows(const uint32_t* pages, size_t k, uint32_t n, uint32_t table_first, bool* present);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_FAULT_SPANS_H_
