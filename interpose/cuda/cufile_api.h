/* The part of NVIDIA's cuFile (GPUDirect Storage) C API that iotap wraps.
 *
 * The CUDA toolkit iotap builds against has no cufile.h (it ships with the
 * GDS packages), so these declarations are written from NVIDIA's published
 * API: "cuFile API Reference Guide", NVIDIA GPUDirect Storage documentation,
 * https://docs.nvidia.com/gpudirect-storage/api-reference-guide/ (sections
 * "cuFile Driver APIs", "cuFile IO APIs", "cuFile Batch APIs" and
 * "cuFile Stream APIs"; types from the "Data Types" section), as of GDS 1.15
 * (CUDA 13.0). Names, types, field order and enum values are NVIDIA's; only
 * what iotap and its test double use is declared. libcufile.so.0 exports the
 * functions with C linkage and no symbol versions.
 *
 * The layout matters: the shim reads CUfileDescr_t and CUfileIOParams_t that
 * programs built against the real header pass in. */

#ifndef IOTAP_INTERPOSE_CUDA_CUFILE_API_H_
#define IOTAP_INTERPOSE_CUDA_CUFILE_API_H_

#include <cuda.h> /* CUresult, CUstream */
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: 0, or CUFILEOP_BASE_ERR plus a small number. cuFileRead and
 * cuFileWrite return the negated code (or -1 with errno). */
#define CUFILEOP_BASE_ERR 5000
typedef enum CUfileOpError {
  CU_FILE_SUCCESS = 0,
  CU_FILE_DRIVER_NOT_INITIALIZED = CUFILEOP_BASE_ERR + 1,
  CU_FILE_INVALID_VALUE = CUFILEOP_BASE_ERR + 22,
  CU_FILE_HANDLE_NOT_REGISTERED = CUFILEOP_BASE_ERR + 27,
  CU_FILE_IO_MAX_ERROR = CUFILEOP_BASE_ERR + 50
} CUfileOpError;

typedef struct CUfileError {
  CUfileOpError err;
  CUresult cu_err; /* the driver's result when err is CU_FILE_CUDA_DRIVER_ERROR */
} CUfileError_t;

enum CUfileFileHandleType {
  CU_FILE_HANDLE_TYPE_OPAQUE_FD = 1, /* a Linux file descriptor */
  CU_FILE_HANDLE_TYPE_OPAQUE_WIN32 = 2,
  CU_FILE_HANDLE_TYPE_USERSPACE_FS = 3
};

/* A user-space file system's operation table; iotap only passes it on. */
typedef struct CUfileFSOps CUfileFSOps_t;

typedef struct CUfileDescr_t {
  enum CUfileFileHandleType type;
  union {
    int fd;
    void* handle;
  } handle;
  const CUfileFSOps_t* fs_ops;
} CUfileDescr_t;

typedef void* CUfileHandle_t;
typedef void* CUfileBatchHandle_t;

typedef enum CUfileOpcode { CUFILE_READ = 0, CUFILE_WRITE } CUfileOpcode_t;

typedef enum CUFILEStatus_enum {
  CUFILE_WAITING = 0x1,
  CUFILE_PENDING = 0x2,
  CUFILE_INVALID = 0x4,
  CUFILE_CANCELED = 0x8,
  CUFILE_COMPLETE = 0x10,
  CUFILE_TIMEOUT = 0x20,
  CUFILE_FAILED = 0x40
} CUfileStatus_t;

typedef enum cufileBatchMode { CUFILE_BATCH = 1 } CUfileBatchMode_t;

typedef struct CUfileIOParams {
  CUfileBatchMode_t mode; /* must come first */
  union {
    struct {
      void* devPtr_base;
      off_t file_offset;
      off_t devPtr_offset;
      size_t size;
    } batch;
  } u;
  CUfileHandle_t fh;
  CUfileOpcode_t opcode;
  void* cookie;
} CUfileIOParams_t;

typedef struct CUfileIOEvents {
  void* cookie;
  CUfileStatus_t status;
  size_t ret;
} CUfileIOEvents_t;

CUfileError_t cuFileHandleRegister(CUfileHandle_t* fh, CUfileDescr_t* descr);
void cuFileHandleDeregister(CUfileHandle_t fh);

ssize_t cuFileRead(CUfileHandle_t fh, void* bufPtr_base, size_t size, off_t file_offset,
                   off_t bufPtr_offset);
ssize_t cuFileWrite(CUfileHandle_t fh, const void* bufPtr_base, size_t size, off_t file_offset,
                    off_t bufPtr_offset);

CUfileError_t cuFileReadAsync(CUfileHandle_t fh, void* bufPtr_base, size_t* size_p,
                              off_t* file_offset_p, off_t* bufPtr_offset_p, ssize_t* bytes_read_p,
                              CUstream stream);
CUfileError_t cuFileWriteAsync(CUfileHandle_t fh, void* bufPtr_base, size_t* size_p,
                               off_t* file_offset_p, off_t* bufPtr_offset_p,
                               ssize_t* bytes_written_p, CUstream stream);

CUfileError_t cuFileBatchIOSetUp(CUfileBatchHandle_t* batch_idp, unsigned nr);
CUfileError_t cuFileBatchIOSubmit(CUfileBatchHandle_t batch_idp, unsigned nr,
                                  CUfileIOParams_t* iocbp, unsigned int flags);
CUfileError_t cuFileBatchIOGetStatus(CUfileBatchHandle_t batch_idp, unsigned min_nr, unsigned* nr,
                                     CUfileIOEvents_t* iocbp, struct timespec* timeout);
void cuFileBatchIODestroy(CUfileBatchHandle_t batch_idp);

#ifdef __cplusplus
}
#endif

#endif /* IOTAP_INTERPOSE_CUDA_CUFILE_API_H_ */
