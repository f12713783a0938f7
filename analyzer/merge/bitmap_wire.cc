#include "analyzer/merge/bitmap_wire.h"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace iotap::analyzer {

namespace {

enum Form : uint64_t { kWordsForm = 0, kRunsForm = 1 };

absl::Status Damaged(uint64_t chunk, const std::string& what) {
  return absl::DataLossError(absl::StrCat(
      "a busy-time bitmap in a partial analysis is damaged: chunk ", chunk, " ", what));
}

// Chunk k's words, as PutWords wrote them.
absl::Status GetWords(WireReader& r, uint64_t k,
                      std::array<uint64_t, TimeBitmap::kChunkWords>* words) {
  for (size_t i = 0; i < words->size() && r.ok();) {
    uint64_t run = r.U();
    uint64_t word = r.U();
    if (!r.ok()) break;
    if (run == 0 || run > words->size() - i) {
      return Damaged(k, absl::StrCat("has a run of ", run, " words at word ", i, " of ",
                                     words->size()));
    }
    std::fill_n(words->begin() + i, run, word);
    i += run;
  }
  return absl::OkStatus();
}

// Chunk k's runs, as PutBitmap wrote them: sorted, apart, inside the chunk.
absl::Status GetRuns(WireReader& r, uint64_t k, std::vector<uint32_t>* runs) {
  constexpr uint64_t kSlots = TimeBitmap::kChunkSlots;
  uint64_t n = r.U();
  if (!r.ok()) return absl::OkStatus();
  // Runs apart from each other: at most every other slot.
  if (n == 0 || n > kSlots / 2) return Damaged(k, absl::StrCat("claims ", n, " runs"));
  runs->clear();
  uint64_t end = 0;  // the slot after the run before
  for (uint64_t i = 0; i < n && r.ok(); ++i) {
    uint64_t gap = r.U();
    uint64_t more = r.U();  // its length less one
    if (!r.ok()) break;
    if ((i > 0 && gap == 0) || gap >= kSlots - end || more >= kSlots - end - gap) {
      return Damaged(k, absl::StrCat("has run ", i, " (", gap, " slots after slot ", end,
                                     ", ", more, " slots more than one long) outside the chunk "
                                     "or joined to the one before"));
    }
    uint64_t first = end + gap;
    end = first + more + 1;
    runs->push_back(TimeBitmap::RunOf(static_cast<uint32_t>(first),
                                      static_cast<uint32_t>(end - 1)));
  }
  return absl::OkStatus();
}

}  // namespace

void PutBitmap(WireWriter& w, const TimeBitmap& b) {
  size_t present = 0;
  for (size_t k = 0; k < b.chunk_count(); ++k) {
    present += b.chunk(k) != nullptr || b.chunk_runs(k) != nullptr;
  }
  w.U(present);
  for (size_t k = 0; k < b.chunk_count(); ++k) {
    if (const std::vector<uint32_t>* runs = b.chunk_runs(k)) {
      w.U(k);
      w.U(kRunsForm);
      w.U(runs->size());
      uint32_t end = 0;
      for (uint32_t run : *runs) {
        w.U(TimeBitmap::RunFirst(run) - end);
        w.U(TimeBitmap::RunLast(run) - TimeBitmap::RunFirst(run));
        end = TimeBitmap::RunLast(run) + 1;
      }
      continue;
    }
    const uint64_t* words = b.chunk(k);
    if (words == nullptr) continue;
    w.U(k);
    w.U(kWordsForm);
    // Runs of equal words: busy time is long runs of set and clear slots.
    for (size_t i = 0; i < TimeBitmap::kChunkWords;) {
      size_t j = i + 1;
      while (j < TimeBitmap::kChunkWords && words[j] == words[i]) ++j;
      w.U(j - i);
      w.U(words[i]);
      i = j;
    }
  }
}

absl::Status MergeBitmap(WireReader& r, TimeBitmap* into) {
  uint64_t present = r.U();
  if (r.ok() && present > TimeBitmap::kMaxChunks) {
    return absl::DataLossError(absl::StrCat(
        "a busy-time bitmap in a partial analysis is damaged: it claims ", present, " chunks"));
  }
  std::array<uint64_t, TimeBitmap::kChunkWords> words;
  std::vector<uint32_t> runs;
  uint64_t next = 0;  // chunks come in order, each once
  for (uint64_t c = 0; c < present && r.ok(); ++c) {
    uint64_t k = r.U();
    uint64_t form = r.U();
    if (!r.ok()) break;
    if (k < next || k >= TimeBitmap::kMaxChunks) {
      return Damaged(k, absl::StrCat("is out of order or past the last (", TimeBitmap::kMaxChunks,
                                     " chunks)"));
    }
    next = k + 1;
    absl::Status got;
    if (form == kWordsForm) {
      got = GetWords(r, k, &words);
      if (got.ok() && r.ok()) into->OrChunk(k, words.data());
    } else if (form == kRunsForm) {
      got = GetRuns(r, k, &runs);
      if (got.ok() && r.ok()) into->OrRuns(k, runs);
    } else {
      got = Damaged(k, absl::StrCat("has an unknown form ", form));
    }
    if (!got.ok()) return got;
  }
  if (!r.ok()) {
    return absl::DataLossError("a busy-time bitmap in a partial analysis was cut short");
  }
  return absl::OkStatus();
}

}  // namespace iotap::analyzer
