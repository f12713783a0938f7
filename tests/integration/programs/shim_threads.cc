// The shim's threaded machinery at full stretch, for ThreadSanitizer: this
// program links the shim (libiotap_tsan.so in the tsan preset, a copy built
// with -fsanitize=thread; libiotap.so otherwise) instead of preloading it, so
// the sanitizer sees the rings, the writer thread and the locks at work.
//
//   shim_threads FILE THREADS READS
//
// THREADS threads each pread FILE READS times (100 bytes at offsets 0, 100,
// ... modulo the file) and open and close a path of their own every 64
// reads (interning strings); half of them do so in two waves, the second
// wave's threads taking over the rings the first left. Meanwhile the main
// thread marks steps, maps and unmaps FILE, and forks a child that preads it
// 100 times and exits. Prints "reads N" (all threads) and the child's status.

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <vector>

#include "interpose/iotap.h"

namespace {

const char* g_file = nullptr;
long g_file_size = 0;
int g_reads = 0;
std::atomic<long> g_done{0};

void* Reader(void* arg) {
  long index = reinterpret_cast<long>(arg);
  int fd = open(g_file, O_RDONLY);
  if (fd < 0) exit(3);
  char buf[100];
  long slots = g_file_size / 100;
  for (int i = 0; i < g_reads; ++i) {
    if (pread(fd, buf, sizeof(buf), (i % slots) * 100) != 100) exit(4);
    if (i % 64 == 0) {
      std::string path = "/nonexistent/iotap/" + std::to_string(index) + "/" + std::to_string(i);
      close(open(path.c_str(), O_RDONLY));
    }
  }
  close(fd);
  g_done.fetch_add(g_reads);
  return nullptr;
}

std::vector<pthread_t> Start(int first, int count) {
  std::vector<pthread_t> ids(count);
  for (int i = 0; i < count; ++i) {
    pthread_create(&ids[i], nullptr, Reader, reinterpret_cast<void*>(static_cast<long>(first + i)));
  }
  return ids;
}

void Join(const std::vector<pthread_t>& ids) {
  for (pthread_t t : ids) pthread_join(t, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: shim_threads FILE THREADS READS\n");
    return 2;
  }
  g_file = argv[1];
  int threads = atoi(argv[2]);
  g_reads = atoi(argv[3]);
  int fd = open(g_file, O_RDONLY);
  g_file_size = lseek(fd, 0, SEEK_END);
  if (fd < 0 || g_file_size < 100) return 2;

  int steady = threads / 2, waves = threads - steady;
  std::vector<pthread_t> steady_ids = Start(0, steady);
  std::vector<pthread_t> first_wave = Start(steady, waves / 2);
  for (int step = 0; step < 50; ++step) {
    iotap_step_begin(step);
    void* p = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) munmap(p, 4096);
    iotap_step_end(step);
  }
  pid_t child = fork();
  if (child == 0) {
    char buf[100];
    for (int i = 0; i < 100; ++i) {
      if (pread(fd, buf, sizeof(buf), 0) != 100) _exit(5);
    }
    _exit(0);
  }
  Join(first_wave);
  std::vector<pthread_t> second_wave = Start(steady + waves / 2, waves - waves / 2);
  Join(second_wave);
  Join(steady_ids);
  int status = 0;
  waitpid(child, &status, 0);
  close(fd);
  printf("reads %ld\nchild %d\n", g_done.load(), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return 0;
}
