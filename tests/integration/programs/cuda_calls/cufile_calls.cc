// cuFile's calls: a handle on the run's file, reads and writes (synchronous,
// asynchronous and batched), and the handle's release. Writes go to offset
// 4096 x call number, in the file's first half; reads come from its second
// half, which holds a known pattern, so each read's data can be checked.

#include <dlfcn.h>
#include <string.h>

#include "absl/strings/str_cat.h"
#include "tests/integration/programs/cuda_calls/calls.h"

namespace iotap::cuda_calls {
namespace {

template <typename Fn>
Fn As(void* fn) {
  return reinterpret_cast<Fn>(fn);
}

off_t WriteOffset(const Context& c) { return 4096 * static_cast<off_t>(c.index); }
off_t ReadOffset(const Context& c) {
  return static_cast<off_t>(kFilePatternOffset) + 4096 * static_cast<off_t>(c.index);
}

// Whether `buf` holds the file's pattern from `offset` on.
bool HoldsPattern(const char* buf, off_t offset, size_t n) {
  static char* pattern = [] {
    char* p = new char[kFileBytes];
    Fill(p, kFileBytes, 0);
    return p;
  }();
  return memcmp(buf, pattern + offset, n) == 0;
}

std::string Fields(off_t offset, size_t n) { return absl::StrCat("offset=", offset, " bytes=", n); }

void HandleRegister(const char* s, void* fn, Context& c) {
  CUfileDescr_t descr = {};
  descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
  descr.handle.fd = c.fd;
  CUfileError_t r = As<decltype(&::cuFileHandleRegister)>(fn)(&c.handle, &descr);
  Report(s, "type=fd", r.err, c.handle != nullptr);
}

void HandleDeregister(const char* s, void* fn, Context& c) {
  As<decltype(&::cuFileHandleDeregister)>(fn)(c.handle);
  Report(s, "type=fd", 0, true);
}

void Write(const char* s, void* fn, Context& c) {
  size_t n = BytesOf(c.index);
  Fill(c.device, n, c.index);
  MaybeFail(c, Lib::kCufile);
  ssize_t r = As<decltype(&::cuFileWrite)>(fn)(c.handle, c.device, n, WriteOffset(c), 0);
  Report(s, Fields(WriteOffset(c), n), r == static_cast<ssize_t>(n) ? 0 : r, true);
}

void Read(const char* s, void* fn, Context& c) {
  size_t n = BytesOf(c.index);
  Clear(c.device, n + 64);
  MaybeFail(c, Lib::kCufile);
  // Into the buffer at offset 64, which cuFile takes separately.
  ssize_t r = As<decltype(&::cuFileRead)>(fn)(c.handle, c.device, n, ReadOffset(c), 64);
  Report(s, Fields(ReadOffset(c), n), r == static_cast<ssize_t>(n) ? 0 : r,
         HoldsPattern(c.device + 64, ReadOffset(c), n));
}

template <typename Fn>
void Async(const char* s, void* fn, Context& c, bool write) {
  size_t n = BytesOf(c.index);
  off_t offset = write ? WriteOffset(c) : ReadOffset(c), buf_offset = 0;
  ssize_t done = -1;
  void* stream = StreamOf(c.index);
  if (write)
    Fill(c.device, n, c.index);
  else
    Clear(c.device, n);
  MaybeFail(c, Lib::kCufile);
  CUfileError_t r = As<Fn>(fn)(c.handle, c.device, &n, &offset, &buf_offset, &done,
                               static_cast<CUstream>(stream));
  bool ok = done == static_cast<ssize_t>(n) && (write || HoldsPattern(c.device, offset, n));
  Report(s, absl::StrCat(Fields(offset, n), " stream=", StreamText(stream)), r.err, ok);
}

void ReadAsync(const char* s, void* fn, Context& c) {
  Async<decltype(&::cuFileReadAsync)>(s, fn, c, false);
}
void WriteAsync(const char* s, void* fn, Context& c) {
  Async<decltype(&::cuFileWriteAsync)>(s, fn, c, true);
}

// A batch of two: a read of the pattern, then a write 8 bytes longer.
void BatchSubmit(const char* s, void* fn, Context& c) {
  auto setup = As<decltype(&::cuFileBatchIOSetUp)>(dlsym(c.cufile_library, "cuFileBatchIOSetUp"));
  auto status =
      As<decltype(&::cuFileBatchIOGetStatus)>(dlsym(c.cufile_library, "cuFileBatchIOGetStatus"));
  auto destroy =
      As<decltype(&::cuFileBatchIODestroy)>(dlsym(c.cufile_library, "cuFileBatchIODestroy"));
  CUfileBatchHandle_t batch = nullptr;
  setup(&batch, 2);
  size_t n = BytesOf(c.index);
  Clear(c.device, n);
  Fill(c.device2, n + 8, c.index);
  CUfileIOParams_t io[2] = {};
  io[0] = {CUFILE_BATCH, {{c.device, ReadOffset(c), 0, n}}, c.handle, CUFILE_READ, nullptr};
  io[1] = {CUFILE_BATCH, {{c.device2, WriteOffset(c), 0, n + 8}}, c.handle, CUFILE_WRITE, nullptr};
  MaybeFail(c, Lib::kCufile);
  CUfileError_t r = As<decltype(&::cuFileBatchIOSubmit)>(fn)(batch, 2, io, 0);
  CUfileIOEvents_t events[2] = {};
  unsigned got = 2;
  if (r.err == CU_FILE_SUCCESS) status(batch, 2, &got, events, nullptr);
  bool ok = got == 2 && events[0].ret == n && events[1].ret == n + 8 &&
            HoldsPattern(c.device, ReadOffset(c), n);
  destroy(batch);
  Report(s,
         absl::StrCat("requests=2 ops=read,write offsets=", ReadOffset(c), ",", WriteOffset(c),
                      " bytes=", n, ",", n + 8),
         r.err, ok);
}

}  // namespace

#define CUFILE(symbol, phase, invoker) \
  { symbol, Lib::kCufile, phase, nullptr, false, invoker }

const Call kCufileCalls[] = {
    CUFILE("cuFileHandleRegister", Phase::kAllocate, HandleRegister),
    CUFILE("cuFileWrite", Phase::kTransfer, Write),
    CUFILE("cuFileRead", Phase::kTransfer, Read),
    CUFILE("cuFileWriteAsync", Phase::kTransfer, WriteAsync),
    CUFILE("cuFileReadAsync", Phase::kTransfer, ReadAsync),
    CUFILE("cuFileBatchIOSubmit", Phase::kTransfer, BatchSubmit),
    CUFILE("cuFileHandleDeregister", Phase::kRelease, HandleDeregister),
};
const size_t kCufileCallCount = sizeof(kCufileCalls) / sizeof(kCufileCalls[0]);

}  // namespace iotap::cuda_calls
