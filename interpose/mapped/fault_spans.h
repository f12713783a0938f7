// How much of a file each sampled page fault brought into the process.
//
// The kernel maps more than the faulting page: fault-around maps the pages
// of the 64 KiB around it that are in the page cache, and recent kernels map
// a whole large folio at once. No sample says how much. The writer therefore
// looks, shortly after, at which pages of the fault's page table are mapped
// (/proc/self/pagemap) and shares each run of mapped pages out among the
// faults that fell in it: the first fault of a run from the run's start,
// each one up to the next fault, the last to the run's end. The spans of one
// look never overlap, and their union is what was mapped.
//
//   bool present[512] = ...;                 // the region's pages, mapped or not
//   uint32_t pages[] = {3, 40};              // faults, sorted
//   PageSpan spans[2];
//   ShareSpans(present, 512, pages, 2, spans);   // {0, 40}, {40, end of run}

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
// `fault_pages` are the pages the faults hit, ascending (repeats allowed: a
// repeated page gets that page alone). Fills `spans[j]` for fault j.
void ShareSpans(const bool* present, uint32_t n, const uint32_t* fault_pages, size_t k,
                PageSpan* spans);

// The nominal fault-around window around `page` in a region of `n` pages:
// the aligned 16 pages (64 KiB of 4 KiB pages) that hold it, clipped to the
// region.
PageSpan NominalSpan(uint32_t page, uint32_t n);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_FAULT_SPANS_H_
