// The report's layers and its mapped reads and io_uring sections as text and
// Markdown (report_mapped_output.cc), from a hand-filled report whose paths
// and notes come from a hostile system.

#include "analyzer/output/report_mapped_output.h"

#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

report::Report Mapped() {
  report::Report r;
  report::Layer* posix = r.add_layers();
  posix->set_name("POSIX");
  posix->set_unit("calls");
  posix->set_ops(120);
  posix->set_reads(100);
  posix->set_read_bytes(3 << 20);
  posix->set_writes(1);
  posix->set_write_bytes(1024);
  posix->set_time_s(2.5);
  posix->set_busy_s(1.25);
  report::Layer* mapped = r.add_layers();
  mapped->set_name("MAPPED");
  mapped->set_unit("faults");
  mapped->set_ops(129);
  mapped->set_reads(128);
  mapped->set_read_bytes(8 << 20);
  mapped->set_time_s(0.25);
  mapped->set_busy_s(0.2);
  report::Layer* uring = r.add_layers();
  uring->set_name("URING");
  uring->set_unit("requests");
  uring->set_ops(36);
  uring->set_reads(22);
  uring->set_read_bytes(172032);
  uring->set_writes(1);
  uring->set_write_bytes(1000);
  uring->set_time_s(0.75);
  uring->set_busy_s(0.5);

  report::MappedReads* m = r.mutable_mapped_reads();
  m->set_source("perf samples and thread counters");
  m->set_processes_sampled(2);
  m->set_processes_counted(1);
  m->add_notes("perf refused\nby | seccomp");
  m->set_lost_faults(3);
  m->set_faults(128);
  m->set_major_faults(16);
  m->set_span_bytes(8 << 20);
  m->set_touched_bytes(512 << 10);
  m->set_estimated_spans(1);
  m->set_major_s(0.25);
  m->set_counted_minor_faults(54);
  m->set_counted_major_faults(2);
  m->set_counted_read_bytes(16384);
  m->set_file_count(3);
  report::MappedFile* f = m->add_files();
  f->set_path("/d/new\nline|x_y.bin");
  f->set_faults(120);
  f->set_major_faults(16);
  f->set_span_bytes(7 << 20);
  f->set_touched_bytes(480 << 10);
  f->set_estimated_spans(1);
  f->set_major_s(0.25);
  m->add_caveats("re-reads are not seen");
  m->add_caveats("refused (perf refused\nby | seccomp)");

  report::UringRequests* u = r.mutable_io_uring();
  u->set_calls(10);
  u->set_requests(25);
  u->set_reads(22);
  u->set_read_bytes(172032);
  u->set_writes(1);
  u->set_write_bytes(1000);
  u->set_other(2);
  u->set_failed(1);
  u->set_incomplete(1);
  u->set_read_seconds(0.5);
  u->set_unseen_requests(4);
  u->set_file_count(1);
  report::UringFile* q = u->add_files();
  q->set_path("/d/*u*.bin");
  q->set_reads(22);
  q->set_read_bytes(172032);
  q->set_writes(1);
  q->set_write_bytes(1000);
  q->set_other(2);
  q->set_incomplete(1);
  u->add_caveats("1 of 25 requests had no completion");
  return r;
}

// Mapped reads in faults (with the major ones), io_uring in requests (with
// the calls that carried them), the rest in calls; each with its busy time.
TEST(ReportMappedOutputTest, LayersCountInTheirUnits) {
  EXPECT_EQ(LayersToText(Mapped()), R"txt(
Layers
  POSIX           120 calls,       100 reads (3.00 MiB),         1 writes (1.00 KiB), 2.50 s in calls, busy 1.25 s
  MAPPED          128 faults mapping 8.00 MiB (16 major), 250.0 ms in major faults, busy 200.0 ms
  URING            25 requests,        22 reads (168.0 KiB),         1 writes (1000 B), in 10 calls, busy 500.0 ms
)txt");
  EXPECT_EQ(LayersToMarkdown(Mapped()), R"txt(
### Layers

| layer | count | reads | read | writes | written | time in them | busy |
|---|---:|---:|---:|---:|---:|---:|---:|
| POSIX | 120 calls | 100 | 3.00 MiB | 1 | 1.00 KiB | 2.50 s | 1.25 s |
| MAPPED | 128 faults (16 major) | 128 | 8.00 MiB | 0 | 0 B | 250.0 ms | 200.0 ms |
| URING | 25 requests in 10 calls | 22 | 168.0 KiB | 1 | 1000 B | 750.0 ms | 500.0 ms |
)txt");
}

// How the faults were seen, the figures, the caveats, the files listed and
// how many more are in the sums; names and caveats shown, never obeyed.
TEST(ReportMappedOutputTest, Text) {
  EXPECT_EQ(MappedReadsToText(Mapped()), R"txt(
Mapped reads (page faults in file mappings, seen by perf samples in 2 processes and thread counters in 1 process)
  128 faults, 16 major (250.0 ms waiting for storage), mapped 8.00 MiB, of which the program touched at least 512.0 KiB
  counted: 54 minor and 2 major faults, 16.0 KiB read from storage
  - re-reads are not seen
  - refused (perf refused\nby | seccomp)
      faults      major  major time       span    touched  file
         120         16    250.0 ms   7.00 MiB  480.0 KiB  /d/new\nline|x_y.bin (some spans estimated)
  (2 more files, in the sums above)

io_uring requests (25, in 10 calls into the kernel)
  22 reads (168.0 KiB, 500.0 ms submit to completion), 1 writes (1000 B), 2 other, 1 failed, 1 without a completion seen
  - 1 of 25 requests had no completion
       reads         read     writes      written  other incomplete  file
          22    168.0 KiB          1       1000 B      2          1  /d/*u*.bin
)txt");
}

TEST(ReportMappedOutputTest, Markdown) {
  EXPECT_EQ(MappedReadsToMarkdown(Mapped()), R"txt(
### Mapped reads

Page faults in file mappings, seen by perf samples in 2 processes and thread counters in 1 process. 128 faults, 16 major (250.0 ms waiting for storage), mapped 8.00 MiB, of which the program touched at least 512.0 KiB. Counted: 54 minor and 2 major faults, 16.0 KiB read from storage.

- re-reads are not seen
- refused (perf refused\\nby \| seccomp)

| file | faults | major | major time | span | touched |
|---|---:|---:|---:|---:|---:|
| /d/new\\nline\|x\_y.bin (some spans estimated) | 120 | 16 | 250.0 ms | 7.00 MiB | 480.0 KiB |

2 more files, in the sums above.

### io_uring requests

25 requests in 10 calls into the kernel: 22 reads (168.0 KiB, 500.0 ms submit to completion), 1 writes (1000 B), 2 other, 1 failed, 1 without a completion seen.

- 1 of 25 requests had no completion

| file | reads | read | writes | written | other | incomplete |
|---|---:|---:|---:|---:|---:|---:|
| /d/\*u\*.bin | 22 | 168.0 KiB | 1 | 1000 B | 2 | 1 |
)txt");
}

// A ticket's tables stop at 20 rows, whatever --top kept, and say how many
// files are left out.
TEST(ReportMappedOutputTest, MarkdownTablesStopAtTwentyRows) {
  report::Report r;
  report::MappedReads* m = r.mutable_mapped_reads();
  report::UringRequests* u = r.mutable_io_uring();
  for (int i = 0; i < 25; ++i) {
    m->add_files()->set_path("/m/" + std::to_string(i));
    u->add_files()->set_path("/u/" + std::to_string(i));
  }
  m->set_file_count(30);
  u->set_file_count(25);
  std::string md = MappedReadsToMarkdown(r);
  for (const char* dir : {"/m/", "/u/"}) {
    EXPECT_NE(md.find(std::string("| ") + dir + "19 |"), std::string::npos) << md;
    EXPECT_EQ(md.find(std::string("| ") + dir + "20 |"), std::string::npos) << md;
  }
  EXPECT_NE(md.find("10 more files, in the sums above."), std::string::npos) << md;
  EXPECT_NE(md.find("5 more files, in the sums above."), std::string::npos) << md;
  // The text keeps every row --top kept.
  EXPECT_NE(MappedReadsToText(r).find("/m/24\n"), std::string::npos);
}

TEST(ReportMappedOutputTest, ARunWithNeitherPrintsNothing) {
  report::Report r;
  EXPECT_EQ(MappedReadsToText(r), "");
  EXPECT_EQ(MappedReadsToMarkdown(r), "");
  EXPECT_EQ(LayersToText(r), "\nLayers\n");
}

}  // namespace
}  // namespace iotap::analyzer
