// The shim's dlsym leaves every lookup that is not of a wrapped CUDA
// function in a CUDA library as glibc answers it, including the lookups
// whose answer depends on which object called dlsym (RTLD_NEXT,
// RTLD_DEFAULT from a library loaded with RTLD_LOCAL): those reach glibc
// with the caller's return address intact (cuda_dlsym.cc).

#include <string>

#include "gtest/gtest.h"
#include "tests/integration/testing.h"

namespace iotap::testing {
namespace {

std::string ProbeLibrary() { return std::string(IOTAP_BINARY_DIR) + "/lib/libiotap_probe.so"; }

std::string ExpectedLines(const std::string& next_open_in) {
  return "next open in " + next_open_in +
         "\n"
         "local scope lookup 42\n"
         "global scope lookup absent\n"
         "handle lookup 42\n"
         "missing null error set\n"
         "cuda name in another library 7\n";
}

TEST(CudaDlsymTest, LookupsAnswerAsWithoutTheShim) {
  TempDir dir;
  RunResult plain = RunProgram({TestProgram("dlsym_scope"), ProbeLibrary()});
  EXPECT_EQ(plain.exit_code, 0);
  EXPECT_EQ(plain.out, ExpectedLines("libc.so.6"));
  RunResult traced = RunPreloaded({TestProgram("dlsym_scope"), ProbeLibrary()}, dir.Sub("trace"));
  EXPECT_EQ(traced.exit_code, 0) << traced.err;
  // RTLD_NEXT from the program: the next object is now the shim itself.
  EXPECT_EQ(traced.out, ExpectedLines("libiotap.so"));
}

}  // namespace
}  // namespace iotap::testing
