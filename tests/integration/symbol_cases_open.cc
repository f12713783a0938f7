// Expected events of the descriptor calls (symbol_caller_open.c): data.bin on
// descriptor 20 at offset 100, text.txt on 22, dir/ on 23.

#include <errno.h>
#include <fcntl.h>

#include "tests/integration/symbol_cases.h"

namespace iotap::testing {

void AddOpenSpecs(SpecTable* specs) {
  SpecTable& s = *specs;

  // aux is the open flags as the caller passed them; paths are made absolute
  // and normalised; O_DIRECT and O_TMPFILE depend on the file system, so
  // their result is whatever the program saw.
  for (const char* name : {"open", "open64"}) {
    s[name].cases = {
        {"ok", {E(OP_OPEN, "data.bin").Ret().Aux(O_RDONLY)}},
        {"create", {E(OP_OPEN, "new.bin").Ret().Aux(O_WRONLY | O_CREAT | O_TRUNC)}},
        {"dotdot", {E(OP_OPEN, "text.txt").Ret().Aux(O_RDONLY)}},
        {"tmpfile", {E(OP_OPEN, "dir").Ret().Aux(O_TMPFILE | O_RDWR)}},
        {"direct", {E(OP_OPEN, "data.bin").Ret().Aux(O_RDONLY | O_DIRECT).Flags(FLAG_O_DIRECT)}},
        {"enoent", {E(OP_OPEN, "missing").Fail(ENOENT).Aux(O_RDONLY)}},
    };
  }
  for (const char* name : {"__open_2", "__open64_2"}) {
    s[name].cases = {
        {"ok", {E(OP_OPEN, "data.bin").Ret().Aux(O_RDONLY)}},
        {"enoent", {E(OP_OPEN, "missing").Fail(ENOENT).Aux(O_RDONLY)}},
    };
  }
  for (const char* name : {"openat", "openat64"}) {
    s[name].cases = {
        {"ok", {E(OP_OPENAT, "dir/a").Ret().Aux(O_RDONLY)}},
        {"create", {E(OP_OPENAT, "dir/c").Ret().Aux(O_RDWR | O_CREAT)}},
        {"absolute", {E(OP_OPENAT, "text.txt").Ret().Aux(O_RDONLY)}},
        {"cwd", {E(OP_OPENAT, "text.txt").Ret().Aux(O_RDONLY)}},
        {"enoent", {E(OP_OPENAT, "dir/missing").Fail(ENOENT).Aux(O_RDONLY)}},
    };
  }
  for (const char* name : {"__openat_2", "__openat64_2"}) {
    s[name].cases = {
        {"ok", {E(OP_OPENAT, "dir/a").Ret().Aux(O_RDONLY)}},
        {"enoent", {E(OP_OPENAT, "dir/missing").Fail(ENOENT).Aux(O_RDONLY)}},
    };
  }
  for (const char* name : {"creat", "creat64"}) {
    const int flags = O_CREAT | O_WRONLY | O_TRUNC;
    s[name].cases = {
        {"ok", {E(OP_CREAT, "made.bin").Ret().Aux(flags)}},
        {"enoent", {E(OP_CREAT, "nodir/x").Fail(ENOENT).Aux(flags)}},
    };
  }

  // mkstemp and friends open O_RDWR | O_CREAT | O_EXCL plus their flags; a
  // template without XXXXXX is refused and recorded under its own name.
  struct Mkstemp {
    const char* name;
    int flags;
    bool suffix;
  };
  const int kMade = O_RDWR | O_CREAT | O_EXCL;
  for (const Mkstemp& m :
       {Mkstemp{"mkstemp", 0, false}, Mkstemp{"mkstemp64", 0, false},
        Mkstemp{"mkostemp", O_CLOEXEC, false}, Mkstemp{"mkostemp64", O_CLOEXEC, false},
        Mkstemp{"mkstemps", 0, true}, Mkstemp{"mkstemps64", 0, true},
        Mkstemp{"mkostemps", O_APPEND, true}, Mkstemp{"mkostemps64", O_APPEND, true}}) {
    s[m.name].cases = {
        {"ok", {E(OP_MKSTEMP, "@tmp").Ret().Aux(m.flags | kMade)}},
        {"einval", {E(OP_MKSTEMP, m.suffix ? "bad.dat" : "bad").Fail(EINVAL).Aux(m.flags | kMade)}},
    };
  }

  // A closed descriptor is forgotten: reopened behind the shim's back, it
  // is identified afresh.
  s["close"].cases = {
      {"ok", {E(OP_CLOSE, "data.bin").Res(0)}},
      {"ebadf", {E(OP_CLOSE).Fail(EBADF)}},
      {"reuse", {E(OP_READ, "text.txt").Tracked(0).Req(5).Res(5)}},
  };

  // Duplicates share data.bin's position (100, then 110); dup2 and dup3
  // replace text.txt's descriptor 22.
  for (const char* name : {"dup", "dup2", "dup3"}) {
    Ev duplicated = E(OP_DUP, "data.bin").Aux(20);
    s[name].cases = {
        {"ok", {name[3] != '\0' ? duplicated.Res(22) : duplicated.Ret()}},
        {"read-new", {E(OP_READ, "data.bin").Tracked(100).Req(10).Res(10)}},
        {"read-old", {E(OP_READ, "data.bin").Tracked(110).Req(10).Res(10)}},
        {"ebadf", {E(OP_DUP).Fail(EBADF).Aux(999)}},
    };
  }
  s["dup3"].cases.push_back({"einval", {E(OP_DUP, "data.bin").Fail(EINVAL).Aux(20)}});
  // Only F_DUPFD and F_DUPFD_CLOEXEC are recorded.
  for (const char* name : {"fcntl", "fcntl64"}) {
    s[name].cases = {
        {"dupfd", {E(OP_DUP, "data.bin").Res(50).Aux(20)}},
        {"dupfd-cloexec", {E(OP_DUP, "data.bin").Res(60).Aux(20)}},
        {"getfd", {}},
        {"read", {E(OP_READ, "data.bin").Tracked(100).Req(10).Res(10)}},
        {"ebadf", {E(OP_DUP).Fail(EBADF).Aux(999)}},
    };
  }

  // No events of their own: their effect shows in the next call.
  s["close_range"].cases = {
      {"ok", {}},      {"reused", {E(OP_READ, "text.txt").Tracked(0).Req(5).Res(5)}},
      {"cloexec", {}}, {"kept", {E(OP_READ, "data.bin").Tracked(0).Req(5).Res(5)}},
      {"einval", {}},
  };
  s["closefrom"].cases = {
      {"ok", {}},
      {"reused", {E(OP_READ, "text.txt").Tracked(0).Req(5).Res(5)}},
  };
  for (const char* name : {"chdir", "fchdir"}) {
    s[name].cases = {
        {"ok", {}},
        {"open", {E(OP_OPEN, "dir/a").Ret().Aux(O_RDONLY)}},
        {"error", {}},
        {"open-again", {E(OP_OPEN, "dir/a").Ret().Aux(O_RDONLY)}},
    };
  }
}

}  // namespace iotap::testing
