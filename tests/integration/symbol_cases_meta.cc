// Expected events of the calls around the data (symbol_caller_meta.c):
// data.bin (4096 bytes) on descriptor 20, out.bin on 21, dir/ on 23; `link`
// points at data.bin (a link of 8 bytes); dir/a holds 3 bytes.

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>

#include "tests/integration/symbol_cases.h"

namespace iotap::testing {

void AddMetaSpecs(SpecTable* specs) {
  SpecTable& s = *specs;

  // lseek: offset = the offset asked for, aux = whence, result = new offset;
  // the next read starts there.
  for (const char* name : {"lseek", "lseek64"}) {
    s[name].cases = {
        {"set", {E(OP_LSEEK, "data.bin").At(123).Res(123).Aux(SEEK_SET)}},
        {"read", {E(OP_READ, "data.bin").Tracked(123).Req(10).Res(10)}},
        {"end", {E(OP_LSEEK, "data.bin").At(-10).Res(4086).Aux(SEEK_END)}},
        {"einval", {E(OP_LSEEK, "data.bin").At(-1).Fail(EINVAL).Aux(SEEK_SET)}},
    };
  }
  s["fsync"].cases = {
      {"ok", {E(OP_FSYNC, "out.bin").Res(0)}},
      {"ebadf", {E(OP_FSYNC).Fail(EBADF)}},
  };
  s["fdatasync"].cases = {
      {"ok", {E(OP_FDATASYNC, "out.bin").Res(0)}},
      {"ebadf", {E(OP_FDATASYNC).Fail(EBADF)}},
  };

  // File mappings only: aux = protection; anonymous memory records nothing.
  for (const char* name : {"mmap", "mmap64"}) {
    s[name].cases = {
        {"file", {E(OP_MMAP, "data.bin").At(0).Req(4096).Res(0).Aux(PROT_READ)}},
        {"anon", {}},
        {"einval", {E(OP_MMAP, "data.bin").At(100).Req(4096).Fail(EINVAL).Aux(PROT_READ)}},
    };
  }
  s["munmap"].cases = {
      {"file", {E(OP_MUNMAP, "data.bin").Req(4096).Res(0)}},
      {"anon", {}},
  };
  // mremap of a file mapping: offset = the mapping's, requested = the new
  // length, aux = the old one.
  s["mremap"].cases = {
      {"file", {E(OP_MREMAP, "data.bin").At(0).Req(8192).Res(0).Aux(4096)}},
      {"anon", {}},
      {"einval", {}},
  };
  // posix_fadvise returns its error instead of setting errno.
  for (const char* name : {"posix_fadvise", "posix_fadvise64"}) {
    s[name].cases = {
        {"ok", {E(OP_FADVISE, "data.bin").At(0).Req(4096).Res(0).Aux(POSIX_FADV_SEQUENTIAL)}},
        {"einval", {E(OP_FADVISE, "data.bin").At(0).Req(4096).Fail(EINVAL).Aux(99)}},
    };
  }

  // The stat family: aux = st_size on success. stat follows `link` to
  // data.bin's 4096 bytes; lstat sees the link's own 8.
  for (const char* name : {"stat", "stat64", "__xstat", "__xstat64"}) {
    s[name].cases = {
        {"ok", {E(OP_STAT, "data.bin").Res(0).Aux(4096)}},
        {"link", {E(OP_STAT, "link").Res(0).Aux(4096)}},
        {"enoent", {E(OP_STAT, "missing").Fail(ENOENT)}},
    };
  }
  for (const char* name : {"lstat", "lstat64", "__lxstat", "__lxstat64"}) {
    s[name].cases = {
        {"ok", {E(OP_LSTAT, "data.bin").Res(0).Aux(4096)}},
        {"link", {E(OP_LSTAT, "link").Res(0).Aux(8)}},
        {"enoent", {E(OP_LSTAT, "missing").Fail(ENOENT)}},
    };
  }
  for (const char* name : {"fstat", "fstat64", "__fxstat", "__fxstat64"}) {
    s[name].cases = {
        {"ok", {E(OP_FSTAT, "data.bin").Res(0).Aux(4096)}},
        {"ebadf", {E(OP_FSTAT).Fail(EBADF)}},
    };
  }
  // Relative to a directory descriptor, with AT_SYMLINK_NOFOLLOW, and with
  // AT_EMPTY_PATH naming the descriptor itself.
  for (const char* name : {"fstatat", "fstatat64", "__fxstatat", "__fxstatat64", "statx"}) {
    Op op = std::string(name) == "statx" ? OP_STATX : OP_FSTATAT;
    s[name].cases = {
        {"ok", {E(op, "dir/a").Res(0).Aux(3)}},
        {"nofollow", {E(op, "link").Res(0).Aux(8)}},
        {"empty", {E(op, "data.bin").Res(0).Aux(4096)}},
        {"enoent", {E(op, "dir/missing").Fail(ENOENT)}},
    };
  }

  // Directories: result = the DIR's descriptor; readdir 1 per entry, 0 at
  // the end (".", ".." and "a").
  s["opendir"].cases = {
      {"ok", {E(OP_OPENDIR, "dir").Ret()}},
      {"enoent", {E(OP_OPENDIR, "missing").Fail(ENOENT)}},
  };
  s["fdopendir"].cases = {
      {"ok", {E(OP_OPENDIR, "dir").Res(23)}},
      {"readdir", {E(OP_READDIR, "dir").Res(1)}},
      {"enotdir", {E(OP_OPENDIR, "data.bin").Fail(ENOTDIR)}},
  };
  for (const char* name : {"readdir", "readdir64"}) {
    s[name].cases = {
        {"entry", {E(OP_READDIR, "dir").Res(1)}},
        {"entry", {E(OP_READDIR, "dir").Res(1)}},
        {"entry", {E(OP_READDIR, "dir").Res(1)}},
        {"end", {E(OP_READDIR, "dir").Res(0)}},
    };
  }
  s["closedir"].cases = {
      {"ok", {E(OP_CLOSEDIR, "dir").Res(0)}},
      {"reuse", {E(OP_READ, "text.txt").Tracked(0).Req(5).Res(5)}},
  };

  // Names. rename's aux is the new name.
  s["unlink"].cases = {
      {"ok", {E(OP_UNLINK, "victim").Res(0)}},
      {"enoent", {E(OP_UNLINK, "victim").Fail(ENOENT)}},
  };
  s["unlinkat"].cases = {
      {"ok", {E(OP_UNLINK, "dir/victim").Res(0)}},
      {"removedir", {E(OP_RMDIR, "dir/sub").Res(0)}},
      {"enoent", {E(OP_UNLINK, "dir/victim").Fail(ENOENT)}},
  };
  s["rename"].cases = {
      {"ok", {E(OP_RENAME, "old").Res(0).AuxFile("new")}},
      {"enoent", {E(OP_RENAME, "old").Fail(ENOENT).AuxFile("other")}},
  };
  s["renameat"].cases = {
      {"ok", {E(OP_RENAME, "dir/a").Res(0).AuxFile("moved")}},
      {"enoent", {E(OP_RENAME, "dir/a").Fail(ENOENT).AuxFile("other")}},
  };
  s["renameat2"].cases = {
      {"ok", {E(OP_RENAME, "old").Res(0).AuxFile("dir/b")}},
      {"eexist", {E(OP_RENAME, "text.txt").Fail(EEXIST).AuxFile("data.bin")}},
  };
  s["mkdir"].cases = {
      {"ok", {E(OP_MKDIR, "nd").Res(0)}},
      {"eexist", {E(OP_MKDIR, "nd").Fail(EEXIST)}},
  };
  s["mkdirat"].cases = {
      {"ok", {E(OP_MKDIR, "dir/nd").Res(0)}},
      {"eexist", {E(OP_MKDIR, "dir/nd").Fail(EEXIST)}},
  };
  s["rmdir"].cases = {
      {"ok", {E(OP_RMDIR, "gone").Res(0)}},
      {"enoent", {E(OP_RMDIR, "gone").Fail(ENOENT)}},
  };
}

}  // namespace iotap::testing
