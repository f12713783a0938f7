// Expected events of the STDIO calls (symbol_caller_stdio.c): data.bin (4096
// bytes), text.txt ("line one\nline two\n"), out.txt written. Offsets are the
// stream's position, which buffering keeps apart from the descriptor's.

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

#include "tests/integration/symbol_cases.h"

namespace iotap::testing {

void AddStdioSpecs(SpecTable* specs) {
  SpecTable& s = *specs;

  // result = the stream's descriptor, aux = the mode as open flags.
  for (const char* name : {"fopen", "fopen64"}) {
    s[name].cases = {
        {"read", {E(OP_FOPEN, "data.bin").Ret().Aux(O_RDONLY)}},
        {"write", {E(OP_FOPEN, "out.txt").Ret().Aux(O_WRONLY | O_CREAT | O_TRUNC)}},
        {"append", {E(OP_FOPEN, "out.txt").Ret().Aux(O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC)}},
        {"enoent", {E(OP_FOPEN, "missing").Fail(ENOENT).Aux(O_RDONLY)}},
    };
  }
  // A stream on a descriptor starts at the descriptor's position (100).
  s["fdopen"].cases = {
      {"ok", {E(OP_FDOPEN, "data.bin").Res(20).Aux(20)}},
      {"fread", {E(OP_FREAD, "data.bin").Tracked(100).Req(10).Res(10)}},
      {"einval", {E(OP_FDOPEN, "data.bin").Fail(EINVAL).Aux(21)}},
      {"ebadf", {E(OP_FDOPEN).Fail(EBADF).Aux(999)}},
  };
  for (const char* name : {"freopen", "freopen64"}) {
    s[name].cases = {
        {"ok", {E(OP_FREOPEN, "text.txt").Ret().Aux(O_RDONLY)}},
        {"fgets", {E(OP_FGETS, "text.txt").Tracked(0).Req(100).Res(9)}},
        {"same-file", {E(OP_FREOPEN, "text.txt").Ret().Aux(O_RDONLY)}},
        {"fgets-again", {E(OP_FGETS, "text.txt").Tracked(0).Req(100).Res(9)}},
        {"enoent", {E(OP_FREOPEN, "missing").Fail(ENOENT).Aux(O_RDONLY)}},
    };
  }
  s["fclose"].cases = {
      {"ok", {E(OP_FCLOSE, "data.bin").Res(0)}},
      {"reuse", {E(OP_READ, "text.txt").Tracked(0).Req(5).Res(5)}},
  };

  // Bytes, not items: 5 items of 10 bytes from position 100; 6 bytes left at
  // 4090; a read from a write-only stream fails with EBADF and moves nothing.
  // stdin, reopened on data.bin, is a stream the shim never saw opened.
  for (const char* name : {"fread", "fread_unlocked", "__fread_chk", "__fread_unlocked_chk"}) {
    s[name].cases = {
        {"ok", {E(OP_FREAD, "data.bin").Tracked(100).Req(50).Res(50)}},
        {"next", {E(OP_FREAD, "data.bin").Tracked(150).Req(50).Res(50)}},
        {"eof", {E(OP_FREAD, "data.bin").Tracked(4090).Req(50).Res(6)}},
        {"ebadf", {E(OP_FREAD, "out.txt").Tracked(0).Req(10).Res(0).Error(EBADF)}},
        {"stdin", {E(OP_FREAD, "data.bin").Tracked(0).Req(10).Res(10)}},
        {"stdin-next", {E(OP_FREAD, "data.bin").Tracked(10).Req(10).Res(10)}},
    };
  }
  for (const char* name : {"fwrite", "fwrite_unlocked"}) {
    s[name].cases = {
        {"ok", {E(OP_FWRITE, "out.txt").Tracked(0).Req(5).Res(5)}},
        {"next", {E(OP_FWRITE, "out.txt").Tracked(5).Req(3).Res(3)}},
        {"ebadf", {E(OP_FWRITE, "data.bin").Tracked(0).Req(1).Res(0).Error(EBADF)}},
        {"append", {E(OP_FWRITE, "app.txt").Req(2).Res(2)}},
    };
  }
  // requested = the buffer size, result = the bytes of the line.
  for (const char* name : {"fgets", "fgets_unlocked", "__fgets_chk", "__fgets_unlocked_chk"}) {
    s[name].cases = {
        {"first", {E(OP_FGETS, "text.txt").Tracked(0).Req(100).Res(9)}},
        {"second", {E(OP_FGETS, "text.txt").Tracked(9).Req(100).Res(9)}},
        {"eof", {E(OP_FGETS, "text.txt").Tracked(18).Req(100).Res(0)}},
    };
  }
  // aux = the character; end of file is result -1 without an error.
  for (const char* name : {"fgetc", "getc", "_IO_getc"}) {
    s[name].cases = {
        {"first", {E(OP_FGETC, "text.txt").Tracked(0).Req(1).Res(1).Aux('l')}},
        {"second", {E(OP_FGETC, "text.txt").Tracked(1).Req(1).Res(1).Aux('i')}},
        {"eof", {E(OP_FGETC, "text.txt").Tracked(18).Req(1).Res(-1)}},
    };
  }
  for (const char* name : {"fputc", "putc", "_IO_putc"}) {
    s[name].cases = {
        {"ok", {E(OP_FPUTC, "out.txt").Tracked(0).Req(1).Res(1).Aux('A')}},
        {"next", {E(OP_FPUTC, "out.txt").Tracked(1).Req(1).Res(1).Aux('B')}},
        {"ebadf", {E(OP_FPUTC, "data.bin").Tracked(0).Req(1).Fail(EBADF).Aux('x')}},
    };
  }
  s["fputs"].cases = {
      {"ok", {E(OP_FPUTS, "out.txt").Tracked(0).Req(5).Res(5)}},
      {"ebadf", {E(OP_FPUTS, "data.bin").Tracked(0).Req(5).Fail(EBADF)}},
  };
  // "x=%d;" with 42: 5 bytes.
  for (const char* name : {"fprintf", "vfprintf"}) {
    s[name].cases = {
        {"ok", {E(OP_FPRINTF, "out.txt").Tracked(0).Req(5).Res(5)}},
        {"ebadf", {E(OP_FPRINTF, "data.bin").Tracked(0).Fail(EBADF)}},
    };
  }

  // Seeks: offset = where the stream is afterwards, requested = the offset
  // argument, aux = whence.
  for (const char* name : {"fseek", "fseeko", "fseeko64"}) {
    s[name].cases = {
        {"set", {E(OP_FSEEK, "data.bin").At(100).Req(100).Res(0).Aux(SEEK_SET)}},
        {"fread", {E(OP_FREAD, "data.bin").Tracked(100).Req(10).Res(10)}},
        {"cur", {E(OP_FSEEK, "data.bin").At(120).Req(10).Res(0).Aux(SEEK_CUR)}},
        {"end",
         {E(OP_FSEEK, "data.bin").At(4086).Req(static_cast<uint64_t>(-10)).Res(0).Aux(SEEK_END)}},
        {"einval",
         {E(OP_FSEEK, "data.bin").Req(static_cast<uint64_t>(-1)).Fail(EINVAL).Aux(SEEK_SET)}},
    };
  }
  s["rewind"].cases = {
      {"ok", {E(OP_FSEEK, "data.bin").At(0).Res(0).Aux(SEEK_SET)}},
      {"fread", {E(OP_FREAD, "data.bin").Tracked(0).Req(10).Res(10)}},
  };
  for (const char* name : {"fsetpos", "fsetpos64"}) {
    s[name].cases = {
        {"ok", {E(OP_FSEEK, "data.bin").At(100).Res(0).Aux(SEEK_SET)}},
        {"fread", {E(OP_FREAD, "data.bin").Tracked(100).Req(10).Res(10)}},
    };
  }
  // ftell and fgetpos alike: result = the position.
  for (const char* name : {"ftell", "ftello", "ftello64", "fgetpos", "fgetpos64"}) {
    s[name].cases = {
        {"ok", {E(OP_FTELL, "data.bin").Res(100)}},
        {"after-read", {E(OP_FTELL, "data.bin").Res(110)}},
    };
  }
  s["fflush"].cases = {
      {"ok", {E(OP_FFLUSH, "out.txt").Res(0)}},
      {"all", {E(OP_FFLUSH).Res(0)}},
  };
  s["fileno"].cases = {
      {"ok", {E(OP_FILENO, "data.bin").Ret()}},
  };
}

}  // namespace iotap::testing
