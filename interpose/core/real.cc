#include "interpose/core/real.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "interpose/core/recorder.h"

namespace iotap::interpose {

namespace {

// Loaded objects worth asking, collected first so that dlopen is never
// called from inside dl_iterate_phdr's callback (which holds a loader lock).
constexpr int kMaxObjects = 1024;
struct LoadedObjects {
  const char* own;  // this library's path, skipped
  const char* names[kMaxObjects];
  int count;
};

// Scratch for one resolution; resolutions are rare (once per symbol) but may
// race between threads, so they take turns.
constinit LoadedObjects g_objects = {};
constinit pthread_mutex_t g_objects_lock = PTHREAD_MUTEX_INITIALIZER;

int CollectObject(struct dl_phdr_info* info, size_t, void* data) {
  auto* objects = static_cast<LoadedObjects*>(data);
  const char* name = info->dlpi_name;
  // The main program has an empty name; its symbols are RTLD_NEXT's domain.
  if (name == nullptr || name[0] == '\0' || strcmp(name, objects->own) == 0) return 0;
  if (objects->count < kMaxObjects) objects->names[objects->count++] = name;
  return 0;
}

}  // namespace

// dlsym on a handle may also search the object's dependencies, or the global
// scope for objects loaded at start-up: only an answer inside `object` counts.
void* ResolveIn(const char* object, const char* symbol) {
  void* handle = dlopen(object, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) return nullptr;
  void* f = dlsym(handle, symbol);
  Dl_info where;
  if (f != nullptr && (dladdr(f, &where) == 0 || where.dli_fname == nullptr ||
                       strcmp(where.dli_fname, object) != 0)) {
    f = nullptr;
  }
  dlclose(handle);
  return f;
}

namespace {

void* Lookup(void* handle, const char* name) {
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  void* f = dlsym(handle, name);
  tls_thread.busy = was_busy;
  return f;
}

}  // namespace

void* ResolveGlobal(const char* name) { return Lookup(RTLD_DEFAULT, name); }

void* ResolveNext(const char* name) { return Lookup(RTLD_NEXT, name); }

void* ResolveNextOrLoaded(const char* name) {
  void* f = ResolveNext(name);
  if (f != nullptr) return f;
  bool was_busy = tls_thread.busy;
  tls_thread.busy = true;
  Dl_info self;
  LoadedObjects& objects = g_objects;
  pthread_mutex_lock(&g_objects_lock);
  objects.own = dladdr(reinterpret_cast<void*>(&ResolveNextOrLoaded), &self) != 0 &&
                        self.dli_fname != nullptr
                    ? self.dli_fname
                    : "";
  objects.count = 0;
  dl_iterate_phdr(CollectObject, &objects);
  for (int i = 0; i < objects.count && f == nullptr; ++i) f = ResolveIn(objects.names[i], name);
  pthread_mutex_unlock(&g_objects_lock);
  tls_thread.busy = was_busy;
  return f;
}

void ResolveAfterForkChild() { pthread_mutex_init(&g_objects_lock, nullptr); }

}  // namespace iotap::interpose
