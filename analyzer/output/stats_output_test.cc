// `iotap stats` printed (StatsToJson, StatsToText) from a hand-filled
// stats.proto: every key in its order, integers without a fraction, names
// that are not UTF-8 kept byte for byte, and the text's tables.

#include "analyzer/output/stats_output.h"

#include <string>

#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

stats::Stats Small() {
  stats::Stats s;
  s.set_processes(1);
  s.set_events(7);
  s.set_dropped_events(2);
  stats::File* f = s.add_files();
  f->set_path("/data/a\xff.bin");
  f->set_kind("file");
  f->set_reads(3);
  f->set_read_bytes(12288);
  f->set_opens(1);
  f->set_posix_reads(2);
  f->set_stdio_reads(1);
  f->set_metadata_ops(1);
  f->set_mmaps(1);
  f->set_mmap_bytes(4096);
  f->set_errors(1);
  f->set_read_seconds(0.25);
  f->set_processes(1);
  stats::File* pipe = s.add_ipc();
  pipe->set_kind("pipe");
  pipe->set_writes(1);
  pipe->set_posix_writes(1);
  pipe->set_write_bytes(8);
  pipe->set_processes(1);
  stats::Process* p = s.add_process_list();
  p->set_pid(42);
  p->set_ppid(1);
  p->set_hostname("node0");
  p->set_executable("/usr/bin/python3");
  p->add_argv("python3");
  p->add_argv("train.py");
  p->set_rank(-1);
  p->set_events(7);
  p->set_dropped_events(2);
  p->set_reads(3);
  p->set_read_bytes(12288);
  p->set_writes(1);
  p->set_write_bytes(8);
  p->set_end("unloaded");
  p->set_trace_file("run/node0.42.iotap");
  stats::Issue* i = s.add_issues();
  i->set_file("run/node0.43.iotap");
  i->set_offset(100);
  i->set_bytes_skipped(20);
  i->set_truncated(true);
  i->set_message("frame cut short");
  i->set_text("run/node0.43.iotap: at byte 100: frame cut short (20 bytes skipped)");
  return s;
}

TEST(StatsOutputTest, JsonHasEveryKeyInOrder) {
  EXPECT_EQ(StatsToJson(Small()), R"g({
  "processes": 1,
  "events": 7,
  "dropped_events": 2,
  "files": [
    {
      "path": "/data/a\\xff.bin",
      "kind": "file",
      "reads": 3,
      "read_bytes": 12288,
      "writes": 0,
      "write_bytes": 0,
      "opens": 1,
      "posix_reads": 2,
      "stdio_reads": 1,
      "posix_writes": 0,
      "stdio_writes": 0,
      "gds_reads": 0,
      "gds_writes": 0,
      "metadata_ops": 1,
      "mmaps": 1,
      "mmap_bytes": 4096,
      "errors": 1,
      "read_seconds": 0.25,
      "write_seconds": 0,
      "metadata_seconds": 0,
      "processes": 1
    }
  ],
  "ipc": [
    {
      "kind": "pipe",
      "reads": 0,
      "read_bytes": 0,
      "writes": 1,
      "write_bytes": 8,
      "opens": 0,
      "posix_reads": 0,
      "stdio_reads": 0,
      "posix_writes": 1,
      "stdio_writes": 0,
      "gds_reads": 0,
      "gds_writes": 0,
      "metadata_ops": 0,
      "mmaps": 0,
      "mmap_bytes": 0,
      "errors": 0,
      "read_seconds": 0,
      "write_seconds": 0,
      "metadata_seconds": 0,
      "processes": 1
    }
  ],
  "cuda_copies": [],
  "cuda_device": {
    "copies": [],
    "kernels": 0,
    "kernel_seconds": 0
  },
  "cuda_pinned": {
    "allocations": 0,
    "bytes": 0
  },
  "mapped_reads": {
    "processes_sampled": 0,
    "processes_counted": 0,
    "lost_faults": 0,
    "counted_minor_faults": 0,
    "counted_major_faults": 0,
    "counted_read_bytes": 0,
    "notes": [],
    "files": []
  },
  "io_uring": {
    "calls": 0,
    "unseen_requests": 0,
    "files": []
  },
  "process_list": [
    {
      "pid": 42,
      "ppid": 1,
      "hostname": "node0",
      "executable": "/usr/bin/python3",
      "argv": [
        "python3",
        "train.py"
      ],
      "rank": -1,
      "events": 7,
      "dropped_events": 2,
      "reads": 3,
      "read_bytes": 12288,
      "writes": 1,
      "write_bytes": 8,
      "end": "unloaded",
      "trace_file": "run/node0.42.iotap"
    }
  ],
  "datasets": [],
  "tfrecord_files": [],
  "issues": [
    {
      "file": "run/node0.43.iotap",
      "offset": 100,
      "bytes_skipped": 20,
      "truncated": true,
      "message": "frame cut short"
    }
  ]
}
)g");
}

TEST(StatsOutputTest, TextListsFilesDescriptorsProcessesAndProblems) {
  EXPECT_EQ(StatsToText(Small()), R"g(1 processes, 7 events recorded, 2 dropped

files: 1, opens 1, reads 3 (12.0 KiB), writes 0 (0 B)

     reads         read     writes      written   opens  metadata  file
         3     12.0 KiB          0          0 B       1         1  /data/a\xff.bin
         0          0 B          1          8 B                    (pipe)

processes:
  node0 pid 42 (parent 1): 7 events, 3 reads (12.0 KiB), unloaded  python3 train.py

problems reading the traces:
  run/node0.43.iotap: at byte 100: frame cut short (20 bytes skipped)
)g");
}

TEST(StatsOutputTest, TextSaysHowManyFilesItLeftOut) {
  stats::Stats s;
  for (int i = 0; i < 42; ++i) {
    stats::File* f = s.add_files();
    f->set_path("/f" + std::to_string(i));
    f->set_kind("file");
  }
  std::string text = StatsToText(s);
  EXPECT_NE(text.find("  /f39\n"), std::string::npos);
  EXPECT_EQ(text.find("  /f40\n"), std::string::npos);
  EXPECT_NE(text.find("... and 2 more files (--json lists all)\n"), std::string::npos);
}

}  // namespace
}  // namespace iotap::analyzer
