// Every command that writes a report, a table or a dump says so and exits 1
// when its output cannot be written whole (a full disk: /dev/full), to a
// file (-o, --html) or to standard output, instead of leaving a cut-short
// file behind with status 0; and writes the whole of it where it can.

#include "analyzer/cli/output.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "analyzer/testing/synthetic_trace.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::cli {
namespace {

using analyzer::SyntheticProcess;
using iotap::testing::IotapBinary;
using iotap::testing::RunProgram;
using iotap::testing::RunResult;

TEST(OutputTest, AFailedWriteIsSaidAndFalse) {
  ::testing::internal::CaptureStderr();
  Output full("iotap test", "/dev/full");
  ASSERT_TRUE(full.ok());
  full.Write(std::string(1 << 16, 'x'));  // past the stream's buffer
  EXPECT_FALSE(full.Close());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "iotap test: /dev/full: No space left on device\n");

  ::testing::internal::CaptureStderr();
  Output small("iotap test", "/dev/full");
  small.Write("a line\n");  // still in the stream's buffer: fails at Close
  EXPECT_FALSE(small.Close());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "iotap test: /dev/full: No space left on device\n");

  ::testing::internal::CaptureStderr();
  Output missing("iotap test", "/no/such/dir/out.txt");
  EXPECT_FALSE(missing.ok());
  EXPECT_FALSE(missing.Close());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "iotap test: /no/such/dir/out.txt: No such file or directory\n");
}

TEST(OutputTest, WritesTheWholeText) {
  const std::string path = analyzer::testing::TempDirectory() + "/output-whole.txt";
  const std::string text(300'000, 'y');
  EXPECT_TRUE(WriteOutput("iotap test", path, text));
  std::ifstream in(path, std::ios::binary);
  std::stringstream got;
  got << in.rdbuf();
  EXPECT_EQ(got.str(), text);
}

TEST(OutputTest, EveryCommandSaysItsOutputWasNotWritten) {
  const std::string dir = analyzer::testing::TempDirectory() + "/output-commands";
  std::filesystem::create_directories(dir);
  SyntheticProcess p(42, 1, "/usr/bin/python3", {"python3", "train.py"}, 1'000'000'000);
  const uint32_t f = p.Path("/data/a.bin");
  for (int i = 0; i < 2000; ++i) {
    p.Read(OP_PREAD, 1'000'000'000 + i * 10'000, 1'000'005'000 + i * 10'000, f, i * 4096, 4096);
  }
  p.End(EndOfTrace::REASON_EXIT, 0);
  const std::string trace = dir + "/p42.iotap";
  p.WriteTo(trace);
  const std::string bin = IotapBinary();
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{bin, "stats", trace, "-o", "/dev/full"}, "iotap stats: /dev/full: "},
      {{bin, "stats", "--json", trace, "-o", "/dev/full"}, "iotap stats: /dev/full: "},
      {{bin, "dump", trace, "-o", "/dev/full"}, "iotap dump: /dev/full: "},
      {{bin, "report", trace, "-o", "/dev/full"}, "iotap report: /dev/full: "},
      {{bin, "report", trace, "--html", "/dev/full"}, "iotap report: /dev/full: "},
      {{bin, "diff", trace, trace, "-o", "/dev/full"}, "iotap diff: /dev/full: "},
      {{"sh", "-c", bin + " stats " + trace + " >/dev/full"}, "iotap stats: standard output: "},
      {{"sh", "-c", bin + " dump " + trace + " >/dev/full"}, "iotap dump: standard output: "},
      {{"sh", "-c", bin + " report " + trace + " >/dev/full"}, "iotap report: standard output: "},
      {{"sh", "-c", bin + " diff " + trace + " " + trace + " >/dev/full"},
       "iotap diff: standard output: "},
  };
  for (const auto& [argv, said] : cases) {
    RunResult r = RunProgram(argv);
    EXPECT_EQ(r.exit_code, 1) << argv[1] << " " << argv[2] << ": " << r.err;
    EXPECT_NE(r.err.find(said + "No space left on device\n"), std::string::npos)
        << argv[1] << " " << argv[2] << ": " << r.err;
  }
  // Where it can be written: all of it, status 0.
  RunResult dump = RunProgram({bin, "dump", trace});
  EXPECT_EQ(dump.exit_code, 0) << dump.err;
  EXPECT_NE(dump.out.find("/data/a.bin"), std::string::npos);
  size_t lines = 0;
  for (char c : dump.out) lines += c == '\n' ? 1 : 0;
  EXPECT_GE(lines, 2000u);
}

}  // namespace
}  // namespace iotap::cli
