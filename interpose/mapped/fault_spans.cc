#include "interpose/mapped/fault_spans.h"

namespace iotap::interpose {

namespace {

constexpr uint32_t kFaultAroundPages = 16;

}  // namespace

void ShareSpans(const bool* present, bool* credited, uint32_t n, const uint32_t* fault_pages,
                size_t k, const uint32_t* pending_pages, size_t pending_k, PageSpan* spans) {
  if (n > kMaxRegionPages) n = kMaxRegionPages;
  bool pending[kMaxRegionPages];
  for (uint32_t i = 0; i < n; ++i) {
    credited[i] = credited[i] && present[i];
    pending[i] = false;
  }
  for (size_t i = 0; i < pending_k; ++i) {
    if (pending_pages[i] < n) pending[pending_pages[i]] = true;
  }
  // A page a run may take: mapped, given to no one yet, and no pending
  // fault's own.
  auto free = [&](uint32_t i) { return present[i] && !credited[i] && !pending[i]; };
  size_t j = 0;
  while (j < k) {
    uint32_t page = fault_pages[j];
    if (page >= n || !present[page]) {
      spans[j] = PageSpan{page, page + 1, false};
      ++j;
      continue;
    }
    if (credited[page]) {
      // An earlier look found the page mapped and gave it to an earlier
      // fault, while this one was held for its major sample.
      spans[j] = PageSpan{page, page, true};
      ++j;
      continue;
    }
    // The run of mapped pages around this fault, and the faults inside it.
    uint32_t run_first = page;
    while (run_first > 0 && free(run_first - 1)) --run_first;
    // Reached a pending fault's page: the pages after it are that fault's,
    // up to this one.
    if (run_first > 0 && pending[run_first - 1] && present[run_first - 1] &&
        !credited[run_first - 1]) {
      run_first = page;
    }
    uint32_t run_end = page + 1;
    while (run_end < n && free(run_end)) ++run_end;
    size_t last = j;
    while (last + 1 < k && fault_pages[last + 1] < run_end) ++last;
    uint32_t from = run_first;
    for (size_t i = j; i <= last; ++i) {
      uint32_t p = fault_pages[i];
      if (i > j && p == fault_pages[i - 1]) {
        spans[i] = PageSpan{p, p + 1, true};
        continue;
      }
      uint32_t to = run_end;
      for (size_t next = i + 1; next <= last; ++next) {
        if (fault_pages[next] != p) {
          to = fault_pages[next];
          break;
        }
      }
      spans[i] = PageSpan{from, to, true};
      from = to;
    }
    for (uint32_t i = run_first; i < run_end; ++i) credited[i] = true;
    j = last + 1;
  }
}

LookRange FaultsLookRange(uint32_t first_fault, uint32_t last_fault, uint32_t n) {
  uint32_t first = first_fault / kFaultAroundPages * kFaultAroundPages;
  first = first > 0 ? first - 1 : 0;
  uint32_t end = last_fault / kFaultAroundPages * kFaultAroundPages + kFaultAroundPages + 1;
  return LookRange{first < n ? first : n, end < n ? end : n};
}

bool RunMayLeave(const bool* present, const bool* credited, LookRange range, uint32_t n) {
  auto open = [&](uint32_t page) {
    return present[page] && !(credited != nullptr && credited[page]);
  };
  return (range.first > 0 && range.first < range.end && open(range.first)) ||
         (range.end < n && range.end > range.first && open(range.end - 1));
}

PageSpan NominalSpan(uint32_t page, uint32_t n, uint32_t table_first) {
  const uint32_t in_table = table_first + page;
  const uint32_t window = in_table - in_table % kFaultAroundPages;
  uint32_t first = window > table_first ? window - table_first : 0;
  uint32_t end = window + kFaultAroundPages - table_first;
  return PageSpan{first, end < n ? end : n, false};
}

void MarkWindows(const uint32_t* pages, size_t k, uint32_t n, uint32_t table_first,
                 bool* present) {
  for (size_t i = 0; i < k; ++i) {
    if (pages[i] >= n) continue;
    PageSpan w = NominalSpan(pages[i], n, table_first);
    for (uint32_t p = w.first; p < w.end; ++p) present[p] = true;
  }
}

}  // namespace iotap::interpose
