// The mapped reads and io_uring sections of `iotap stats`, in JSON and text,
// from hand-filled stats.proto messages.

#include <string>

#include "analyzer/output/stats_sections.h"
#include "gtest/gtest.h"

namespace iotap::analyzer::internal {
namespace {

stats::Stats Mapped() {
  stats::Stats s;
  stats::MappedReads* m = s.mutable_mapped_reads();
  m->set_processes_sampled(1);
  m->set_processes_counted(1);
  m->set_lost_faults(3);
  m->set_counted_minor_faults(54);
  m->set_counted_major_faults(2);
  m->set_counted_read_bytes(16384);
  m->add_notes("perf_event_open refused page-fault samples");
  stats::MappedFile* f = m->add_files();
  f->set_path("/d/data.bin");
  f->set_faults(128);
  f->set_major_faults(16);
  f->set_span_bytes(8 << 20);
  f->set_touched_bytes(512 << 10);
  f->set_estimated_spans(1);
  f->set_major_s(0.25);
  stats::IoUring* u = s.mutable_io_uring();
  u->set_calls(10);
  u->set_unseen_requests(4);
  stats::UringFile* r = u->add_files();
  r->set_path("/d/data.bin");
  r->set_reads(21);
  r->set_read_bytes(172032);
  r->set_other(2);
  r->set_failed(1);
  r->set_incomplete(1);
  r->set_read_seconds(0.5);
  return s;
}

TEST(StatsMappedTest, Json) {
  JsonWriter j;
  j.BeginObject();
  MappedToJson(Mapped(), j);
  j.EndObject();
  EXPECT_EQ(j.Take(), R"g({
  "mapped_reads": {
    "processes_sampled": 1,
    "processes_counted": 1,
    "lost_faults": 3,
    "counted_minor_faults": 54,
    "counted_major_faults": 2,
    "counted_read_bytes": 16384,
    "notes": [
      "perf_event_open refused page-fault samples"
    ],
    "files": [
      {
        "path": "/d/data.bin",
        "faults": 128,
        "major_faults": 16,
        "span_bytes": 8388608,
        "touched_bytes": 524288,
        "estimated_spans": 1,
        "major_s": 0.25
      }
    ]
  },
  "io_uring": {
    "calls": 10,
    "unseen_requests": 4,
    "files": [
      {
        "path": "/d/data.bin",
        "reads": 21,
        "read_bytes": 172032,
        "writes": 0,
        "write_bytes": 0,
        "other": 2,
        "failed": 1,
        "incomplete": 1,
        "read_s": 0.5
      }
    ]
  }
})g");
}

TEST(StatsMappedTest, Text) {
  EXPECT_EQ(MappedToText(Mapped()),
            "mapped reads: page faults sampled in 1 processes, counted only in 1\n"
            "  not sampled: perf_event_open refused page-fault samples\n"
            "  3 faults lost (the kernel's sample buffers were full)\n"
            "  counted while data files were mapped (any memory, no file named): 54 minor "
            "faults, 2 major, 16.0 KiB read from storage\n"
            "\n"
            "    faults      major   major time      span    touched  file\n"
            "       128         16       0.250s  8.00 MiB  512.0 KiB  /d/data.bin (some spans "
            "estimated)\n"
            "\n"
            "io_uring: 10 calls into the kernel\n"
            "  4 requests submitted by system calls the shim cannot see (the program's own "
            "syscall instruction): counted, files and sizes unknown\n"
            "     reads         read     writes      written  other incomplete  file\n"
            "        21    168.0 KiB          0          0 B      2          1  /d/data.bin\n");
}

TEST(StatsMappedTest, NothingMappedNorUringPrintsNoSection) {
  EXPECT_EQ(MappedToText(stats::Stats()), "");
}

}  // namespace
}  // namespace iotap::analyzer::internal
