// Which pages of a range of the process's address space are mapped, from
// /proc/self/pagemap.
//
// The writer asks this about the pages around each sampled fault
// (fault_spans.h), a few dozen pages a look and a thousand looks a second
// for a DataLoader worker. Reading the pagemap file (one 8-byte entry per
// page, bit 63: present) makes the kernel look at each mapped page's
// `struct page` as well (anonymous or not, mapped once or more), which the
// faulting thread has just touched on another CPU. The PAGEMAP_SCAN ioctl
// of the same file (Linux 6.7 and later) asked for present pages alone
// walks the page table without them and answers with runs of pages: 1.7 us
// against 3.2 us for 50 pages of a memmap here, on the thread that touched
// them. Where the kernel lacks or refuses the ioctl, the file is read.
//
//   bool present[64];
//   if (ReadPresentPages(fd, addr / 4096, 64, present, &method)) { ... }

#ifndef IOTAP_INTERPOSE_MAPPED_PAGEMAP_H_
#define IOTAP_INTERPOSE_MAPPED_PAGEMAP_H_

#include <stdint.h>

namespace iotap::interpose {

enum class PagemapMethod {
  kScan,  // PAGEMAP_SCAN, until the kernel refuses it
  kRead,  // pread of the entries
};

// Fills present[i] for page first_page + i, i < n (at most kMaxRegionPages
// of fault_spans.h, one page table), from `fd`, /proc/self/pagemap.
// `method` is the way to try first; a kernel that will not scan (no
// PAGEMAP_SCAN, or a seccomp profile refusing it) sets it to kRead, once.
// False if the entries could not be read either.
bool ReadPresentPages(int fd, uint64_t first_page, uint32_t n, bool* present,
                      PagemapMethod* method);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_PAGEMAP_H_
