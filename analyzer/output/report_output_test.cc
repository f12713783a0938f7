// The report as text, Markdown and JSON (report_output.cc), on a small
// hand-built report whose every line is known: the run at a glance, findings,
// layers, HDF5 datasets, TFRecord files, directories, the files table with
// its sums, processes and notes.

#include "analyzer/output/report_output.h"

#include <string>

#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using report::Report;

report::File* AddFile(Report* r, const std::string& path, const std::string& category,
                      double read_bytes, double reads, double write_bytes, double opens) {
  report::File* f = r->add_files();
  f->set_path(path);
  f->set_category(category);
  f->set_read_bytes(read_bytes);
  f->set_reads(reads);
  f->set_write_bytes(write_bytes);
  f->set_opens(opens);
  return f;
}

report::Process* AddProcess(Report* r, int pid, report::Role role, int rank, int trainer_pid,
                            const std::string& argv) {
  report::Process* p = r->add_processes();
  p->set_pid(pid);
  p->set_role(role);
  p->set_rank(rank);
  p->set_trainer_pid(trainer_pid);
  p->set_host("node0");
  p->add_argv(argv);
  p->set_end("exit 0");
  return p;
}

// A run of 12.5 s: 10 steps, a data stall of 40%, one finding, two layers,
// an HDF5 dataset, two TFRecord files, files in two directories, a trainer
// with a loader and a helper, and a note. Names carry what the outputs must
// escape: a newline, a table pipe, emphasis.
Report SmallReport() {
  Report r;
  r.set_schema_version(1);
  for (const char* a : {"python3", "train.py", "--data", "/d/*x*|y"})
    r.mutable_run()->add_command(a);
  report::Run* run = r.mutable_run();
  run->set_duration_s(12.5);
  run->set_processes(3);
  run->add_hosts("node0");
  run->set_bytes_read(3 << 20);
  run->set_read_throughput_bytes_per_s((3 << 20) / 12.5);
  run->set_bytes_written(1024);
  run->set_io_busy_s(4.25);
  run->set_steps(10);
  run->set_data_stall_share(0.4);
  run->set_events(12345);
  run->set_dropped_events(2);
  run->set_trace_files(3);
  report::StepStatistics* st = r.mutable_step_statistics();
  st->set_median_step_s(0.5);
  st->set_p90_step_s(0.75);
  st->set_warmup_steps_skipped(1);
  st->set_fetch_share(0.5);
  st->set_prep_share(0.25);
  st->set_other_share(0.25);
  r.mutable_overlap()->set_hidden_io_s(1.5);
  r.mutable_overlap()->set_exposed_io_s(0.5);
  r.mutable_overlap()->set_hidden_share(0.75);

  report::Finding* f = r.add_findings();
  f->set_severity(report::Finding::WARNING);
  f->set_title("Small reads");
  f->set_summary("Reads of 4 KiB\nfrom 7 files.");
  report::Evidence* e = f->add_evidence();
  e->set_name("median read");
  e->set_text("4.00 KiB");
  for (int i = 0; i < 7; ++i) f->add_objects("/d/f" + std::to_string(i));
  f->set_recommendation("Read larger blocks.");

  report::Layer* posix = r.add_layers();
  posix->set_name("POSIX");
  posix->set_ops(120);
  posix->set_reads(100);
  posix->set_read_bytes(3 << 20);
  posix->set_writes(1);
  posix->set_write_bytes(1024);
  posix->set_time_s(2.5);
  posix->set_busy_s(2);
  report::Layer* hdf5 = r.add_layers();
  hdf5->set_name("HDF5");
  hdf5->set_ops(4);
  hdf5->set_reads(4);
  hdf5->set_read_bytes(16384);
  hdf5->set_time_s(0.0125);
  hdf5->set_busy_s(0.01);

  report::Dataset* d = r.add_datasets();
  d->set_file("/d/a.h5");
  d->set_name("/images");
  d->set_layout("chunked");
  d->set_chunk_bytes(2048);
  d->set_reads(4);
  d->set_logical_bytes(16384);
  d->set_posix_reads(10);
  d->set_posix_bytes(20480);
  d->set_reads_per_call(2.5);
  d->set_byte_amplification(1.25);

  report::TfRecordFile* t = r.add_tfrecord_files();
  t->set_path("/d/train.tfrecord");
  t->set_compression("none");
  t->set_records(300);
  t->set_record_bytes(300 * 1000);
  t->set_posix_reads(100);
  t->set_records_per_read(3);
  t->set_order("in order");
  report::TfRecordFile* z = r.add_tfrecord_files();
  z->set_path("/d/z.tfrecord.gz");
  z->set_compression("gzip");
  z->set_note("compressed");

  r.mutable_data_files()->set_files(3);
  report::File* dir_a = r.add_directories();
  dir_a->set_path("/d");
  dir_a->set_read_bytes(3 << 20);
  dir_a->set_reads(90);
  dir_a->set_files(2);
  dir_a->set_metadata_ops(6);
  report::File* dir_b = r.add_directories();
  dir_b->set_path("/e");
  dir_b->set_read_bytes(0);
  dir_b->set_files(1);

  AddFile(&r, "/d/big\nfile.bin", "data", 2 << 20, 60, 0, 2);
  AddFile(&r, "/d/small|file.bin", "data", 1 << 20, 30, 1024, 1);
  AddFile(&r, "/e/untouched.bin", "data", 0, 0, 0, 1);
  AddFile(&r, "/usr/lib/python3.11/os.py", "runtime", 8192, 2, 0, 1);
  AddFile(&r, "/proc/self/stat", "system", 300, 1, 0, 1);
  r.mutable_other_files()->set_files(5);
  r.mutable_other_files()->set_read_bytes(500);
  r.mutable_other_files()->set_reads(5);

  report::Process* trainer = AddProcess(&r, 100, report::TRAINER, 0, 0, "python3 train.py");
  trainer->set_read_bytes(1024);
  trainer->set_io_busy_s(0.25);
  trainer->set_cpu_user_s(10);
  trainer->set_cpu_system_s(0.5);
  report::Process* loader = AddProcess(&r, 101, report::LOADER, 0, 100, "python3 train.py");
  loader->set_read_bytes(3 << 20);
  loader->set_io_busy_s(4);
  loader->set_cpu_user_s(6);
  loader->set_end("_exit 0");
  AddProcess(&r, 102, report::HELPER, -1, 0, "sh -c nvidia-smi");

  r.add_notes()->set_message("1 trace file was cut short\n(killed)");
  return r;
}

// A file read through a mapping or io_uring says so: its reads are page
// faults and requests, not calls; a mix names each.
TEST(ReportOutputTest, FileReadsAreCountedInTheirUnits) {
  report::Report r;
  auto add = [&](const char* path, double reads, double faults, double requests) {
    report::File* f = r.add_files();
    f->set_path(path);
    f->set_category("data");
    f->set_reads(reads);
    f->set_read_bytes(reads * 4096);
    f->set_mapped_faults(faults);
    f->set_uring_reads(requests);
    f->set_opens(1);
  };
  add("/d/calls.bin", 90, 0, 0);
  add("/d/mapped.bin", 128, 128, 0);
  add("/d/uring.bin", 24, 0, 24);
  add("/d/mixed.bin", 10, 4, 3);
  report::File* dir = r.add_directories();
  dir->set_path("/d");
  dir->set_reads(252);
  dir->set_mapped_faults(132);
  dir->set_uring_reads(27);
  dir->set_read_bytes(252 * 4096);
  dir->set_files(4);
  r.add_directories()->set_path("/e");
  std::string text = ReportToText(r);
  for (const char* line :
       {"  360.0 KiB read in      90 calls,        0 B written,      1 opens  /d/calls.bin\n",
        "  512.0 KiB read in     128 faults,        0 B written,      1 opens  /d/mapped.bin\n",
        "   96.0 KiB read in      24 requests,        0 B written,      1 opens  /d/uring.bin\n",
        "   40.0 KiB read in 3 calls, 4 faults, 3 requests,        0 B written,      1 opens  "
        "/d/mixed.bin\n",
        "  1008.0 KiB read in 93 calls, 132 faults, 27 requests from      4 files,       0 "
        "metadata "
        "calls  /d/\n"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  }
}

TEST(ReportOutputTest, Text) {
  // Names are shown with control characters escaped (\n as two characters).
  EXPECT_EQ(ReportToText(SmallReport()),
            R"txt(iotap report: python3 train.py --data /d/*x*|y
  12.50 s, 3 processes on 1 host (1 trainer, 1 loader, 1 helper)
  read 3.00 MiB (245.8 KiB/s over the run), wrote 1.00 KiB
  I/O busy 4.25 s (union of every process's data-file I/O)
  10 steps, median 500.0 ms, p90 750.0 ms (first step of each trainer left out of statistics: 1)
  data stall: 40% of step time waiting for data (of the wait: fetch 50%, preparation 25%, other 25%)
  I/O hidden behind compute: 1.50 s of 2.00 s (75%); exposed while waiting: 500.0 ms
  12345 events traced, 2 dropped, 3 trace files

Findings
  1. [WARNING] Small reads
     Reads of 4 KiB\nfrom 7 files.
     - median read: 4.00 KiB
     concerns: /d/f0, /d/f1, /d/f2, /d/f3, /d/f4 and 2 more
     what to do: Read larger blocks.

Layers
  POSIX           120 calls,       100 reads (3.00 MiB),         1 writes (1.00 KiB), 2.50 s in calls, busy 2.00 s
  HDF5              4 calls,         4 reads (16.0 KiB),         0 writes (0 B), 12.5 ms in calls, busy 10.0 ms

HDF5 datasets
  /d/a.h5:/images (chunked): 4 reads of 4.00 KiB each became 2.5 POSIX reads of 2.00 KiB (1.25x bytes)

TFRecord files
  /d/train.tfrecord: 300 records of 1000 B (mean) in 100 reads, 3.00 records per read, in order
  /d/z.tfrecord.gz (gzip): records not attributed: compressed

Data by directory (3 files read or written)
    3.00 MiB read in      90 calls from      2 files,       6 metadata calls  /d/
         0 B read in       0 calls from      1 files,       0 metadata calls  /e/

Data files (by bytes)
    2.00 MiB read in      60 calls,        0 B written,      2 opens  /d/big\nfile.bin
    1.00 MiB read in      30 calls,   1.00 KiB written,      1 opens  /d/small|file.bin
         0 B read in       0 calls,        0 B written  (1 other data files)
    8.00 KiB read in       2 calls,        0 B written  (1 runtime files: Python, libraries)
       300 B read in       1 calls,        0 B written  (1 system files: /proc, /sys, /dev, IPC)
       500 B read in       5 calls,        0 B written  (5 files beyond the report's --top)

Processes
      100 trainer rank 0      1.00 KiB read, busy  250.0 ms, cpu  10.50 s  exit 0  python3 train.py
      101 loader rank 0 of 100  3.00 MiB read, busy    4.00 s, cpu   6.00 s  _exit 0  python3 train.py
      102 helper                   0 B read, busy    0.00 s, cpu   0.00 s  exit 0  sh -c nvidia-smi

Notes
  - 1 trace file was cut short\n(killed)
)txt");
}

TEST(ReportOutputTest, Markdown) {
  // Names and text from the traced system escaped for Markdown: \| in table
  // cells, \_ and \\ (a backslash shown), commands in code spans.
  EXPECT_EQ(ReportToMarkdown(SmallReport()),
            R"txt(## iotap report: `python3 train.py --data /d/*x*|y`

- 12.50 s, 3 processes on 1 host (1 trainer, 1 loader, 1 helper)
- read 3.00 MiB (245.8 KiB/s over the run), wrote 1.00 KiB
- I/O busy 4.25 s (union of every process's data-file I/O)
- 10 steps, median 500.0 ms, p90 750.0 ms (first step of each trainer left out of statistics: 1)
- data stall: 40% of step time waiting for data (of the wait: fetch 50%, preparation 25%, other 25%)
- I/O hidden behind compute: 1.50 s of 2.00 s (75%); exposed while waiting: 500.0 ms
- 12345 events traced, 2 dropped, 3 trace files

### Findings

1. **WARNING: Small reads.** Reads of 4 KiB\\nfrom 7 files.
   - median read: 4.00 KiB
   - *What to do:* Read larger blocks.

### Layers

| layer | count | reads | read | writes | written | time in them | busy |
|---|---:|---:|---:|---:|---:|---:|---:|
| POSIX | 120 calls | 100 | 3.00 MiB | 1 | 1.00 KiB | 2.50 s | 2.00 s |
| HDF5 | 4 calls | 4 | 16.0 KiB | 0 | 0 B | 12.5 ms | 10.0 ms |

### HDF5 datasets

| dataset | layout | chunk | H5Dread calls | bytes per call | POSIX reads per call | bytes read per byte asked |
|---|---|---:|---:|---:|---:|---:|
| /d/a.h5:/images | chunked | 2.00 KiB | 4 | 4.00 KiB | 2.5 | 1.25 |

### TFRecord files

| file | compression | records | mean record | reads | records per read | order |
|---|---|---:|---:|---:|---:|---|
| /d/train.tfrecord | none | 300 | 1000 B | 100 | 3.00 | in order |
| /d/z.tfrecord.gz | gzip | 0 | 0 B | 0 | 0.00 | compressed |

### Top files

| file | category | read | reads | written | opens |
|---|---|---:|---:|---:|---:|
| /d/big\\nfile.bin | data | 2.00 MiB | 60 | 0 B | 2 |
| /d/small\|file.bin | data | 1.00 MiB | 30 | 1.00 KiB | 1 |
| /e/untouched.bin | data | 0 B | 0 | 0 B | 1 |
| /usr/lib/python3.11/os.py | runtime | 8.00 KiB | 2 | 0 B | 1 |
| /proc/self/stat | system | 300 B | 1 | 0 B | 1 |

### Processes

| pid | host | role | rank | serves | read | I/O busy | CPU | end |
|---:|---|---|---:|---:|---:|---:|---:|---|
| 100 | node0 | trainer | 0 |  | 1.00 KiB | 250.0 ms | 10.50 s | exit 0 |
| 101 | node0 | loader | 0 | 100 | 3.00 MiB | 4.00 s | 6.00 s | \_exit 0 |
| 102 | node0 | helper |  |  | 0 B | 0.00 s | 0.00 s | exit 0 |

### Notes

- 1 trace file was cut short\\n(killed)

<sub>iotap 1; full details: `iotap report --format json`</sub>
)txt");
}

// The glance says where the waits come from and what lay between steps.
TEST(ReportOutputTest, TextSaysWhichWaitsWereInferredAndWhatLayBetweenSteps) {
  Report r = SmallReport();
  report::StepStatistics* st = r.mutable_step_statistics();
  report::DataWaits* w = st->mutable_data_waits();
  w->set_measured_steps(3);
  w->add_measured_by("iotap markers");
  w->set_inferred_steps(6);
  report::InferredWaits* by = w->add_inferred_by();
  by->set_how("the trainer blocked on its loaders' queues");
  by->set_wait_s(1.5);
  w->set_compared_steps(3);
  w->set_measured_stall_share(0.3);
  w->set_inferred_stall_share(0.31);
  w->set_agreement_share(0.95);
  report::BetweenSteps* between = st->mutable_between_steps();
  between->set_gaps(9);
  between->set_total_s(2);
  between->set_share(0.65);
  between->set_fetch_share(0.5);
  between->set_prep_share(0.25);
  between->set_other_share(0.25);
  const std::string text = ReportToText(r);
  EXPECT_NE(text.find("\n  data waits: measured (iotap markers) for 3 steps; inferred from the "
                      "trace for 6 steps (the trainer blocked on its loaders' queues: 1.50 s); "
                      "inferred from the trace too: 31% of step time against 30% measured, "
                      "during 95% of the measured wait\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\n  between steps: 65% of the trainer's time (2.00 s in 9 gaps between "
                      "logged steps, counted as waiting; fetch 50%, preparation 25%, other 25%)\n"),
            std::string::npos)
      << text;
}

TEST(ReportOutputTest, JsonKeepsTheProtoFieldNamesAndEveryField) {
  const Report r = SmallReport();
  const std::string json = ReportToJson(r);
  // protobuf ends its JSON with a line break, and the output adds one.
  EXPECT_EQ(json.substr(0, 2), "{\n");
  EXPECT_EQ(json.substr(json.size() - 3), "}\n\n");
  EXPECT_NE(json.find("\n \"schema_version\": 1,\n"), std::string::npos) << json;
  EXPECT_NE(json.find("\"data_stall_share\": 0.4,"), std::string::npos);
  EXPECT_NE(json.find("\"trainer_pid\": 0,"), std::string::npos);  // zeros too
  Report back;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &back).ok());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, r));

  // An empty report still has every field that is not a message.
  const std::string empty = ReportToJson(Report());
  const google::protobuf::Descriptor* d = Report::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* f = d->field(i);
    if (f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_repeated()) {
      continue;
    }
    EXPECT_NE(empty.find("\n \"" + f->name() + "\": "), std::string::npos) << f->name();
  }
}

}  // namespace
}  // namespace iotap::analyzer
