// The layers' sections of `iotap stats` (stats_output.h), in JSON and text:
// CUDA copies, mapped reads and io_uring (stats_mapped.cc), HDF5 datasets,
// TFRecord files. Shared by this folder's files only.

#ifndef IOTAP_ANALYZER_OUTPUT_STATS_SECTIONS_H_
#define IOTAP_ANALYZER_OUTPUT_STATS_SECTIONS_H_

#include <string>

#include "analyzer/base/json_writer.h"
#include "iotap/stats.pb.h"

namespace iotap::analyzer::internal {

// The "cuda_copies", "cuda_device" and "cuda_pinned" members.
void CudaToJson(const stats::Stats& stats, JsonWriter& j);
// The CUDA tables; empty if the run made no CUDA calls.
std::string CudaToText(const stats::Stats& stats);

// The "mapped_reads" and "io_uring" members.
void MappedToJson(const stats::Stats& stats, JsonWriter& j);
// The mapped reads and io_uring tables; empty if the run had neither.
std::string MappedToText(const stats::Stats& stats);

// The "datasets" array; the "HDF5 datasets" section (empty if none).
void DatasetsToJson(const stats::Stats& stats, JsonWriter& j);
std::string DatasetsToText(const stats::Stats& stats);

// The "tfrecord_files" array; the "TFRecord files" section (empty if none).
void TfRecordFilesToJson(const stats::Stats& stats, JsonWriter& j);
std::string TfRecordFilesToText(const stats::Stats& stats);

}  // namespace iotap::analyzer::internal

#endif  // IOTAP_ANALYZER_OUTPUT_STATS_SECTIONS_H_
