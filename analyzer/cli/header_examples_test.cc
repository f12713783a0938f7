// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <cstdio>
#include <string>
#include <vector>

#include "analyzer/cli/args.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/perf_keeper.h"
#include "analyzer/cli/version.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::cli {
namespace {

// `words` as main() passes them on.
std::vector<char*> Argv(std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  return argv;
}

TEST(HeaderExamplesTest, Args) {
  std::vector<std::string> words = {"trace", "--output=x.json", "--json"};
  std::vector<char*> words_argv = Argv(words);
  int argc = static_cast<int>(words_argv.size());
  char** argv = words_argv.data();
  // args.h
  absl::StatusOr<Args> args = Args::Parse(argc, argv, {
      {"-o", "--output", true}, {"", "--json", false}});
  ASSERT_TRUE(args.ok()) << args.status();  // args.status().message() names the bad option
  bool json = args->Has("--json");
  std::string out = args->Get("--output");

  EXPECT_TRUE(json);
  EXPECT_EQ(out, "x.json");
  EXPECT_EQ(args->positional(), std::vector<std::string>{"trace"});
}

// args.h
int Command(int argc, char** argv) {
  static constexpr char kReportHelp[] = "usage: iotap report PATH\n";
  if (ShowHelpIfAsked(argc, argv, kReportHelp)) return kExitOk;
  return kExitUsage;
}

TEST(HeaderExamplesTest, Help) {
  for (std::vector<std::string> words : std::vector<std::vector<std::string>>{
           {"--help"}, {"trace", "-h"}, {"--format", "json", "--help"}}) {
    std::vector<char*> argv = Argv(words);
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(Command(static_cast<int>(argv.size()), argv.data()), kExitOk) << words[0];
    EXPECT_EQ(::testing::internal::GetCapturedStdout(), "usage: iotap report PATH\n");
  }
  // After "--", a word is the command's (a file called -h); with
  // command_follows, so is everything after the first positional word.
  std::vector<std::string> words = {"--", "-h"};
  std::vector<char*> argv = Argv(words);
  EXPECT_FALSE(ShowHelpIfAsked(2, argv.data(), "help"));
  words = {"-o", "dir", "python3", "--help"};
  argv = Argv(words);
  EXPECT_FALSE(ShowHelpIfAsked(4, argv.data(), "help", /*command_follows=*/true));
  EXPECT_TRUE(IsHelpWord("-h"));
  EXPECT_FALSE(IsHelpWord("help"));
}

TEST(HeaderExamplesTest, Version) {
  ::testing::internal::CaptureStdout();
  // version.h
  std::printf("iotap %s (commit %s)\n", kVersion, kCommit);

  EXPECT_THAT(::testing::internal::GetCapturedStdout(),
              ::testing::MatchesRegex("iotap [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit [0-9a-z.+-]+\\)\n"));
}

TEST(HeaderExamplesTest, PerfKeeper) {
  std::string layers_option;
  // perf_keeper.h
  PerfKeeper keeper = PerfKeeper::ForLayers(layers_option);  // before fork
  // ... run the job ...                                      // closes at scope end

  EXPECT_EQ(keeper.active(), PerfKeeper::ForLayers("mapped").active());
}

}  // namespace
}  // namespace iotap::cli
