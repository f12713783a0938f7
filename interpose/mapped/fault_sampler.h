// Reads through file mappings: the page faults of every thread, sampled by
// the kernel (perf_event_open), turned into OP_MAPPED_READ events.
//
// A program that maps its data (numpy.memmap, LMDB, Arrow, safetensors)
// reads it by touching memory: no call the shim could wrap. The kernel can
// report each page fault a thread takes, with its address and time, into a
// buffer the process maps; the writer thread empties those buffers, keeps
// the faults that fell in a data mapping (mappings.h) and records each as a
// read of that file at that offset.
//
// Which threads: a perf event counts one thread. Inherited events would
// reach threads created later, but the kernel refuses to map the buffer of
// an inherited per-thread event (it would take one per CPU instead), and
// inheritance reaches only the threads the opening thread creates. So each
// thread gets its own pair of events: when the process maps its first data
// file, for every thread it has (/proc/self/task); afterwards, for each new
// thread as it starts (pthread_create's trampoline, posix/process.cc); in a
// forked child, for its one thread, if it inherited data mappings.
//
// The pair: every page fault (PERF_COUNT_SW_PAGE_FAULTS, sampled as the
// fault begins) and major faults (PERF_COUNT_SW_PAGE_FAULTS_MAJ, sampled as
// such a fault completes), each into its own small buffer. A major fault is
// the begin sample followed, on its thread, by a major sample for the same
// page; its duration is the time between them. Both count user-space faults
// only (exclude_kernel), as perf_event_paranoid 2 allows.
//
// Descriptors: none are kept. Each event's descriptor is closed as soon as
// its buffer is mapped (the mapping keeps the event alive), so the program's
// descriptor numbers stay its own; the events end when the writer unmaps
// their buffers. Without descriptors the events cannot be paused, so
// "enabled only while the process has data-file mappings" is kept by opening
// them at the first data mapping and closing them all once the process has
// had none for a second (a loader that maps a file per sample keeps them
// open).
//
// Where the kernel refuses (perf_event_paranoid above 2, a seccomp profile,
// no perf support) or the locked-memory limit leaves no room for a buffer,
// the shim says so once and samples per-thread fault and storage counters
// with the CPU samples instead (fault_counters.h); FaultSampling packets say
// which the run had.

#ifndef IOTAP_INTERPOSE_MAPPED_FAULT_SAMPLER_H_
#define IOTAP_INTERPOSE_MAPPED_FAULT_SAMPLER_H_

#include <stdint.h>

namespace iotap::interpose {

// A data mapping was just made (the mmap and mremap wrappers; busy set):
// starts watching faults if the process is not already. Cheap when it is.
void WatchFaults();

// A thread starts (pthread_create's trampoline): samples it too while the
// process is watched.
void FaultsThreadStarted();

// The writer's side (file/writer.h PolledSources), under the writer lock.
void DrainFaults(bool final);
void SampleFaults();
uint64_t FaultPollIntervalNs();

// Fork handlers (interpose/shim.cc). The sampler's lock is a leaf, held
// across fork. The child has none of the parent's buffers (the kernel does
// not copy them); FaultsAfterForkChild, once the child traces, watches its
// thread if it inherited data mappings, and starts the child's writer
// thread, which drains the buffers, at once: the child may touch its
// mappings without making any call the shim records.
void LockFaultsForFork();
void UnlockFaultsAfterFork(bool child);
void FaultsAfterForkChild();

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_MAPPED_FAULT_SAMPLER_H_
