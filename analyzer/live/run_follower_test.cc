#include "analyzer/live/run_follower.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/live/session_file.h"
#include "analyzer/read/path_table.h"
#include "analyzer/testing/synthetic_trace.h"
#include "gtest/gtest.h"
#include "zstd.h"

namespace iotap::analyzer {
namespace {

constexpr int64_t kT0 = 1'700'000'000'000'000'000;
constexpr int64_t kS = 1'000'000'000;

struct Collector : public TraceVisitor {
  void OnProcess(const ProcessTrace& p) override { processes.insert(p.pid()); }
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    for (const Event& e : b.events) {
      EXPECT_TRUE(seen.insert({p.pid(), e.seq}).second) << "event read twice";
    }
    events += b.size();
  }
  void OnFileEnd(const ProcessTrace& p) override { ++file_ends; }
  std::set<std::pair<int, uint64_t>> seen;
  std::set<int> processes;
  uint64_t events = 0;
  int file_ends = 0;
};

// The frames of a process of `reads` reads, 10 a frame, the last with its
// end record if `ends`.
std::vector<std::string> Frames(int pid, int reads, bool ends) {
  SyntheticProcess p(pid, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
  uint32_t f = p.Path("/data/a.bin");
  for (int i = 0; i < reads; ++i) p.Read(OP_READ, kT0 + i * 1000, kT0 + i * 1000 + 10, f, -1, 100);
  if (ends) p.End(EndOfTrace::REASON_EXIT, 0, kT0 + reads * 1000);
  std::string bytes = p.Bytes(/*events_per_frame=*/10);
  std::vector<std::string> frames;
  for (size_t at = 0; at < bytes.size();) {
    size_t n = ZSTD_findFrameCompressedSize(bytes.data() + at, bytes.size() - at);
    frames.push_back(bytes.substr(at, n));
    at += n;
  }
  return frames;
}

class RunFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("iotap-runfollow-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void Append(const std::string& name, const std::string& bytes) {
    std::FILE* f = std::fopen((dir_ + "/" + name).c_str(), "ab");
    ASSERT_NE(f, nullptr);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  std::string dir_;
};

TEST_F(RunFollowerTest, NewFilesAndFramesAsTheyComeAndTheEndOfTheJob) {
  absl::StatusOr<SessionFile> session = StartSession(dir_, "s1");
  ASSERT_TRUE(session.ok());
  const std::vector<std::string> a = Frames(10, 30, /*ends=*/true);
  const std::vector<std::string> b = Frames(20, 20, /*ends=*/true);
  ASSERT_GE(a.size(), 4u);
  RunFollower run(dir_);
  Collector c;
  ASSERT_TRUE(run.Poll(&c, 0).ok());
  EXPECT_EQ(run.files(), 0);
  Append("a.iotap", a[0] + a[1]);
  ASSERT_TRUE(run.Poll(&c, 1 * kS).ok());
  EXPECT_EQ(run.files(), 1);
  EXPECT_EQ(c.events, 10u);
  // b appears; a's next frame arrives in two pieces.
  Append("b.iotap", b[0] + b[1]);
  Append("a.iotap", a[2].substr(0, 7));
  ASSERT_TRUE(run.Poll(&c, 2 * kS).ok());
  EXPECT_EQ(run.files(), 2);
  EXPECT_EQ(c.events, 20u);
  EXPECT_EQ(c.processes, (std::set<int>{10, 20}));
  Append("a.iotap", a[2].substr(7));
  for (size_t i = 3; i < a.size(); ++i) Append("a.iotap", a[i]);
  ASSERT_TRUE(run.Poll(&c, 3 * kS).ok());
  EXPECT_EQ(c.events, 40u);
  EXPECT_EQ(run.files_ended(), 1);
  EXPECT_FALSE(run.Ended(3 * kS));  // the session runs
  ASSERT_TRUE(session->End(0).ok());
  ASSERT_TRUE(run.Poll(&c, 4 * kS).ok());
  EXPECT_TRUE(run.SessionsEnded());
  EXPECT_FALSE(run.Ended(4 * kS));  // b has no end record yet
  for (size_t i = 2; i < b.size(); ++i) Append("b.iotap", b[i]);
  ASSERT_TRUE(run.Poll(&c, 5 * kS).ok());
  EXPECT_EQ(c.events, 50u);
  EXPECT_TRUE(run.Ended(5 * kS));
  EXPECT_EQ(c.file_ends, 0);
  run.FinishAll(&c);
  EXPECT_EQ(c.file_ends, 2);
  EXPECT_EQ(c.events, 50u);
  EXPECT_TRUE(run.issues().empty());
}

// A process killed without an end record: the job ends `grace` after its
// session did.
TEST_F(RunFollowerTest, AKilledProcessEndsTheJobAfterTheGrace) {
  absl::StatusOr<SessionFile> session = StartSession(dir_, "s1");
  ASSERT_TRUE(session.ok());
  for (const std::string& f : Frames(10, 30, /*ends=*/false)) Append("a.iotap", f);
  RunFollower run(dir_, /*grace_ns=*/5 * kS);
  Collector c;
  ASSERT_TRUE(session->End(137).ok());
  ASSERT_TRUE(run.Poll(&c, 10 * kS).ok());
  EXPECT_EQ(c.events, 30u);
  EXPECT_FALSE(run.Ended(14 * kS));
  EXPECT_TRUE(run.Ended(15 * kS));
}

TEST_F(RunFollowerTest, WithoutASessionTheJobNeverEnds) {
  for (const std::string& f : Frames(10, 30, /*ends=*/true)) Append("a.iotap", f);
  Append("notes.txt", "not a trace");
  Append("bad.iotap", "not a trace either");
  RunFollower run(dir_);
  Collector c;
  ASSERT_TRUE(run.Poll(&c, 0).ok());
  EXPECT_EQ(c.events, 30u);
  EXPECT_EQ(run.files(), 2);
  EXPECT_FALSE(run.Ended(1000 * kS));
  ASSERT_EQ(run.issues().size(), 1u);
  EXPECT_NE(run.issues()[0].ToString().find("bad.iotap: "), std::string::npos);
  // A failed file is said once.
  ASSERT_TRUE(run.Poll(&c, 1 * kS).ok());
  EXPECT_EQ(run.issues().size(), 1u);
  EXPECT_FALSE(RunFollower(dir_ + "/missing").Poll(&c, 0).ok());
}

// A limit stops each file at a frame boundary; the next read goes on from
// there, no frame read twice and none skipped, and a file read to its end
// under a limit that held nothing back is finished.
TEST_F(RunFollowerTest, ALimitStopsEachFileAtAFrameAndTheNextReadGoesOn) {
  const std::vector<std::string> a = Frames(10, 40, /*ends=*/true);  // 10 events a frame
  const std::vector<std::string> b = Frames(20, 20, /*ends=*/true);
  for (const std::string& f : a) Append("a.iotap", f);
  for (const std::string& f : b) Append("b.iotap", f);
  RunFollower run(dir_);
  // Stops once a file has given 10 events more than the last read left it at.
  std::map<int, uint64_t> per_pid, allowed;
  struct Counting : public Collector {
    std::map<int, uint64_t>* per_pid;
    void OnEvents(const ProcessTrace& p, const EventBatch& batch) override {
      Collector::OnEvents(p, batch);
      (*per_pid)[p.pid()] += batch.size();
    }
  } counting;
  counting.per_pid = &per_pid;
  auto limit = [&](const ProcessTrace& p) { return per_pid[p.pid()] >= allowed[p.pid()]; };
  allowed = {{10, 10}, {20, 10}};
  ASSERT_TRUE(run.Poll(&counting, 0, limit).ok());
  EXPECT_TRUE(run.held_back());
  EXPECT_EQ(per_pid[10], 10u);
  EXPECT_EQ(per_pid[20], 10u);
  allowed = {{10, 30}, {20, 30}};
  ASSERT_TRUE(run.Poll(&counting, 1, limit).ok());
  EXPECT_TRUE(run.held_back());  // a has 10 more
  EXPECT_EQ(per_pid[10], 30u);
  EXPECT_EQ(per_pid[20], 20u);
  EXPECT_EQ(run.MinHeldBack([&](const ProcessTrace& p) { return p.pid(); }), 10);
  // Finished as far as the limit lets: a is not finished, b is.
  EXPECT_FALSE(run.FinishAll(&counting, limit));
  EXPECT_EQ(counting.file_ends, 1);
  EXPECT_EQ(run.MinHeldBack([&](const ProcessTrace& p) { return p.pid(); }), 10);
  allowed[10] = 1000;
  EXPECT_TRUE(run.FinishAll(&counting, limit));
  EXPECT_FALSE(run.held_back());
  EXPECT_EQ(run.MinHeldBack([&](const ProcessTrace& p) { return p.pid(); }), INT64_MAX);
  EXPECT_EQ(counting.file_ends, 2);
  EXPECT_EQ(counting.events, 60u);
  EXPECT_EQ(per_pid[10], 40u);
  EXPECT_TRUE(run.issues().empty());
}

// A visitor that keeps what each process's ids name, as read.
struct NameCollector : public TraceVisitor {
  void OnEvents(const ProcessTrace& p, const EventBatch& b) override {
    for (const Event& e : b.events) names[p.pid()][e.file] = p.Name(e.file);
  }
  std::map<int, std::map<uint32_t, InternedName>> names;
};

TEST_F(RunFollowerTest, TracesSharingAPathTableHoldEachPathOnce) {
  // Two workers open the same file; one also names a pipe and a dataset.
  for (int pid : {10, 20}) {
    SyntheticProcess p(pid, 1, "/usr/bin/python3", {"python3", "train.py"}, kT0);
    uint32_t shared = p.Path("/data/shard-0.bin");
    uint32_t own = p.Path("/data/own-" + std::to_string(pid) + ".bin");
    uint32_t pipe = p.Name("pipe:[77]", InternedString::KIND_PIPE);
    uint32_t dataset = p.Name("/data/x.h5:/images", InternedString::KIND_DATASET);
    for (uint32_t f : {shared, own, pipe, dataset}) p.Read(OP_READ, kT0, kT0 + 10, f, -1, 100);
    p.End(EndOfTrace::REASON_EXIT, 0, kT0 + 1000);
    Append("p" + std::to_string(pid) + ".iotap", p.Bytes(/*events_per_frame=*/10));
  }
  PathTable paths;
  paths.Intern("/data/shard-0.bin");  // the analysis had it already
  RunFollower run(dir_);
  run.set_shared_paths(&paths);
  NameCollector c;
  ASSERT_TRUE(run.Poll(&c, 0).ok());
  ASSERT_EQ(c.names.size(), 2u);
  // Paths are the table's (one copy each, the first one the analysis's);
  // other names the traces' own.
  EXPECT_EQ(paths.size(), 3u);
  const std::string_view kept = paths.InternText("/data/shard-0.bin");
  for (auto& [pid, names] : c.names) {
    ASSERT_EQ(names.size(), 4u) << pid;
    auto it = names.begin();
    EXPECT_EQ(it->second.value, "/data/shard-0.bin");
    EXPECT_EQ(it->second.value.data(), kept.data()) << pid;
    EXPECT_EQ(it->second.kind, InternedString::KIND_PATH);
    ++it;
    EXPECT_EQ(it->second.value, "/data/own-" + std::to_string(pid) + ".bin");
    EXPECT_EQ(it->second.value.data(), paths.InternText(it->second.value).data());
    ++it;
    EXPECT_EQ(it->second.value, "pipe:[77]");
    EXPECT_EQ(it->second.kind, InternedString::KIND_PIPE);
    ++it;
    EXPECT_EQ(it->second.value, "/data/x.h5:/images");
    EXPECT_EQ(it->second.kind, InternedString::KIND_DATASET);
  }
  EXPECT_EQ(paths.size(), 3u);  // neither the pipe nor the dataset
}

}  // namespace
}  // namespace iotap::analyzer
