// A stand-in for GPUDirect Storage, libcufile.so.0, for testing the shim
// without a GPU. Registered handles wrap a descriptor; reads and writes move
// data between the file and host memory (the fake's "device memory") with
// raw system calls, as the real library's DMA path bypasses libc, so the
// shim's POSIX layer does not see them. Async and batch requests complete
// before the call returns.
//
// A test makes the next call fail with iotap_fake_cufile_fail_next(code), a
// CUfileOpError: status calls return it, cuFileRead and cuFileWrite its
// negation.

#include <sys/syscall.h>
#include <unistd.h>

#include <mutex>
#include <vector>

#include "interpose/cuda/cufile_api.h"

namespace {

thread_local int g_fail_next = 0;

int Injected() {
  int code = g_fail_next;
  g_fail_next = 0;
  return code;
}

CUfileError_t Status(int code) {
  return CUfileError_t{static_cast<CUfileOpError>(code), CUDA_SUCCESS};
}

struct FakeHandle {
  int fd;
};

struct FakeBatch {
  std::vector<CUfileIOEvents_t> done;
};

ssize_t Transfer(CUfileHandle_t fh, bool write, void* buf, size_t size, off_t file_offset,
                 off_t buf_offset) {
  if (fh == nullptr) return -CU_FILE_HANDLE_NOT_REGISTERED;
  int fd = static_cast<FakeHandle*>(fh)->fd;
  char* at = static_cast<char*>(buf) + buf_offset;
  long r = syscall(write ? SYS_pwrite64 : SYS_pread64, fd, at, size, file_offset);
  return r < 0 ? -1 : r;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT void iotap_fake_cufile_fail_next(int code) { g_fail_next = code; }

FAKE_EXPORT CUfileError_t cuFileHandleRegister(CUfileHandle_t* fh, CUfileDescr_t* descr) {
  if (int code = Injected()) return Status(code);
  if (fh == nullptr || descr == nullptr || descr->type != CU_FILE_HANDLE_TYPE_OPAQUE_FD) {
    return Status(CU_FILE_INVALID_VALUE);
  }
  *fh = new FakeHandle{descr->handle.fd};
  return Status(CU_FILE_SUCCESS);
}

FAKE_EXPORT void cuFileHandleDeregister(CUfileHandle_t fh) {
  Injected();
  delete static_cast<FakeHandle*>(fh);
}

FAKE_EXPORT ssize_t cuFileRead(CUfileHandle_t fh, void* buf, size_t size, off_t file_offset,
                               off_t buf_offset) {
  if (int code = Injected()) return -code;
  return Transfer(fh, false, buf, size, file_offset, buf_offset);
}

FAKE_EXPORT ssize_t cuFileWrite(CUfileHandle_t fh, const void* buf, size_t size, off_t file_offset,
                                off_t buf_offset) {
  if (int code = Injected()) return -code;
  return Transfer(fh, true, const_cast<void*>(buf), size, file_offset, buf_offset);
}

FAKE_EXPORT CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void* buf, size_t* size_p,
                                          off_t* file_offset_p, off_t* buf_offset_p,
                                          ssize_t* bytes_read_p, CUstream) {
  if (int code = Injected()) return Status(code);
  *bytes_read_p = Transfer(fh, false, buf, *size_p, *file_offset_p, *buf_offset_p);
  return Status(CU_FILE_SUCCESS);
}

FAKE_EXPORT CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void* buf, size_t* size_p,
                                           off_t* file_offset_p, off_t* buf_offset_p,
                                           ssize_t* bytes_written_p, CUstream) {
  if (int code = Injected()) return Status(code);
  *bytes_written_p = Transfer(fh, true, buf, *size_p, *file_offset_p, *buf_offset_p);
  return Status(CU_FILE_SUCCESS);
}

FAKE_EXPORT CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t* batch, unsigned) {
  if (int code = Injected()) return Status(code);
  *batch = new FakeBatch;
  return Status(CU_FILE_SUCCESS);
}

FAKE_EXPORT CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch, unsigned nr,
                                              CUfileIOParams_t* io, unsigned int) {
  if (int code = Injected()) return Status(code);
  FakeBatch* b = static_cast<FakeBatch*>(batch);
  for (unsigned i = 0; i < nr; ++i) {
    ssize_t r =
        Transfer(io[i].fh, io[i].opcode == CUFILE_WRITE, io[i].u.batch.devPtr_base,
                 io[i].u.batch.size, io[i].u.batch.file_offset, io[i].u.batch.devPtr_offset);
    b->done.push_back(CUfileIOEvents_t{io[i].cookie, r < 0 ? CUFILE_FAILED : CUFILE_COMPLETE,
                                       static_cast<size_t>(r)});
  }
  return Status(CU_FILE_SUCCESS);
}

FAKE_EXPORT CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t batch, unsigned, unsigned* nr,
                                                 CUfileIOEvents_t* events, struct timespec*) {
  if (int code = Injected()) return Status(code);
  FakeBatch* b = static_cast<FakeBatch*>(batch);
  unsigned n = 0;
  for (; n < *nr && n < b->done.size(); ++n) events[n] = b->done[n];
  b->done.erase(b->done.begin(), b->done.begin() + n);
  *nr = n;
  return Status(CU_FILE_SUCCESS);
}

FAKE_EXPORT void cuFileBatchIODestroy(CUfileBatchHandle_t batch) {
  Injected();
  delete static_cast<FakeBatch*>(batch);
}
