// Expected events of the POSIX data transfers (symbol_caller_io.c): data.bin
// (4096 bytes) is read on descriptor 20, out.bin written on descriptor 21.

#include <errno.h>

#include "tests/integration/symbol_cases.h"

namespace iotap::testing {

void AddIoSpecs(SpecTable* specs) {
  SpecTable& s = *specs;

  // Reads at the tracked position (lseek'd to 100), which each read advances.
  for (const char* name : {"read", "__read_chk"}) {
    s[name].cases = {
        {"ok", {E(OP_READ, "data.bin").Tracked(100).Req(50).Res(50)}},
        {"next", {E(OP_READ, "data.bin").Tracked(150).Req(50).Res(50)}},
        {"ebadf", {E(OP_READ).Req(10).Fail(EBADF)}},
    };
  }

  // Explicit offsets, a short read at the end, and a position left alone.
  for (const char* name : {"pread", "pread64", "__pread_chk", "__pread64_chk"}) {
    s[name].cases = {
        {"ok", {E(OP_PREAD, "data.bin").At(200).Req(50).Res(50)}},
        {"short", {E(OP_PREAD, "data.bin").At(4080).Req(50).Res(16)}},
        {"einval", {E(OP_PREAD, "data.bin").At(-1).Req(10).Fail(EINVAL)}},
        {"read", {E(OP_READ, "data.bin").Tracked(0).Req(10).Res(10)}},
    };
  }

  // Vectors of 30 + 20 bytes. When the kernel refused the vector without
  // reading it, the shim must not read it either: nothing is requested.
  s["readv"].cases = {
      {"ok", {E(OP_READV, "data.bin").Tracked(100).Req(50).Res(50).Aux(2)}},
      {"einval", {E(OP_READV, "data.bin").Tracked(150).Fail(EINVAL).Aux(1 << 20)}},
      {"ebadf", {E(OP_READV).Fail(EBADF).Aux(2)}},
  };
  for (const char* name : {"preadv", "preadv64"}) {
    s[name].cases = {
        {"ok", {E(OP_PREADV, "data.bin").At(300).Req(50).Res(50).Aux(2)}},
        {"ebadf", {E(OP_PREADV).At(300).Fail(EBADF).Aux(2)}},
    };
  }
  // preadv2 at offset -1 reads at the position, like readv.
  for (const char* name : {"preadv2", "preadv64v2"}) {
    s[name].cases = {
        {"ok", {E(OP_PREADV2, "data.bin").At(300).Req(50).Res(50).Aux(2)}},
        {"current", {E(OP_PREADV2, "data.bin").Tracked(100).Req(50).Res(50).Aux(2)}},
        {"ebadf", {E(OP_PREADV2).At(300).Fail(EBADF).Aux(2)}},
    };
  }

  // A write to a read-only descriptor still reports the position it was at;
  // appending writes have none.
  s["write"].cases = {
      {"ok", {E(OP_WRITE, "out.bin").Tracked(0).Req(11).Res(11)}},
      {"next", {E(OP_WRITE, "out.bin").Tracked(11).Req(3).Res(3)}},
      {"ebadf", {E(OP_WRITE, "data.bin").Tracked(0).Req(1).Fail(EBADF)}},
      {"append", {E(OP_WRITE, "app.bin").Req(2).Res(2)}},
  };
  for (const char* name : {"pwrite", "pwrite64"}) {
    s[name].cases = {
        {"ok", {E(OP_PWRITE, "out.bin").At(100).Req(5).Res(5)}},
        {"ebadf", {E(OP_PWRITE, "data.bin").At(0).Req(1).Fail(EBADF)}},
    };
  }
  s["writev"].cases = {
      {"ok", {E(OP_WRITEV, "out.bin").Tracked(0).Req(11).Res(11).Aux(2)}},
      {"ebadf", {E(OP_WRITEV).Fail(EBADF).Aux(2)}},
  };
  for (const char* name : {"pwritev", "pwritev64"}) {
    s[name].cases = {
        {"ok", {E(OP_PWRITEV, "out.bin").At(100).Req(11).Res(11).Aux(2)}},
        {"ebadf", {E(OP_PWRITEV).At(100).Fail(EBADF).Aux(2)}},
    };
  }
  for (const char* name : {"pwritev2", "pwritev64v2"}) {
    s[name].cases = {
        {"ok", {E(OP_PWRITEV2, "out.bin").At(100).Req(11).Res(11).Aux(2)}},
        {"current", {E(OP_PWRITEV2, "out.bin").Tracked(0).Req(11).Res(11).Aux(2)}},
        {"ebadf", {E(OP_PWRITEV2).At(100).Fail(EBADF).Aux(2)}},
    };
  }

  // Two events per copy, each naming the other file in aux. An offset
  // pointer gives an explicit offset (the kernel advanced it by the bytes
  // copied); without one the descriptors' positions move.
  s["copy_file_range"].cases = {
      {"ok",
       {E(OP_COPY_FILE_RANGE_IN, "data.bin").At(100).Req(200).Res(200).AuxFile("out.bin"),
        E(OP_COPY_FILE_RANGE_OUT, "out.bin").Tracked(0).Req(200).Res(200).AuxFile("data.bin")}},
      {"tracked",
       {E(OP_COPY_FILE_RANGE_IN, "data.bin").Tracked(0).Req(100).Res(100).AuxFile("out.bin"),
        E(OP_COPY_FILE_RANGE_OUT, "out.bin").Tracked(200).Req(100).Res(100).AuxFile("data.bin")}},
      {"ebadf",
       {E(OP_COPY_FILE_RANGE_IN).Req(10).Fail(EBADF).AuxFile("out.bin"),
        E(OP_COPY_FILE_RANGE_OUT, "out.bin").Tracked(300).Req(10).Fail(EBADF).AuxFile("")}},
  };
  for (const char* name : {"sendfile", "sendfile64"}) {
    s[name].cases = {
        {"ok",
         {E(OP_SENDFILE_IN, "data.bin").At(50).Req(100).Res(100).AuxFile("out.bin"),
          E(OP_SENDFILE_OUT, "out.bin").Tracked(0).Req(100).Res(100).AuxFile("data.bin")}},
        {"tracked",
         {E(OP_SENDFILE_IN, "data.bin").Tracked(0).Req(60).Res(60).AuxFile("out.bin"),
          E(OP_SENDFILE_OUT, "out.bin").Tracked(100).Req(60).Res(60).AuxFile("data.bin")}},
        {"ebadf",
         {E(OP_SENDFILE_IN).Req(10).Fail(EBADF).AuxFile("out.bin"),
          E(OP_SENDFILE_OUT, "out.bin").Tracked(160).Req(10).Fail(EBADF).AuxFile("")}},
    };
  }
}

}  // namespace iotap::testing
