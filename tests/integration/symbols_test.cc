// Every symbol libiotap.so exports, called by a real program under the shim.
//
// For each name in interpose/libiotap.map (read when the test starts, so a
// symbol added to the map without cases fails here), symbol_caller runs the
// symbol's cases twice, without and with the shim, and the test checks:
//   - the program behaves the same: exit status, and every call's return
//     value and errno as it printed them;
//   - between the markers of each case, the trace holds exactly the expected
//     events, every field compared (symbol_cases_*.cc);
//   - how the process ended (end-of-trace packet), and for exec and spawn
//     the notices and the new image's own trace.

#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/integration/symbol_cases.h"
#include "tests/integration/testing.h"

namespace iotap::testing {

namespace fs = std::filesystem;

const LoadedProcess* SymbolRun::Role(const std::string& role) const {
  for (const LoadedProcess& p : trace.processes) {
    if (p.header.argv_size() > 1 && p.header.argv(1) == role) return &p;
  }
  return nullptr;
}

std::vector<const LoadedEvent*> MainThreadEvents(const LoadedProcess& process) {
  std::vector<const LoadedEvent*> events;
  for (const LoadedEvent& e : process.events) {
    if (static_cast<int>(e.tid) == process.header.pid()) events.push_back(&e);
  }
  return events;
}

std::vector<ExecNotice> ExecNotices(const LoadedProcess& process) {
  std::vector<ExecNotice> notices;
  for (const Packet& p : process.packets) {
    if (p.has_exec()) notices.push_back(p.exec());
  }
  return notices;
}

namespace {

bool AuxIsString(Op op) {
  return op == OP_RENAME || op == OP_COPY_FILE_RANGE_IN || op == OP_COPY_FILE_RANGE_OUT ||
         op == OP_SENDFILE_IN || op == OP_SENDFILE_OUT;
}

// Paths relative to the work directory; a socket ("socket:[INODE]") as
// "socket", whatever its inode.
std::string Relative(const std::string& name, const std::string& workdir) {
  if (name == workdir) return ".";
  if (name.rfind("socket:[", 0) == 0) return "socket";
  if (name.rfind(workdir + "/", 0) == 0) return name.substr(workdir.size() + 1);
  return name;
}

// One line per event, every field that is set; expected and recorded events
// go through it alike, so a difference reads as a difference of lines.
struct Fields {
  Op op = OP_UNSPECIFIED;
  std::string file;
  int64_t result = 0;
  uint32_t error = 0;
  uint32_t flags = 0;
  int64_t offset = 0;
  uint64_t requested = 0;
  std::string aux;  // a number, or a file for ops whose aux is a string id
  uint64_t parent = 0;
};

std::string Line(const Fields& f) {
  std::ostringstream out;
  out << Op_Name(f.op) << " file=" << f.file << " result=" << f.result;
  if (f.error != 0) {
    const char* name = strerrorname_np(static_cast<int>(f.error));
    out << " error=" << (name != nullptr ? name : std::to_string(f.error));
  }
  if (f.flags & FLAG_HAS_OFFSET) out << " offset=" << f.offset;
  if (f.flags & FLAG_OFFSET_TRACKED) out << " tracked";
  uint32_t other = f.flags & ~(FLAG_HAS_OFFSET | FLAG_OFFSET_TRACKED);
  if (other != 0) out << " flags=" << other;
  if (f.requested != 0) out << " requested=" << f.requested;
  if (!f.aux.empty()) out << " aux=" << f.aux;
  if (f.parent != 0) out << " parent=" << f.parent;
  return out.str();
}

// What the program printed for one case.
struct Printed {
  std::string label;
  int64_t ret = 0;
  int err = 0;
};

std::vector<Printed> ParseOutput(const std::string& out) {
  static const std::regex kLine(R"(^(\S+) ret=(-?\d+) errno=(\d+)$)");
  std::vector<Printed> printed;
  std::istringstream in(out);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (std::regex_match(line, m, kLine)) {
      printed.push_back({m[1], std::stoll(m[2]), std::stoi(m[3])});
    }
  }
  return printed;
}

std::string Render(const Ev& ev, const Printed& printed, const std::string& tmp_name) {
  Fields f;
  f.op = ev.op;
  f.file = ev.file == "@tmp" ? tmp_name : ev.file;
  f.result = ev.result_is_ret ? printed.ret : ev.result;
  f.error = ev.result_is_ret ? (printed.ret < 0 ? printed.err : 0) : ev.error;
  f.flags = ev.more_flags;
  if (ev.offset.has_value()) {
    f.flags |= FLAG_HAS_OFFSET;
    f.offset = *ev.offset;
  }
  if (ev.tracked) f.flags |= FLAG_OFFSET_TRACKED;
  f.requested = ev.requested;
  if (ev.aux_file.has_value()) {
    f.aux = ev.aux_file->empty() ? "(none)" : *ev.aux_file;
  } else if (ev.aux != 0) {
    f.aux = std::to_string(ev.aux);
  }
  return Line(f);
}

// A case as the trace shows it: the events between "case:LABEL" and "end".
struct Segment {
  std::string label;
  std::vector<const LoadedEvent*> events;
  bool ended = false;
  int64_t begin_ns = 0, end_ns = 0;  // the markers' times
};

// A thread's own calls are in the file in the order it made them. Faults
// through mappings are not: the writer records them when it empties the
// kernel's buffers, which may be while the thread is cases further on (it
// wakes the writer as it maps its first data file). Their time says when
// they happened, so they go to the case whose markers enclose them, placed
// among its events by time, or to none.
std::vector<Segment> Segments(const LoadedProcess& process) {
  std::vector<Segment> segments;
  std::vector<const LoadedEvent*> faults;
  Segment* open = nullptr;
  for (const LoadedEvent* e : MainThreadEvents(process)) {
    if (e->op == OP_MAPPED_READ) {
      faults.push_back(e);
    } else if (e->op == OP_MARK && e->name.rfind("case:", 0) == 0) {
      segments.push_back({e->name.substr(5), {}, false, e->start_ns, INT64_MAX});
      open = &segments.back();
    } else if (e->op == OP_MARK && e->name == "end" && open != nullptr) {
      open->ended = true;
      open->end_ns = e->start_ns;
      open = nullptr;
    } else if (open != nullptr) {
      open->events.push_back(e);
    }
  }
  for (const LoadedEvent* f : faults) {
    for (Segment& s : segments) {
      if (f->start_ns < s.begin_ns || f->start_ns > s.end_ns) continue;
      auto later = std::find_if(s.events.begin(), s.events.end(), [&](const LoadedEvent* e) {
        return e->start_ns > f->start_ns;
      });
      s.events.insert(later, f);
      break;
    }
  }
  return segments;
}

// mkstemp's file: the one entry of the work directory named tmp*.
std::string TmpName(const std::string& workdir) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(workdir)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("tmp", 0) == 0) found.push_back(name);
  }
  return found.size() == 1 ? found[0] : "(" + std::to_string(found.size()) + " tmp files)";
}

void ExpectCases(const SymbolSpec& spec, const SymbolRun& run) {
  std::vector<std::string> expected_labels, printed_labels, traced_labels;
  for (const Case& c : spec.cases) expected_labels.push_back(c.label);
  std::vector<Printed> printed = ParseOutput(run.traced.out);
  for (const Printed& p : printed) printed_labels.push_back(p.label);
  std::vector<Segment> segments = Segments(*run.main);
  for (const Segment& s : segments) traced_labels.push_back(s.label);
  ASSERT_EQ(printed_labels, expected_labels) << run.traced.out;
  ASSERT_EQ(traced_labels, expected_labels);
  std::string tmp_name = TmpName(run.workdir);
  for (size_t i = 0; i < spec.cases.size(); ++i) {
    std::vector<std::string> expected, recorded;
    for (const Ev& ev : spec.cases[i].events) expected.push_back(Render(ev, printed[i], tmp_name));
    for (const LoadedEvent* e : segments[i].events) recorded.push_back(Render(*e, run.workdir));
    EXPECT_TRUE(segments[i].ended) << "case " << spec.cases[i].label;
    EXPECT_EQ(recorded, expected) << "case " << i << " \"" << spec.cases[i].label << "\"";
  }
}

class SymbolTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SymbolTest, BehavesAndRecordsExactly) {
  const std::string& symbol = GetParam();
  auto it = AllSpecs().find(symbol);
  ASSERT_NE(it, AllSpecs().end()) << symbol << " is exported but symbol_cases_*.cc has no cases";
  const SymbolSpec& spec = it->second;

  TempDir dir;
  std::string root = fs::canonical(dir.path()).string();
  std::string plain_dir = root + "/plain", trace_dir = root + "/trace";
  SymbolRun run;
  run.symbol = symbol;
  run.program = TestProgram("symbol_caller");
  run.workdir = root + "/traced";
  fs::create_directory(plain_dir);
  fs::create_directory(run.workdir);

  RunOptions options;
  const char* path = getenv("PATH");
  options.env["PATH"] = fs::path(run.program).parent_path().string() + ":" + (path ? path : "");
  options.timeout_seconds = 60;
  // Waits are recorded from 20 ms: the waits' cases block 100 ms or not at
  // all (symbol_caller_waits.c).
  options.env["IOTAP_WAIT_THRESHOLD_US"] = "20000";
  options.cwd = plain_dir;
  run.plain = RunProgram({run.program, symbol, plain_dir}, options);
  options.cwd = run.workdir;
  run.traced = RunPreloaded({run.program, symbol, run.workdir}, trace_dir, options);

  EXPECT_EQ(run.plain.exit_code, spec.exit_code) << run.plain.err;
  EXPECT_EQ(run.plain.signal, spec.signal);
  EXPECT_EQ(run.traced.exit_code, spec.exit_code) << run.traced.err;
  EXPECT_EQ(run.traced.signal, spec.signal);
  EXPECT_EQ(run.traced.out, run.plain.out) << "the shim changed what the program saw";

  run.trace = LoadRun(trace_dir);
  EXPECT_TRUE(run.trace.issues.empty()) << run.trace.issues.front().ToString();
  for (const LoadedProcess& p : run.trace.processes) {
    EXPECT_EQ(p.dropped, 0u) << p.trace_file;
    EXPECT_EQ(MainThreadEvents(p).size(), p.events.size()) << "events off the main thread";
  }
  run.main = run.Role(symbol);
  ASSERT_NE(run.main, nullptr) << "no trace names " << symbol << " in its argv";
  ExpectCases(spec, run);
  if (spec.check) {
    spec.check(run);
  } else {
    EXPECT_EQ(run.trace.processes.size(), 1u);
    ASSERT_TRUE(run.main->end.has_value());
    EXPECT_EQ(run.main->end->reason(), EndOfTrace::REASON_EXIT);
    EXPECT_TRUE(run.main->end->exit_code_known());
    EXPECT_EQ(run.main->end->exit_code(), spec.exit_code);
  }
}

INSTANTIATE_TEST_SUITE_P(Map, SymbolTest, ::testing::ValuesIn(MapSymbols()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

// Read when the test runs: a symbol added to the map, or cases left behind
// for one removed from it, fail here even before the list above is rebuilt.
TEST(SymbolCoverage, MapAndCasesNameTheSameSymbols) {
  std::vector<std::string> listed = MapSymbols();
  std::set<std::string> exported(listed.begin(), listed.end());
  EXPECT_EQ(exported.size(), listed.size()) << "libiotap.map lists a symbol twice";
  std::vector<std::string> without_export;
  for (const auto& [name, spec] : AllSpecs()) {
    EXPECT_FALSE(spec.cases.empty()) << name;
    if (exported.count(name) == 0) without_export.push_back(name);
  }
  std::vector<std::string> without_cases;
  for (const std::string& name : exported) {
    if (AllSpecs().count(name) == 0) without_cases.push_back(name);
  }
  EXPECT_EQ(without_cases, std::vector<std::string>{}) << "exported, but no cases";
  EXPECT_EQ(without_export, std::vector<std::string>{}) << "cases, but not exported";
}

}  // namespace

std::string Render(const LoadedEvent& e, const std::string& workdir) {
  Fields f;
  f.op = e.op;
  f.file = Relative(e.name, workdir);
  f.result = e.result;
  f.error = e.error;
  f.flags = e.flags;
  f.offset = e.offset;
  f.requested = e.requested;
  if (AuxIsString(e.op)) {
    f.aux = e.aux_name.empty() ? "(none)" : Relative(e.aux_name, workdir);
  } else if (e.aux != 0) {
    f.aux = std::to_string(e.aux);
  }
  f.parent = e.parent;
  return Line(f);
}

}  // namespace iotap::testing
