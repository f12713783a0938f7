#include "analyzer/testing/sample_runs.h"

#include "absl/strings/str_cat.h"
#include "analyzer/testing/synthetic_trace.h"

namespace iotap::analyzer {

namespace {

constexpr int64_t kMs = 1'000'000;
constexpr int64_t kUs = 1'000;

void Steps(SyntheticProcess* trainer, int steps, int64_t first_start, int64_t length,
           int64_t (*wait)(int)) {
  for (int s = 0; s < steps; ++s) {
    int64_t start = first_start + s * length;
    trainer->Marker(OP_STEP_BEGIN, start, start, s);
    trainer->Marker(OP_DATA_WAIT, start, start + wait(s), s);
    trainer->Marker(OP_STEP_END, start + length, start + length, s);
  }
}

void CudaCopy(SyntheticProcess* p, int64_t start, uint64_t bytes) {
  SyntheticProcess::EventSpec e;
  e.op = OP_CUDA_MEMCPY_HTOD;
  e.start_ns = start;
  e.end_ns = start + 200 * kUs;
  e.requested = bytes;
  e.result = 0;
  e.flags = FLAG_CUDA_PINNED | FLAG_CUDA_ASYNC;
  e.aux = 0x7f00;
  p->Add(e);
}

}  // namespace

std::vector<std::string> HostileNames() {
  return {
      "<img src=x onerror=alert(1)>.png",
      "</script><script>alert(2)</script>.bin",
      "quote\"and'apostrophe&amp;.bin",
      "new\nline\tand\rreturn.bin",
      "bad-\xff\xfe-utf8.bin",
      "line\xe2\x80\xa8sep\xe2\x80\xa9.bin",
  };
}

void WriteHostileRun(const std::string& dir) {
  const int64_t t0 = kSampleRunStartNs;
  SyntheticProcess trainer(
      100, 1, "/usr/bin/python3",
      {"python3", "train.py", "--tag=</script><img src=x onerror=alert(3)>", "--name=\"q'\n\xff"},
      t0);
  Steps(&trainer, 20, t0 + 10 * kMs, 50 * kMs,
        [](int s) { return (s == 0 ? 30 : 5 + s % 4) * kMs; });
  uint32_t config = trainer.Path("/data/config <b onmouseover=alert(5)>.json");
  trainer.Read(OP_FREAD, t0 + 2 * kMs, t0 + 3 * kMs, config, 0, 700);
  CudaCopy(&trainer, t0 + 40 * kMs, 1 << 20);
  uint32_t dataset = trainer.Name("/data/h5 <i>x</i>.h5:/images", InternedString::KIND_DATASET);
  uint32_t h5 = trainer.Path("/data/h5 <i>x</i>.h5");
  // HDF5 records the enclosing call after the reads made inside it.
  for (int k = 0; k < 2; ++k) {
    SyntheticProcess::EventSpec r;
    r.op = OP_PREAD;
    r.start_ns = t0 + (70 + k) * kMs;
    r.end_ns = r.start_ns + 500 * kUs;
    r.file = h5;
    r.offset = 4096 * k;
    r.requested = r.result = 4096;
    r.parent = 1;
    trainer.Add(r);
  }
  SyntheticProcess::EventSpec read;
  read.op = OP_H5D_READ;
  read.start_ns = t0 + 69 * kMs;
  read.end_ns = t0 + 73 * kMs;
  read.file = dataset;
  read.requested = 8192;
  read.aux = 1;
  trainer.Add(read);
  // A TFRecord shard: one 4 KiB read completing two records.
  uint32_t shard = trainer.Path("/data/<svg onload=alert(6)>.tfrecord");
  trainer.Read(OP_READ, t0 + 80 * kMs, t0 + 81 * kMs, shard, 0, 4096);
  for (int k = 0; k < 2; ++k) {
    SyntheticProcess::EventSpec record;
    record.op = OP_TFRECORD_RECORD;
    record.start_ns = record.end_ns = t0 + 81 * kMs;
    record.file = shard;
    record.offset = 2048 * k;
    record.requested = 2048 - 16;
    record.aux = static_cast<uint64_t>(k);
    trainer.Add(record);
  }
  trainer.Cpu(t0, 0);
  trainer.Cpu(t0 + 1100 * kMs, 600 * kMs);
  trainer.End(EndOfTrace::REASON_EXIT, 0, t0 + 1100 * kMs);
  trainer.WriteTo(dir + "/trainer.iotap");

  const std::vector<std::string> names = HostileNames();
  for (int w = 0; w < 2; ++w) {
    const int pid = 101 + w;
    SyntheticProcess loader(pid, 100, "/usr/bin/python3", {"python3", "train.py"}, t0 + kMs,
                            ProcessHeader::ORIGIN_FORK);
    int64_t t = t0 + 5 * kMs;
    for (size_t f = 0; f < names.size(); ++f) {
      uint32_t id = loader.Path("/data/" + names[f]);
      const uint64_t size = f % 3 == 0 ? 4096 : f % 3 == 1 ? 65536 : 1 << 20;
      for (int k = 0; k < 12; ++k) {
        const int64_t duration = static_cast<int64_t>(size / 1024) * 2 * kUs + 50 * kUs;
        loader.Read(OP_PREAD, t, t + duration, id, static_cast<int64_t>(size) * k, size,
                    static_cast<uint32_t>(pid + 1000 * (k % 2)));
        t += duration + 7 * kMs;
      }
    }
    loader.Cpu(t0 + kMs, 0);
    loader.Cpu(t0 + 500 * kMs, 300 * kMs);
    loader.Cpu(t0 + 1000 * kMs, 450 * kMs);
    loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, t0 + 1050 * kMs);
    loader.WriteTo(absl::StrCat(dir, "/loader", w, ".iotap"));
  }
}

void WriteManyStepRun(const std::string& dir, int trainers, int loaders, int steps, int hosts) {
  const int64_t t0 = kSampleRunStartNs;
  const int64_t step_ns = 10 * kMs;
  for (int r = 0; r < trainers; ++r) {
    const std::string host = absl::StrCat("node", r % hosts);
    const int pid = 1000 * (1 + r / hosts);
    SyntheticProcess trainer(pid, 1, "/usr/bin/python3",
                             {"python3", "train.py", "--rank", absl::StrCat(r)}, t0,
                             ProcessHeader::ORIGIN_EXEC, host);
    trainer.header().set_rank(r);
    trainer.header().set_world_size(trainers);
    Steps(&trainer, steps, t0 + 5 * kMs, step_ns, [](int s) { return (1 + s % 4) * kMs; });
    if (r == 0) {
      for (int s = 0; s < steps; ++s)
        CudaCopy(&trainer, t0 + 5 * kMs + s * step_ns + 6 * kMs, 3 << 20);
    }
    const int64_t end = t0 + 10 * kMs + steps * step_ns;
    trainer.Cpu(t0, 0);
    trainer.Cpu(end, static_cast<uint64_t>((end - t0) * 7 / 10));
    trainer.End(EndOfTrace::REASON_EXIT, 0, end);
    trainer.WriteTo(absl::StrCat(dir, "/", host, ".trainer", r, ".iotap"));
    for (int w = 0; w < loaders; ++w) {
      SyntheticProcess loader(pid + 1 + w, pid, "/usr/bin/python3", {"python3", "train.py"},
                              t0 + kMs, ProcessHeader::ORIGIN_FORK, host);
      uint32_t file = loader.Path(absl::StrCat("/data/rank", r, "/shard", w, ".bin"));
      for (int s = w; s < steps; s += loaders) {
        const int64_t start = t0 + 5 * kMs + s * step_ns;
        loader.Read(OP_PREAD, start, start + 800 * kUs + (s % 7) * 100 * kUs, file,
                    static_cast<int64_t>(s / loaders) * 65536, 65536);
        if (s % 50 == w) loader.Cpu(start, static_cast<uint64_t>((start - t0) / 3));
      }
      loader.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, end);
      loader.WriteTo(absl::StrCat(dir, "/", host, ".loader", r, "-", w, ".iotap"));
    }
  }
}

void WriteMappedRun(const std::string& dir) {
  const int64_t t0 = kSampleRunStartNs;
  const int64_t step_ns = 10 * kMs;
  const int steps = 10;
  SyntheticProcess trainer(500, 1, "/usr/bin/python3", {"python3", "train.py"}, t0);
  Steps(&trainer, steps, t0 + 5 * kMs, step_ns, [](int) { return 3 * kMs; });
  const int64_t end = t0 + 10 * kMs + steps * step_ns;
  trainer.Cpu(t0, 0);
  trainer.Cpu(end, static_cast<uint64_t>((end - t0) / 2));
  trainer.End(EndOfTrace::REASON_EXIT, 0, end);
  trainer.WriteTo(dir + "/trainer.iotap");

  SyntheticProcess mapper(501, 500, "/usr/bin/python3", {"python3", "train.py"}, t0 + kMs,
                          ProcessHeader::ORIGIN_FORK);
  Packet sampling;
  sampling.mutable_fault_sampling()->set_source(FaultSampling::SOURCE_PERF_SAMPLES);
  sampling.mutable_fault_sampling()->set_lost_faults(2);
  mapper.Packet(sampling);
  const uint32_t arrow = mapper.Path("/data/train.arrow");
  mapper.Add({.op = OP_MMAP,
              .start_ns = t0 + 2 * kMs,
              .end_ns = t0 + 2 * kMs + 20 * kUs,
              .file = arrow,
              .offset = 0,
              .requested = 256 << 20,
              .result = 0x7f0000000000,
              .aux = 1});
  for (int s = 0; s < steps; ++s) {
    const int64_t start = t0 + 5 * kMs + s * step_ns;
    mapper.Add({.op = OP_MAPPED_READ,
                .start_ns = start,
                .end_ns = start + 2 * kMs,
                .file = arrow,
                .offset = s * (256 << 10),
                .requested = 4096,
                .result = 256 << 10,
                .flags = FLAG_MAJOR_FAULT,
                .aux = static_cast<uint64_t>(s) * (256 << 10)});
  }
  mapper.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, end);
  mapper.WriteTo(dir + "/mapper.iotap");

  SyntheticProcess submitter(502, 500, "/usr/bin/python3", {"python3", "train.py"}, t0 + kMs,
                             ProcessHeader::ORIGIN_FORK);
  const uint32_t val = submitter.Path("/data/val.bin");
  const uint32_t ring = submitter.Path("anon_inode:[io_uring]");
  for (int s = 0; s < steps; ++s) {
    const int64_t start = t0 + 5 * kMs + s * step_ns;
    submitter.Add({.op = OP_URING_ENTER,
                   .start_ns = start,
                   .end_ns = start + 1500 * kUs,
                   .file = ring,
                   .requested = 2,
                   .result = 2,
                   .aux = 2});
    for (int k = 0; k < 2; ++k) {
      submitter.Add({.op = OP_URING_READ,
                     .start_ns = start,
                     .end_ns = start + (1 + k) * 700 * kUs,
                     .file = val,
                     .offset = (2 * s + k) * 65536,
                     .requested = 65536,
                     .result = 65536,
                     .aux = 22 /* IORING_OP_READ */});
    }
  }
  // At the end, a read whose completion was never seen, and 3 requests the
  // kernel took from calls the shim did not see.
  const int64_t last = t0 + 5 * kMs + steps * step_ns;
  submitter.Add({.op = OP_URING_READ,
                 .start_ns = last,
                 .end_ns = last,
                 .file = val,
                 .offset = 2 * steps * 65536,
                 .requested = 65536,
                 .flags = FLAG_INCOMPLETE,
                 .aux = 22});
  submitter.Add({.op = OP_URING_ENTER,
                 .start_ns = last,
                 .end_ns = last,
                 .file = ring,
                 .requested = 3,
                 .result = 3,
                 .flags = FLAG_INCOMPLETE});
  submitter.End(EndOfTrace::REASON_UNDERSCORE_EXIT, 0, end);
  submitter.WriteTo(dir + "/submitter.iotap");
}

}  // namespace iotap::analyzer
