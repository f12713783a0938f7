// A real trace, as the shim wrote it, cut at every byte: every reading keeps
// each thread's events as an unbroken prefix, never invents one, and keeps
// at least everything in the frames wholly before the cut.

#include <map>
#include <set>
#include <string>

#include "analyzer/read/trace_reader.h"
#include "analyzer/read/trace_set.h"
#include "gtest/gtest.h"
#include "tests/integration/testing.h"
#include "zstd.h"

namespace iotap::testing {
namespace {

class PrefixChecker : public analyzer::TraceVisitor {
 public:
  void OnEvents(const analyzer::ProcessTrace& p, const analyzer::EventBatch& b) override {
    for (const analyzer::Event& e : b.events) {
      uint64_t& next = next_seq_[e.tid];
      if (e.seq != next) ok = false;
      next = e.seq + 1;
      ++events;
    }
  }
  bool ok = true;
  size_t events = 0;

 private:
  std::map<uint32_t, uint64_t> next_seq_;
};

TEST(TruncationTest, RealTraceCutAtEveryByte) {
  TempDir dir;
  std::string data = dir.Sub("data");
  ASSERT_EQ(RunProgram({"mkdir", data}).exit_code, 0);
  WriteFile(data + "/a.bin", std::string(100, 'x'));
  // 600 reads 1 ms apart, flushed every 20 ms: a few dozen small frames.
  RunOptions options;
  options.env["IOTAP_FLUSH_INTERVAL_MS"] = "20";
  RunResult r = RunPreloaded({TestProgram("lifecycle"), "loop", data, "600"}, dir.Sub("trace"),
                             options);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto files = analyzer::ListTraceFiles(dir.Sub("trace"));
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 1u);
  std::string all = ReadFile((*files)[0]);
  ASSERT_GT(all.size(), 1000u);

  PrefixChecker whole;
  std::vector<analyzer::ReadIssue> issues;
  ASSERT_TRUE(analyzer::ReadTraceBytes("whole", all, &whole, &issues).ok());
  EXPECT_TRUE(issues.empty());
  EXPECT_TRUE(whole.ok);
  // Where frames end: a cut there leaves a shorter but undamaged trace.
  std::set<size_t> frame_ends;
  for (size_t at = 0; at < all.size();) {
    size_t n = ZSTD_findFrameCompressedSize(all.data() + at, all.size() - at);
    ASSERT_FALSE(ZSTD_isError(n));
    at += n;
    frame_ends.insert(at);
  }
  EXPECT_GE(frame_ends.size(), 10u);
  size_t previous = 0;
  for (size_t cut = 1; cut < all.size(); ++cut) {
    PrefixChecker c;
    std::vector<analyzer::ReadIssue> cut_issues;
    absl::Status s = analyzer::ReadTraceBytes("cut", all.substr(0, cut), &c, &cut_issues);
    ASSERT_TRUE(c.ok) << "cut at " << cut;
    ASSERT_LE(c.events, whole.events);
    // Cutting later never loses what an earlier cut kept.
    ASSERT_GE(c.events, previous) << "cut at " << cut;
    previous = c.events;
    if (s.ok()) {
      ASSERT_EQ(cut_issues.empty(), frame_ends.count(cut) == 1) << "cut at " << cut;
    }
  }
  EXPECT_GE(whole.events, 600u);
}

}  // namespace
}  // namespace iotap::testing
