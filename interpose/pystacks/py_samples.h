// Recording one Python stack sample and the sampler's states: the bodies of
// iotap_py_sample and iotap_py_sampler, for the shim's own sampler loop
// (iotap_py_run_sampler in py_stacks.cc) as well.
//
//   if (RecordPySample(tid, stack_id, cpu_ns, start_ns, end_ns, generation) == 0) { ... }
//   RecordPySamplerState(kPySamplerWithGil, 100, "why");

#ifndef IOTAP_INTERPOSE_PYSTACKS_PY_SAMPLES_H_
#define IOTAP_INTERPOSE_PYSTACKS_PY_SAMPLES_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "interpose/core/strings.h"

namespace iotap::interpose {

// Records OP_PY_SAMPLE on the calling thread: thread `tid` ran interned
// stack `stack` of string table generation `generation` and used `cpu_ns`
// between the two CLOCK_MONOTONIC times. 0 if recorded, 1 if the generation
// is no longer the table's, -1 if not recorded (bad arguments, tracing off,
// event dropped).
int RecordPySample(pid_t tid, uint32_t stack, int64_t cpu_ns, int64_t start_monotonic_ns,
                   int64_t end_monotonic_ns, uint32_t generation);

// Interns a function or stack for the shim's samplers (the calling thread
// marked busy meanwhile, so that the table's own calls are not traced).
// The id, or 0.
uint32_t InternForSampler(const char* bytes, size_t n, StringKind kind);

// The sampler's states, OP_PY_SAMPLER's `result` (trace.proto, iotap.h).
constexpr int kPySamplerStarted = 1;
constexpr int kPySamplerUnavailable = 2;
constexpr int kPySamplerBySignal = 3;
constexpr int kPySamplerWithGil = 4;

// Records OP_PY_SAMPLER: `state`, `samples_per_cpu_second` and `note` (a
// KIND_MARK string; null or empty for none). 0 if recorded, -1 if not.
int RecordPySamplerState(int state, int64_t samples_per_cpu_second, const char* note);

}  // namespace iotap::interpose

#endif  // IOTAP_INTERPOSE_PYSTACKS_PY_SAMPLES_H_
