// The usage examples in this folder's headers, compiled and run: an example
// that drifts from the API breaks the build. Each test holds its header's
// example as the header writes it (placeholders filled in); keep the two in
// step.

#include <filesystem>
#include <string>

#include "analyzer/output/export/chrome_json_export.h"
#include "analyzer/output/export/export_model.h"
#include "analyzer/output/export/perfetto_export.h"
#include "analyzer/testing/test_files.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using testing::HostileRunDirectory;
using testing::TempDirectory;

// export_model.h
class Writer : public ExportSink {
 public:
  absl::Status AddProcess(const ExportProcess& process) override {
    ++processes;
    return absl::OkStatus();
  }
  int processes = 0;
};

TEST(HeaderExamplesTest, ExportModel) {
  // export_model.h
  Writer w;
  absl::Status s = ExportRun(HostileRunDirectory(), ExportOptions{}, &w);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(w.processes, 3);
}

TEST(HeaderExamplesTest, PerfettoExport) {
  const std::string out = TempDirectory() + "/run.pftrace";
  // perfetto_export.h
  ExportStats stats;
  absl::Status s = ExportPerfetto(HostileRunDirectory(), out, {}, &stats);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(stats.processes, 3u);
  EXPECT_EQ(stats.bytes, std::filesystem::file_size(out));
}

TEST(HeaderExamplesTest, ChromeJsonExport) {
  const std::string out = TempDirectory() + "/run.json";
  // chrome_json_export.h
  ExportStats stats;
  absl::Status s = ExportChromeJson(HostileRunDirectory(), out, {}, kDefaultChromeJsonMaxEvents, &stats);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(stats.processes, 3u);
}

}  // namespace
}  // namespace iotap::analyzer
