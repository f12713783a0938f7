// The program the overhead harness runs, traced and untraced: a tight loop of
// one kind of call, timed from inside.
//
//   io_worker pread1 FILE CALLS THREADS   1-byte pread at offset 0 (page cache)
//   io_worker read4k FILE CALLS THREADS   sequential 4 KiB reads, wrapping at EOF
//   io_worker read256k FILE CALLS THREADS sequential 256 KiB reads, wrapping at EOF,
//                                         as tf.data reads a TFRecord file
//
// THREADS (default 1) is how many threads the program creates, each running
// the loop on its own descriptor, or "main": the loop runs on the main thread
// and the program creates no thread at all, as cat, dd or a DataLoader worker
// reads. The two differ untraced: Linux and glibc take faster paths in a
// process with one thread (see UseOwnDescriptorTable in
// interpose/file/writer.cc), so each needs its own measurement.
//   io_worker make-tfrecord FILE BYTES RECORD
//                                         writes a TFRecord file of about BYTES
//                                         bytes of RECORD-byte records (untimed)
//
// Prints one line of key=value pairs: ns_per_call (wall time per call, mean
// over threads), cpu_ns_per_call (thread CPU time per call, which does not
// depend on how many threads share the cores), calls, rss_growth_kib, and
// process_cpu_ns_per_call (CPU time of the whole process while the threads
// ran, the shim's writer thread included, per call).

#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "proto/wire/crc32c.h"
#include "proto/wire/little_endian.h"

namespace {

double Seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

long RssKib() {
  // Read with raw file calls so the measurement itself is small.
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::strncmp(line, "VmRSS:", 6) == 0) kib = std::atol(line + 6);
  }
  std::fclose(f);
  return kib;
}

struct Job {
  const char* mode;
  const char* file;
  long calls;
  double wall = 0;
  double cpu = 0;
};

void* Run(void* arg) {
  Job* job = static_cast<Job*>(arg);
  int fd = open(job->file, O_RDONLY);
  if (fd < 0) {
    std::perror(job->file);
    std::exit(2);
  }
  std::vector<char> storage(256 * 1024);
  char* buf = storage.data();
  size_t chunk = std::strcmp(job->mode, "read256k") == 0 ? storage.size() : 4096;
  double w0 = Seconds(CLOCK_MONOTONIC);
  double c0 = Seconds(CLOCK_THREAD_CPUTIME_ID);
  if (std::strcmp(job->mode, "pread1") == 0) {
    for (long i = 0; i < job->calls; ++i) {
      if (pread(fd, buf, 1, 0) != 1) std::exit(3);
    }
  } else {
    for (long i = 0; i < job->calls; ++i) {
      ssize_t r = read(fd, buf, chunk);
      if (r < 0) std::exit(3);
      if (r < static_cast<ssize_t>(chunk)) lseek(fd, 0, SEEK_SET);
    }
  }
  job->cpu = Seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
  job->wall = Seconds(CLOCK_MONOTONIC) - w0;
  close(fd);
  return nullptr;
}

int MakeTfRecord(const char* path, long bytes, long record) {
  FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return 2;
  std::vector<unsigned char> data(record);
  for (long i = 0; i < record; ++i) data[i] = static_cast<unsigned char>(i * 131);
  // TFRecord framing: the length and the data, each followed by its masked
  // CRC32C.
  uint32_t data_crc = iotap::wire::MaskCrc32c(iotap::wire::Crc32c(data.data(), data.size()));
  unsigned char header[12];
  iotap::wire::StoreLe64(header, static_cast<uint64_t>(record));
  iotap::wire::StoreLe32(header + 8, iotap::wire::MaskCrc32c(iotap::wire::Crc32c(header, 8)));
  for (long written = 0; written < bytes; written += record + 16) {
    std::fwrite(header, 1, 12, f);
    std::fwrite(data.data(), 1, data.size(), f);
    std::fwrite(&data_crc, 1, 4, f);
  }
  return std::fclose(f) == 0 ? 0 : 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::strcmp(argv[1], "make-tfrecord") == 0) {
    return MakeTfRecord(argv[2], std::atol(argv[3]), std::atol(argv[4]));
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: io_worker pread1|read4k|read256k FILE CALLS [THREADS|main]\n");
    return 1;
  }
  bool on_main = argc > 4 && std::strcmp(argv[4], "main") == 0;
  int threads = on_main ? 1 : argc > 4 ? std::atoi(argv[4]) : 1;
  std::vector<Job> jobs(threads, Job{argv[1], argv[2], std::atol(argv[3])});
  long rss0 = RssKib();
  double process0 = Seconds(CLOCK_PROCESS_CPUTIME_ID);
  if (on_main) {
    Run(&jobs[0]);
  } else {
    std::vector<pthread_t> ids(threads);
    for (int t = 0; t < threads; ++t) pthread_create(&ids[t], nullptr, Run, &jobs[t]);
    for (int t = 0; t < threads; ++t) pthread_join(ids[t], nullptr);
  }
  double process_cpu = Seconds(CLOCK_PROCESS_CPUTIME_ID) - process0;
  long rss1 = RssKib();
  double wall = 0, cpu = 0;
  for (const Job& j : jobs) {
    wall += j.wall / j.calls;
    cpu += j.cpu / j.calls;
  }
  long calls = jobs[0].calls * threads;
  std::printf("ns_per_call=%.2f cpu_ns_per_call=%.2f calls=%ld rss_growth_kib=%ld"
              " process_cpu_ns_per_call=%.2f\n",
              wall / threads * 1e9, cpu / threads * 1e9, calls, rss1 - rss0,
              process_cpu / calls * 1e9);
  return 0;
}
