// What each symbol of libiotap.map must record, case by case, when
// tests/integration/programs/symbol_caller runs it (see symbol_caller.h for
// the program's side and its files).
//
//   specs["read"] = {{
//       {"ok", {E(OP_READ, "data.bin").Tracked(100).Req(50).Res(50)}},
//       {"ebadf", {E(OP_READ).Req(10).Fail(EBADF)}},
//   }};
//
// A case lists every event recorded between its two markers, in order, with
// every field: an event the test does not expect, or a field that differs,
// fails it. Paths are relative to the program's work directory.

#ifndef IOTAP_TESTS_INTEGRATION_SYMBOL_CASES_H_
#define IOTAP_TESTS_INTEGRATION_SYMBOL_CASES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "iotap/trace.pb.h"
#include "tests/integration/testing.h"

namespace iotap::testing {

// One expected event. Unset fields are expected to be zero.
struct Ev {
  Op op = OP_UNSPECIFIED;
  // Relative to the work directory; "" = no file; "@tmp" = the one file
  // named tmp* that the program made (mkstemp's random name). Names that are
  // not paths (marks) as they are.
  std::string file;
  int64_t result = 0;
  uint32_t error = 0;
  bool result_is_ret = false;  // see Ret()
  std::optional<int64_t> offset;
  bool tracked = false;  // FLAG_OFFSET_TRACKED
  uint64_t requested = 0;
  uint64_t aux = 0;
  // For ops whose aux is a string id (rename, copies): the file it names.
  std::optional<std::string> aux_file;
  uint32_t more_flags = 0;  // beyond FLAG_HAS_OFFSET and FLAG_OFFSET_TRACKED

  Ev Res(int64_t r) const {
    Ev e = *this;
    e.result = r;
    return e;
  }
  // result -1 with `err`.
  Ev Fail(uint32_t err) const {
    Ev e = *this;
    e.result = -1;
    e.error = err;
    return e;
  }
  // errno without a -1 result (stdio calls that return a short count).
  Ev Error(uint32_t err) const {
    Ev e = *this;
    e.error = err;
    return e;
  }
  // result, and error if it is negative, as the program printed them.
  Ev Ret() const {
    Ev e = *this;
    e.result_is_ret = true;
    return e;
  }
  // An explicit offset (pread, lseek...).
  Ev At(int64_t o) const {
    Ev e = *this;
    e.offset = o;
    return e;
  }
  // An offset the shim tracked (read, fread...).
  Ev Tracked(int64_t o) const {
    Ev e = *this;
    e.offset = o;
    e.tracked = true;
    return e;
  }
  Ev Req(uint64_t n) const {
    Ev e = *this;
    e.requested = n;
    return e;
  }
  Ev Aux(uint64_t a) const {
    Ev e = *this;
    e.aux = a;
    return e;
  }
  Ev AuxFile(std::string f) const {
    Ev e = *this;
    e.aux_file = std::move(f);
    return e;
  }
  Ev Flags(uint32_t f) const {
    Ev e = *this;
    e.more_flags = f;
    return e;
  }
};

inline Ev E(Op op, std::string file = "") {
  Ev e;
  e.op = op;
  e.file = std::move(file);
  return e;
}

// One bracketed call: its label (as the program prints it) and its events.
struct Case {
  std::string label;
  std::vector<Ev> events;
};

// Everything one run of the program left, for the checks of lifecycle symbols.
struct SymbolRun {
  std::string symbol;
  std::string workdir;  // of the traced run
  std::string program;  // absolute path of symbol_caller
  RunResult traced;
  RunResult plain;  // without the shim
  LoadedRun trace;
  const LoadedProcess* main = nullptr;  // the process whose argv[1] is the symbol

  // The process whose argv[1] is `role` ("exec-child", "spawn-child").
  const LoadedProcess* Role(const std::string& role) const;
};

struct SymbolSpec {
  std::vector<Case> cases;
  int exit_code = 0;  // of both runs; -1 when a signal ends them
  int signal = 0;
  // The main process's end of trace, checked unless `check` replaces it:
  // REASON_EXIT with exit_code.
  std::function<void(const SymbolRun&)> check;
};

using SpecTable = std::map<std::string, SymbolSpec>;

// Each family's expectations (symbol_cases_*.cc).
void AddIoSpecs(SpecTable* specs);
void AddOpenSpecs(SpecTable* specs);
void AddMetaSpecs(SpecTable* specs);
void AddStdioSpecs(SpecTable* specs);
void AddProcessSpecs(SpecTable* specs);
void AddWaitSpecs(SpecTable* specs);

// Every symbol's expectations, the marker API's included.
const SpecTable& AllSpecs();

// Events of `process`'s main thread (tid = pid), in the order recorded.
std::vector<const LoadedEvent*> MainThreadEvents(const LoadedProcess& process);
// ExecNotice packets of `process`, in order.
std::vector<ExecNotice> ExecNotices(const LoadedProcess& process);
// `e` as one line with every field, paths relative to `workdir`.
std::string Render(const LoadedEvent& e, const std::string& workdir);

}  // namespace iotap::testing

#endif  // IOTAP_TESTS_INTEGRATION_SYMBOL_CASES_H_
