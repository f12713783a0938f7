#include "interpose/posix/mappings.h"

#include <pthread.h>

#include <atomic>

namespace iotap::interpose {

namespace {

struct Mapping {
  uintptr_t start;
  size_t length;
  uint32_t file;
};

struct MappingTable {
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  Mapping entries[kMaxMappings] = {};
  std::atomic<int> count{0};
};

constinit MappingTable g_mappings;

}  // namespace

void AddMapping(void* addr, size_t length, uint32_t file) {
  pthread_mutex_lock(&g_mappings.lock);
  int n = g_mappings.count.load(std::memory_order_relaxed);
  if (n < kMaxMappings) {
    g_mappings.entries[n] = Mapping{reinterpret_cast<uintptr_t>(addr), length, file};
    g_mappings.count.store(n + 1, std::memory_order_release);
  }
  pthread_mutex_unlock(&g_mappings.lock);
}

uint32_t TakeMapping(void* addr, size_t length) {
  uintptr_t a = reinterpret_cast<uintptr_t>(addr);
  uint32_t file = 0;
  pthread_mutex_lock(&g_mappings.lock);
  int n = g_mappings.count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    Mapping& m = g_mappings.entries[i];
    if (a < m.start || a >= m.start + m.length) continue;
    file = m.file;
    if (a == m.start && length >= m.length) {
      m = g_mappings.entries[n - 1];
      g_mappings.count.store(n - 1, std::memory_order_release);
    }
    break;
  }
  pthread_mutex_unlock(&g_mappings.lock);
  return file;
}

bool HasMappings() { return g_mappings.count.load(std::memory_order_acquire) != 0; }

void LockMappingsForFork() { pthread_mutex_lock(&g_mappings.lock); }

void UnlockMappingsAfterFork(bool child) {
  if (child) {
    pthread_mutex_init(&g_mappings.lock, nullptr);
  } else {
    pthread_mutex_unlock(&g_mappings.lock);
  }
}

}  // namespace iotap::interpose
