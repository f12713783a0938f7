// A busy-time bitmap (accumulate/time_bitmap.h) in a partial run's stream
// (partial_wire.h, partial_run.h): the chunks that hold anything, in order,
// each as it is kept: its runs of set slots (a chunk Compact() left as runs:
// the gap since the run before and the length, a few bytes a run) or its
// words (runs of equal words).
//
//   PutBitmap(out, bitmap);
//   absl::Status merged = MergeBitmap(in, &run_bitmap);  // ORs it in
//
// A damaged stream fails MergeBitmap with what was wrong (a chunk past the
// longest run, out of order, a run past its chunk's end or not apart from
// the one before), never a huge allocation or a write out of bounds.

#ifndef IOTAP_ANALYZER_MERGE_BITMAP_WIRE_H_
#define IOTAP_ANALYZER_MERGE_BITMAP_WIRE_H_

#include "absl/status/status.h"
#include "analyzer/accumulate/time_bitmap.h"
#include "analyzer/merge/partial_wire.h"

namespace iotap::analyzer {

void PutBitmap(WireWriter& w, const TimeBitmap& b);

// ORs a bitmap PutBitmap wrote into `into` (same origin and resolution).
absl::Status MergeBitmap(WireReader& r, TimeBitmap* into);

}  // namespace iotap::analyzer

#endif  // IOTAP_ANALYZER_MERGE_BITMAP_WIRE_H_
