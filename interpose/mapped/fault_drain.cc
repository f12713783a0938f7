// The writer's side of the page-fault sampler: empties a thread's two sample
// buffers, pairs each fault's begin sample with its major-fault sample,
// places the faults in the data mappings, measures their spans (or, where
// no look can be made, estimates them) and writes them as OP_MAPPED_READ
// events of that thread.

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/core/clock.h"
#include "interpose/core/config.h"
#include "interpose/core/ops.h"
#include "interpose/core/raw_syscall.h"
#include "interpose/core/recorder.h"
#include "interpose/file/kept_fd.h"
#include "interpose/file/writer.h"
#include "interpose/mapped/fault_sampler_internal.h"
#include "interpose/mapped/fault_spans.h"
#include "interpose/mapped/mappings.h"
#include "interpose/mapped/pagemap.h"
#include "interpose/mapped/proc_maps.h"

namespace iotap::interpose::faults {

namespace {

constexpr uint64_t kPageSize = 4096;
constexpr uint64_t kRegionPages = kMaxRegionPages;  // one page table: 2 MiB of 4 KiB pages
// A fault without a successor is held at most this long for its major
// sample; a major fault that takes longer shows as a minor fault and a
// major one of unknown start.
constexpr uint64_t kHoldNs = 1000000000ull;
// Faults may be resolved this long after they happened (held ones, and the
// poll interval): removed mappings older than that are not needed.
constexpr uint64_t kResolveWindowNs = 2 * kHoldNs;
// Sequence numbers of sampled events start here (trace.proto, OP_MAPPED_READ).
constexpr uint64_t kFirstSampledSeq = uint64_t{1} << 39;
// Page-table regions whose credited pages (fault_spans.h) are remembered:
// 1 GiB of mappings. A region whose entry another took is looked at afresh:
// its pages mapped before may be given out again.
constexpr size_t kCreditRegions = 512;

// A drain takes the held samples, a retired buffer's and a grown one's.
constexpr size_t kMaxBegins =
    SampleCapacity(kGrownBeginPages) + SampleCapacity(kBeginPages) + kMaxHeld;
constexpr size_t kMaxMajors = kMajorCapacity;
constexpr size_t kMaxSnapshot = kMaxMappings + kRemovedHistory;

// A fault placed in a data mapping, before its span is known. The mapping
// is a copy: a later fault of the same drain may make the drain take a new
// snapshot of the mappings, which moves them.
struct Placed {
  uint64_t addr;
  uint64_t begin_ns;
  uint64_t end_ns;
  DataMapping mapping;
  bool major;
};

bool SameMapping(const DataMapping& a, const DataMapping& b) {
  return a.start == b.start && a.added_ns == b.added_ns;
}

// The faults [first, end) of `order` that fell in one page table of one
// mapping, the part of it in the mapping, and what a look found there.
struct Region {
  size_t first, end;
  uint64_t window_start;
  uint32_t pages;
  int look;  // index into Scratch::present, -1: not looked at
  // The pages [look_first, look_end) of the region that the look read.
  uint32_t look_first, look_end;
  bool estimate;  // not looked at: spans estimated by the fault-around rule
};

// Pending faults' pages kept for one drain at most (the rest are not
// fences: their pages may go to a written fault's span).
constexpr size_t kMaxPending = 4096;

// The pages of one region of one mapping given to faults at earlier looks.
struct RegionCredit {
  uint64_t window_start;  // 0: unused
  uintptr_t mapping_start;
  uint64_t mapping_added_ns;
  bool credited[kRegionPages];
};

// Writer-owned scratch (the writer lock guards all of it).
struct Scratch {
  Sample begins[kMaxBegins];
  Sample majors[kMaxMajors];
  Placed placed[kMaxBegins + kMaxMajors];
  uint64_t order[kMaxBegins + kMaxMajors];
  RawEvent events[kMaxBegins + kMaxMajors];
  DataMapping snapshot[kMaxSnapshot];
  size_t snapshot_size;
  uint64_t snapshot_version;
  uint64_t snapshot_max_length;
  uint64_t next_seq;
  // The regions of one WriteFaults: looked at first, shared out after; one
  // region's faults' pages and spans (static: the writer thread's stack is
  // 256 KiB).
  Region regions[kMaxBegins + kMaxMajors];
  uint32_t fault_pages[kMaxBegins + kMaxMajors];
  uint32_t looked_pages[kMaxBegins + kMaxMajors];
  PageSpan spans[kMaxBegins + kMaxMajors];
  bool present[kMaxPagemapReads][kRegionPages];
  bool estimated[kRegionPages];  // one region's pages mapped by the estimate
  // Pages of faults taken before the looks and not written with them.
  uint64_t pending[kMaxPending];
  size_t pending_size;
  uint32_t region_pending[kMaxPending];  // those of one region, from its start
  KeptFd pagemap;
  PagemapMethod pagemap_method;  // kScan (0) until the kernel refuses it
  RegionCredit credits[kCreditRegions];
  bool credits_taken;  // whether any entry of `credits` was, since the last reset
};
constinit Scratch g_scratch = {};

void TakeSnapshot(uint64_t now_ns) {
  Scratch& s = g_scratch;
  s.snapshot_version = DataMappingsVersion();
  s.snapshot_size = SnapshotDataMappings(now_ns - kResolveWindowNs, s.snapshot, kMaxSnapshot);
  s.snapshot_max_length = 0;
  for (size_t i = 0; i < s.snapshot_size; ++i) {
    if (s.snapshot[i].length > s.snapshot_max_length) s.snapshot_max_length = s.snapshot[i].length;
  }
}

const DataMapping* Place(uint64_t addr, uint64_t time_ns) {
  const Scratch& s = g_scratch;
  return FindDataMapping(s.snapshot, s.snapshot_size, s.snapshot_max_length, addr, time_ns);
}

void Copy(const uint8_t* data, uint64_t size, uint64_t at, void* out, size_t n) {
  uint64_t off = at % size;
  size_t first = n < size - off ? n : static_cast<size_t>(size - off);
  memcpy(out, data + off, first);
  if (first < n) memcpy(static_cast<uint8_t*>(out) + first, data, n - first);
}

// Calls `on_sample(Sample)` for each sample record of `b` from its tail to
// its head, and returns the head reached; counts the kernel's lost records
// into the sampler, and sets `*lost`, when `count_lost`.
template <typename OnSample>
uint64_t WalkBuffer(const Buffer& b, bool count_lost, OnSample on_sample,
                    bool* lost_any = nullptr) {
  perf_event_mmap_page* h = b.page;
  uint64_t head = __atomic_load_n(&h->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = h->data_tail;
  const uint8_t* data = reinterpret_cast<const uint8_t*>(h) + h->data_offset;
  uint64_t size = h->data_size;
  uint64_t lost = 0;
  while (tail < head) {
    uint8_t record[64];
    struct perf_event_header hdr;
    Copy(data, size, tail, &hdr, sizeof(hdr));
    if (hdr.size < sizeof(hdr) || hdr.size > head - tail) break;
    size_t len = hdr.size < sizeof(record) ? hdr.size : sizeof(record);
    Copy(data, size, tail, record, len);
    if (hdr.type == PERF_RECORD_SAMPLE && len >= 32) {
      uint64_t fields[3];
      memcpy(fields, record + 8, sizeof(fields));  // pid/tid, time, addr
      on_sample(Sample{fields[1], fields[2]});
    } else if (hdr.type == PERF_RECORD_LOST && len >= 24) {
      uint64_t count;
      memcpy(&count, record + 16, sizeof(count));
      lost += count;
    }
    tail += hdr.size;
  }
  if (count_lost && lost != 0) {
    g_sampler.lost.fetch_add(lost, std::memory_order_relaxed);
    if (lost_any != nullptr) *lost_any = true;
  }
  return head;
}

// Takes every record of `b` into `out` (at most `cap` samples).
size_t ReadBuffer(const Buffer& b, Sample* out, size_t cap, bool* lost = nullptr) {
  size_t n = 0;
  uint64_t head = WalkBuffer(
      b, /*count_lost=*/true,
      [&](const Sample& x) {
        if (n < cap) out[n++] = x;
      },
      lost);
  __atomic_store_n(&b.page->data_tail, head, __ATOMIC_RELEASE);
  return n;
}

// Samples of the successor's first faults a retired buffer's are checked
// against: the two sample together only between the successor's opening
// and the drain right after it (GrowBegin), a few faults.
constexpr size_t kMaxOverlap = 256;

// Takes the samples of `slot`'s retired begin buffer into `out` (at most
// `cap`) and unmaps it. Both buffers sampled the faults taken after the
// successor was enabled: a retired sample taken after the successor was
// opened is left out where the successor has a sample of its page. All of
// the retired buffer's samples come before the successor's, so the order
// of time is kept.
size_t TakeRetired(Slot* slot, Sample* out, size_t cap, bool* lost) {
  uint64_t seen[kMaxOverlap];
  size_t k = 0;
  WalkBuffer(slot->begin, /*count_lost=*/false, [&](const Sample& x) {
    if (k < kMaxOverlap) seen[k++] = x.addr / kPageSize;
  });
  size_t n = 0;
  WalkBuffer(
      slot->retired, /*count_lost=*/true,
      [&](const Sample& x) {
        if (x.time_ns >= slot->retired_at) {
          for (size_t i = 0; i < k; ++i) {
            if (seen[i] == x.addr / kPageSize) return;
          }
        }
        if (n < cap) out[n++] = x;
      },
      lost);
  RawSyscall(SYS_munmap, slot->retired.page, slot->retired.bytes);
  slot->retired = Buffer();
  return n;
}

// Collects the pages of the faults every thread has taken and no drain has
// written yet: those held for their major samples, and those still in the
// begin buffers (read, not taken: their own drain takes them).
void CollectPending() {
  Scratch& s = g_scratch;
  s.pending_size = 0;
  auto add = [&](const Sample& x) {
    if (s.pending_size < kMaxPending) s.pending[s.pending_size++] = x.addr / kPageSize;
  };
  for (Slot& slot : g_sampler.used()) {
    if (slot.state.load(std::memory_order_acquire) != kSlotLive) continue;
    for (uint32_t i = 0; i < slot.held_count; ++i) add(slot.held[i]);
    if (slot.retired.page != nullptr) WalkBuffer(slot.retired, /*count_lost=*/false, add);
    if (slot.begin.page != nullptr) WalkBuffer(slot.begin, /*count_lost=*/false, add);
  }
}

// Heapsort of `n` keys.
void SortKeys(uint64_t* keys, size_t n) {
  auto sift = [&](size_t root, size_t end) {
    for (;;) {
      size_t child = 2 * root + 1;
      if (child >= end) return;
      if (child + 1 < end && keys[child + 1] > keys[child]) ++child;
      if (keys[root] >= keys[child]) return;
      uint64_t t = keys[root];
      keys[root] = keys[child];
      keys[child] = t;
      root = child;
    }
  };
  for (size_t i = n / 2; i-- > 0;) sift(i, n);
  for (size_t end = n; end > 1; --end) {
    uint64_t t = keys[0];
    keys[0] = keys[end - 1];
    keys[end - 1] = t;
    sift(0, end - 1);
  }
}

// Which of the pages [first, first+n) of this process are mapped, from
// /proc/self/pagemap (pagemap.h). False if it cannot be read.
bool ReadPresent(uint64_t first_page, uint32_t n, bool* present) {
  Scratch& s = g_scratch;
  int fd = s.pagemap.Get();
  if (fd < 0) {
    int opened = static_cast<int>(
        RawSyscall(SYS_openat, AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    if (opened < 0) return false;
    if (!s.pagemap.Adopt(opened)) {
      RawSyscall(SYS_close, opened);
      return false;
    }
    fd = s.pagemap.Get();
    if (fd < 0) return false;
  }
  if (g_config.no_pagemap_scan) s.pagemap_method = PagemapMethod::kRead;
  return ReadPresentPages(fd, first_page, n, present, &s.pagemap_method);
}

// The credited pages of the region at `window_start` of mapping `m`: kept
// in a table indexed by the region's address, a fresh entry when another
// region (or an earlier mapping at the same address) had it.
RegionCredit& CreditEntry(uint64_t window_start) {
  return g_scratch.credits[(window_start / (kRegionPages * kPageSize)) % kCreditRegions];
}
bool Holds(const RegionCredit& c, uint64_t window_start, const DataMapping& m) {
  return c.window_start == window_start && c.mapping_start == m.start &&
         c.mapping_added_ns == m.added_ns;
}
bool* CreditsOf(uint64_t window_start, const DataMapping& m) {
  RegionCredit& c = CreditEntry(window_start);
  if (!Holds(c, window_start, m)) {
    c.window_start = window_start;
    g_scratch.credits_taken = true;
    c.mapping_start = m.start;
    c.mapping_added_ns = m.added_ns;
    memset(c.credited, 0, sizeof(c.credited));
  }
  return c.credited;
}

// Reads which pages of region `r` are mapped (into `present`, indexed from
// the region's start) for its faults between addresses `lo` and `hi` of
// mapping `m`: only the part around them (FaultsLookRange), widened where a
// run may reach past it (WidenLook). Reading the whole region instead
// walked 512 entries where a widening walks a few dozen: a memmap
// DataLoader's writer spent half its time in pagemap.
bool Look(Region& r, uint64_t lo, uint64_t hi, const DataMapping& m, bool* present) {
  LookRange range =
      FaultsLookRange(static_cast<uint32_t>((lo - r.window_start) / kPageSize),
                      static_cast<uint32_t>((hi - r.window_start) / kPageSize), r.pages);
  const uint64_t region_page = r.window_start / kPageSize;
  auto read = [&](uint32_t first, uint32_t end) {
    return ReadPresent(region_page + first, end - first, present + first);
  };
  if (!read(range.first, range.end)) return false;
  // The credits as they are, without taking the table's entry (CreditsOf
  // would clear another region's that shares it): none if it is another's.
  const RegionCredit& c = CreditEntry(r.window_start);
  if (!WidenLook(present, Holds(c, r.window_start, m) ? c.credited : nullptr, &range, r.pages,
                 read)) {
    return false;
  }
  r.look_first = range.first;
  r.look_end = range.end;
  return true;
}

// The index of region `r`'s first page in its page table: the kernel
// aligns fault-around windows there.
uint32_t TableFirst(const Region& r) {
  return static_cast<uint32_t>((r.window_start / kPageSize) % kRegionPages);
}

// Fills `e` for the span [first, end) of pages of `window_start` (an
// address inside mapping `m`).
void FillSpan(RawEvent* e, const Placed& p, uint64_t window_start, const PageSpan& span) {
  const DataMapping& m = p.mapping;
  uint64_t lo = window_start + span.first * kPageSize;
  uint64_t hi = window_start + span.end * kPageSize;
  uint64_t map_end = m.start + m.length;
  if (lo < m.start) lo = m.start;
  if (hi > map_end) hi = map_end;
  if (hi < lo) hi = lo;
  *e = RawEvent{.t0 = p.begin_ns,
                .t1 = p.end_ns,
                .offset = m.offset + static_cast<int64_t>(lo - m.start),
                .requested = kPageSize,
                .result = static_cast<int64_t>(hi - lo),
                .aux = static_cast<uint64_t>(m.offset + static_cast<int64_t>(p.addr - m.start)),
                .parent = 0,
                .file = m.file,
                .op = kOpMappedRead,
                .error = 0,
                .flags = static_cast<uint16_t>(kFlagHasOffset | (p.major ? kFlagMajorFault : 0) |
                                               (span.measured ? 0 : kFlagIncomplete))};
}

// Measures the spans of the `n` placed faults and writes them as events of
// `tid`. Every region is looked at before the pending faults are collected,
// so that a fault that mapped pages before a look is either written now or
// known as pending. Returns how many regions wanted a look (some may have
// gone without: kMaxPagemapReads).
uint32_t WriteFaults(uint32_t tid, size_t n) {
  Scratch& s = g_scratch;
  if (n == 0) return 0;
  for (size_t i = 0; i < n; ++i) s.order[i] = (s.placed[i].addr / kPageSize) << 16 | i;
  SortKeys(s.order, n);
  auto placed_at = [&](size_t k) -> const Placed& { return s.placed[s.order[k] & 0xffff]; };
  size_t regions = 0;
  int looks = 0;
  uint32_t wanted = 0;
  for (size_t i = 0; i < n;) {
    // One page table of one mapping: [window_start, window_end).
    const DataMapping* m = &placed_at(i).mapping;
    uint64_t region = placed_at(i).addr / (kRegionPages * kPageSize);
    size_t j = i;
    while (j < n && SameMapping(placed_at(j).mapping, *m) &&
           placed_at(j).addr / (kRegionPages * kPageSize) == region) {
      ++j;
    }
    uint64_t window_start = region * kRegionPages * kPageSize;
    uint64_t window_end = window_start + kRegionPages * kPageSize;
    uint64_t map_first = m->start / kPageSize * kPageSize;
    uint64_t map_end = (m->start + m->length + kPageSize - 1) / kPageSize * kPageSize;
    if (window_start < map_first) window_start = map_first;
    if (window_end > map_end) window_end = map_end;
    Region& r = s.regions[regions++];
    r = Region{.first = i,
               .end = j,
               .window_start = window_start,
               .pages = static_cast<uint32_t>((window_end - window_start) / kPageSize),
               .look = -1,
               .look_first = 0,
               .look_end = 0,
               .estimate = false};
    const bool live = m->removed_ns == UINT64_MAX;
    if (live) ++wanted;
    if (!live || looks >= kMaxPagemapReads ||
        !Look(r, placed_at(i).addr, placed_at(j - 1).addr, *m, s.present[looks])) {
      // No look could be made (the mapping is gone, the drain's looks are
      // spent, pagemap refused): the fault-around rule's estimate.
      r.estimate = true;
    } else {
      r.look = looks++;
    }
    i = j;
  }
  if (looks > 0) CollectPending();
  for (size_t ri = 0; ri < regions; ++ri) {
    const Region& r = s.regions[ri];
    uint32_t* fault_pages = s.fault_pages;
    PageSpan* spans = s.spans;
    for (size_t k = r.first; k < r.end; ++k) {
      fault_pages[k - r.first] =
          static_cast<uint32_t>((placed_at(k).addr - r.window_start) / kPageSize);
    }
    if (r.look >= 0) {
      // The part of the region the look read, from its first page.
      uint32_t* pending = s.region_pending;
      size_t pending_k = 0;
      uint64_t first_page = r.window_start / kPageSize + r.look_first;
      const uint32_t look_pages = r.look_end - r.look_first;
      for (size_t p = 0; p < s.pending_size; ++p) {
        if (s.pending[p] >= first_page && s.pending[p] < first_page + look_pages) {
          pending[pending_k++] = static_cast<uint32_t>(s.pending[p] - first_page);
        }
      }
      uint32_t* looked_pages = s.looked_pages;
      for (size_t k = 0; k < r.end - r.first; ++k) looked_pages[k] = fault_pages[k] - r.look_first;
      bool* credited = CreditsOf(r.window_start, placed_at(r.first).mapping);
      ShareSpans(s.present[r.look] + r.look_first, credited + r.look_first, look_pages,
                 looked_pages, r.end - r.first, pending, pending_k, spans);
      for (size_t k = 0; k < r.end - r.first; ++k) {
        spans[k].first += r.look_first;
        spans[k].end += r.look_first;
      }
    } else if (r.estimate) {
      // The pages fault-around maps where the file is cached in small
      // folios (MarkWindows), less those earlier spans were given, shared
      // out as a look's would be: estimated, not measured (FLAG_INCOMPLETE),
      // and, unlike the nominal window each, no page counted twice. A fault
      // on a page given out before shows its window unmapped since
      // (reclaimed): its credits are dropped.
      bool* credited = CreditsOf(r.window_start, placed_at(r.first).mapping);
      for (size_t k = 0; k < r.end - r.first; ++k) {
        if (!credited[fault_pages[k]]) continue;
        PageSpan stale = NominalSpan(fault_pages[k], r.pages, TableFirst(r));
        memset(credited + stale.first, 0, stale.end - stale.first);
      }
      memcpy(s.estimated, credited, r.pages);
      MarkWindows(fault_pages, r.end - r.first, r.pages, TableFirst(r), s.estimated);
      ShareSpans(s.estimated, credited, r.pages, fault_pages, r.end - r.first, nullptr, 0, spans);
      for (size_t k = 0; k < r.end - r.first; ++k) spans[k].measured = false;
    }
    for (size_t k = r.first; k < r.end; ++k) {
      size_t idx = s.order[k] & 0xffff;
      // (A look that found the fault's own page unmapped, reclaimed
      // already, leaves it the nominal window.)
      PageSpan span = (r.look >= 0 && spans[k - r.first].measured) || r.estimate
                          ? spans[k - r.first]
                          : NominalSpan(fault_pages[k - r.first], r.pages, TableFirst(r));
      FillSpan(&s.events[idx], s.placed[idx], r.window_start, span);
    }
  }
  WriteSampledChunk(tid, s.events, static_cast<uint32_t>(n), s.next_seq);
  s.next_seq += n;
  return wanted;
}

}  // namespace

Drained DrainSlot(Slot* slot, uint64_t now_ns, bool final) {
  Scratch& s = g_scratch;
  if (s.next_seq == 0) s.next_seq = kFirstSampledSeq;
  // Majors first, then begins: a fault whose successor began before `cut`
  // has completed, and its major sample, if any, was written before `cut`.
  uint64_t cut = MonotonicNs();
  Drained drained;
  size_t majors = ReadBuffer(slot->major, s.majors, kMaxMajors, &drained.majors_lost);
  drained.majors = majors;
  size_t begins = slot->held_count;
  memcpy(s.begins, slot->held, begins * sizeof(Sample));
  if (slot->retired.page != nullptr) {
    begins += TakeRetired(slot, s.begins + begins, kMaxBegins - begins, &drained.lost);
  }
  size_t fresh = ReadBuffer(slot->begin, s.begins + begins, kMaxBegins - begins, &drained.lost);
  drained.fresh = fresh;
  begins += fresh;
  slot->held_count = 0;
  if (DataMappingsVersion() != s.snapshot_version || s.snapshot_size == 0) TakeSnapshot(now_ns);

  size_t placed = 0;
  int queries = kMaxMapsQueries;
  auto place = [&](uint64_t addr, uint64_t begin_ns, uint64_t end_ns, bool major) {
    const DataMapping* m = Place(addr, begin_ns);
    if (m == nullptr) {
      int before = queries;
      bool learned = LearnMappingAt(addr, now_ns, &queries);
      // One question asked (not the whole of /proc/self/maps read, which
      // answers every miss at once): the poll keeps these under the cap.
      if (queries == before - 1) ++drained.queries;
      if (learned) {
        TakeSnapshot(now_ns);
        m = Place(addr, begin_ns);
      }
    }
    if (m != nullptr) s.placed[placed++] = Placed{addr, begin_ns, end_ns, *m, major};
  };
  size_t j = 0;
  for (size_t i = 0; i < begins; ++i) {
    const Sample& b = s.begins[i];
    bool has_next = i + 1 < begins && s.begins[i + 1].time_ns < cut;
    uint64_t next_ns = has_next ? s.begins[i + 1].time_ns : UINT64_MAX;
    // Major samples before this fault began: their begin was not sampled.
    for (; j < majors && s.majors[j].time_ns < b.time_ns; ++j) {
      place(s.majors[j].addr, s.majors[j].time_ns, s.majors[j].time_ns, true);
    }
    if (j < majors && s.majors[j].time_ns < next_ns &&
        s.majors[j].addr / kPageSize == b.addr / kPageSize) {
      place(b.addr, b.time_ns, s.majors[j].time_ns, true);
      ++j;
    } else if (has_next || final || b.time_ns + kHoldNs <= now_ns ||
               slot->held_count == kMaxHeld) {
      // (Not now_ns - b.time_ns: the drain's time is taken before it reads
      // the buffers, and a fault that began since would seem held for ages,
      // its major sample coming later alone.)
      place(b.addr, b.time_ns, b.time_ns, false);
    } else {
      slot->held[slot->held_count++] = b;
    }
  }
  for (; j < majors; ++j) place(s.majors[j].addr, s.majors[j].time_ns, s.majors[j].time_ns, true);
  drained.looks = WriteFaults(static_cast<uint32_t>(slot->tid), placed);
  return drained;
}

void WriteStatus() {
  uint32_t mode = g_sampler.mode.load(std::memory_order_acquire);
  if (mode == kIdle && g_sampler.threads_sampled.load(std::memory_order_relaxed) == 0) return;
  WritePacketLocked(
      [](WireWriter* w, void*) {
        size_t packet = w->BeginNested(1);
        size_t f = w->BeginNested(11);
        w->Varint(1, MonotonicNs());
        bool counters = g_sampler.mode.load(std::memory_order_relaxed) == kCounters;
        w->Varint(2, counters ? 2 : 1);
        if (g_sampler.note[0] != '\0') w->String(3, g_sampler.note);
        w->Varint(4, kPageSize);
        w->VarintIfNonZero(5, g_sampler.lost.load(std::memory_order_relaxed));
        w->VarintIfNonZero(6, g_sampler.threads_sampled.load(std::memory_order_relaxed));
        w->EndNested(f);
        w->EndNested(packet);
      },
      nullptr);
}

void ResetDrainInChild() {
  g_scratch.pagemap.Close();
  ForgetProcMapsInChild();
  // The child's faults are its own: pages the parent's faults were given are
  // not the child's (fork copies no page table of a mapping of a file alone,
  // so the child faults them in again).
  // (Only where the parent took any: the table is 1,024 regions' pages, and
  // touching it would fault in each page in every child.)
  if (!g_scratch.credits_taken) return;
  for (RegionCredit& c : g_scratch.credits) c.window_start = 0;
  g_scratch.credits_taken = false;
}

}  // namespace iotap::interpose::faults
