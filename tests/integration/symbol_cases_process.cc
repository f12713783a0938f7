// Expectations for the process lifecycle (symbol_caller_process.c) and the
// marker API. Each lifecycle case first writes "bye" to out.bin, an event
// that must reach the trace however the process ends; the end-of-trace packet
// says how it ended, exec notices say what it ran, and an exec'd or spawned
// image writes a trace of its own.

#include <errno.h>
#include <signal.h>

#include <string>

#include "gtest/gtest.h"
#include "tests/integration/symbol_cases.h"

namespace iotap::testing {
namespace {

const Case kBefore = {"before", {E(OP_WRITE, "out.bin").Tracked(0).Req(3).Res(3)}};

void ExpectEnd(const LoadedProcess& p, EndOfTrace::Reason reason, int code, bool known) {
  ASSERT_TRUE(p.end.has_value()) << p.trace_file;
  EXPECT_EQ(p.end->reason(), reason) << EndOfTrace::Reason_Name(p.end->reason());
  EXPECT_EQ(p.end->exit_code_known(), known);
  if (known) {
    EXPECT_EQ(p.end->exit_code(), code);
  }
}

// How an exit call ends the one traced process.
std::function<void(const SymbolRun&)> EndsWith(EndOfTrace::Reason reason, int code, bool known) {
  return [=](const SymbolRun& run) {
    EXPECT_EQ(run.trace.processes.size(), 1u);
    ExpectEnd(*run.main, reason, code, known);
    EXPECT_TRUE(ExecNotices(*run.main).empty());
  };
}

// The image this program became or started: its own trace, its one stat of
// data.bin, and the exit code 4 it returned.
void ExpectChild(const SymbolRun& run, const std::string& role, int ppid) {
  const LoadedProcess* child = run.Role(role);
  ASSERT_NE(child, nullptr) << "no trace of the " << role << " image";
  EXPECT_NE(child->trace_file, run.main->trace_file);
  EXPECT_EQ(child->header.origin(), ProcessHeader::ORIGIN_EXEC);
  EXPECT_EQ(child->header.ppid(), ppid);
  ExpectEnd(*child, EndOfTrace::REASON_EXIT, 4, true);
  std::vector<std::string> events;
  for (const LoadedEvent* e : MainThreadEvents(*child)) events.push_back(Render(*e, run.workdir));
  EXPECT_EQ(events, std::vector<std::string>{"OP_STAT file=data.bin result=0 aux=4096"});
}

struct NoticeSeen {
  std::string path;
  bool spawn;
  bool operator==(const NoticeSeen&) const = default;
};

void PrintTo(const NoticeSeen& n, std::ostream* os) {
  *os << "{" << n.path << (n.spawn ? ", spawn}" : "}");
}

std::vector<NoticeSeen> Notices(const LoadedProcess& p) {
  std::vector<NoticeSeen> seen;
  for (const ExecNotice& n : ExecNotices(p)) seen.push_back({n.path(), n.spawn()});
  return seen;
}

// exec*: a failed attempt (still traced, then tracing goes on) and the real
// one; the pid stays, the new image writes a new file.
std::function<void(const SymbolRun&)> Execs(std::string missing, std::string target) {
  return [=](const SymbolRun& run) {
    std::string path = target == "@self" ? run.program : target;
    EXPECT_EQ(Notices(*run.main), (std::vector<NoticeSeen>{{missing, false}, {path, false}}));
    ExpectEnd(*run.main, EndOfTrace::REASON_EXEC, 0, false);
    const LoadedProcess* child = run.Role("exec-child");
    ASSERT_NE(child, nullptr);
    EXPECT_EQ(child->header.pid(), run.main->header.pid());
    ExpectChild(run, "exec-child", run.main->header.ppid());
  };
}

std::function<void(const SymbolRun&)> Spawns(std::string missing, std::string target) {
  return [=](const SymbolRun& run) {
    std::string path = target == "@self" ? run.program : target;
    EXPECT_EQ(Notices(*run.main), (std::vector<NoticeSeen>{{missing, true}, {path, true}}));
    ExpectEnd(*run.main, EndOfTrace::REASON_EXIT, 0, true);
    ExpectChild(run, "spawn-child", run.main->header.pid());
  };
}

}  // namespace

void AddProcessSpecs(SpecTable* specs) {
  SpecTable& s = *specs;

  // main's return value reaches the trace through the wrapped main.
  s["__libc_start_main"] = {{kBefore}, 3, 0, EndsWith(EndOfTrace::REASON_EXIT, 3, true)};
  s["exit"] = {{kBefore}, 5, 0, EndsWith(EndOfTrace::REASON_EXIT, 5, true)};
  s["_exit"] = {{kBefore}, 6, 0, EndsWith(EndOfTrace::REASON_UNDERSCORE_EXIT, 6, true)};
  s["_Exit"] = {{kBefore}, 7, 0, EndsWith(EndOfTrace::REASON_UNDERSCORE_EXIT, 7, true)};
  s["abort"] = {{kBefore}, -1, SIGABRT, EndsWith(EndOfTrace::REASON_ABORT, 0, false)};

  // The failed attempt records no event; its notice names what was tried.
  // fexecve names no path.
  const Case kTried = {"enoent", {}};
  struct Exec {
    const char* name;
    const char* missing;
    const char* target;
  };
  for (const Exec& e :
       {Exec{"execve", "missing-program", "@self"}, Exec{"execv", "missing-program", "@self"},
        Exec{"execvp", "no-such-program-iotap", "symbol_caller"},
        Exec{"execvpe", "no-such-program-iotap", "symbol_caller"}, Exec{"fexecve", "", ""},
        Exec{"execveat", "missing-program", "@self"}, Exec{"execl", "missing-program", "@self"},
        Exec{"execlp", "no-such-program-iotap", "symbol_caller"},
        Exec{"execle", "missing-program", "@self"}}) {
    s[e.name] = {{kBefore, kTried}, 4, 0, Execs(e.missing, e.target)};
  }
  s["posix_spawn"] = {{kBefore, kTried, {"spawn", {}}}, 0, 0, Spawns("missing-program", "@self")};
  s["posix_spawnp"] = {
      {kBefore, kTried, {"spawn", {}}}, 0, 0, Spawns("no-such-program-iotap", "symbol_caller")};

  s["pthread_create"].cases = {{"ok", {}}};
  s["pthread_cancel"].cases = {{"ok", {}}};
  // io_uring's system calls through syscall(): SETUP requested = entries,
  // result = the ring's descriptor; ENTER requested = requests submitted,
  // aux = completions waited for; REGISTER aux = the opcode.
  const std::string kRing = "anon_inode:[io_uring]";
  s["syscall"].cases = {
      {"other", {}},
      {"uring_setup", {E(OP_URING_SETUP, kRing).Req(4).Ret()}},
      {"uring_enter", {E(OP_URING_ENTER, kRing).Res(0)}},
      {"uring_enter_ebadf", {E(OP_URING_ENTER).Fail(EBADF)}},
      {"uring_register_ebadf", {E(OP_URING_REGISTER).Fail(EBADF).Aux(2)}},
      {"close", {E(OP_CLOSE, kRing).Res(0)}},
  };
}

const SpecTable& AllSpecs() {
  static const SpecTable* specs = [] {
    auto* s = new SpecTable;
    AddIoSpecs(s);
    AddOpenSpecs(s);
    AddMetaSpecs(s);
    AddStdioSpecs(s);
    AddProcessSpecs(s);
    AddWaitSpecs(s);
    // The marker API: aux = step number; a mark is named by its string.
    (*s)["iotap_step_begin"].cases = {{"ok", {E(OP_STEP_BEGIN).Aux(7)}}};
    (*s)["iotap_step_end"].cases = {{"ok", {E(OP_STEP_END).Aux(7)}}};
    (*s)["iotap_mark"].cases = {{"ok", {E(OP_MARK, "hello")}}};
    (*s)["iotap_span"].cases = {{"ok", {E(OP_DATA_WAIT).Aux(7).Flags(FLAG_EXPLICIT_TIMES)}}};
    // The Python sampler's: interning records no event; a sample names its
    // stack (the bytes interned), thread (aux) and CPU time (requested).
    (*s)["iotap_py_intern"].cases = {{"ok", {}}};
    (*s)["iotap_py_sample"].cases = {{"ok",
                                      {E(OP_PY_SAMPLE, std::string("\x05\x0b", 2))
                                           .Aux(4242)
                                           .Req(1500000)
                                           .Flags(FLAG_EXPLICIT_TIMES)}}};
    (*s)["iotap_py_sampler"].cases = {{"ok", {E(OP_PY_SAMPLER, "CPython 3.11").Res(1).Aux(100)}}};
    (*s)["iotap_py_stacks"].cases = {{"outside-python", {}}};
    (*s)["iotap_py_run_sampler"].cases = {{"outside-python", {}}};
    (*s)["iotap_py_stop_sampler"].cases = {{"outside-python", {}}};
    return s;
  }();
  return *specs;
}

}  // namespace iotap::testing
