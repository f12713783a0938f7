#include "analyzer/testing/metrics_check.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace iotap::analyzer {
namespace {

using ::testing::HasSubstr;

constexpr char kOpenMetrics[] =
    "# HELP a_bytes Bytes.\n"
    "# TYPE a_bytes counter\n"
    "a_bytes_total{job=\"j\",layer=\"POSIX\"} 12\n"
    "a_bytes_total{layer=\"HDF5\",job=\"j\"} 1.5e3\n"
    "# TYPE b gauge\n"
    "b{job=\"q\\\"\\\\\\n\"} -Inf\n"
    "b 0.25\n"
    "# EOF\n";

TEST(MetricsCheckTest, ReadsEverySampleWithItsLabelsSorted) {
  absl::StatusOr<ParsedMetrics> m = ParseMetrics(kOpenMetrics, MetricsSyntax::kOpenMetrics);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->samples.size(), 4u);
  EXPECT_EQ(m->samples.at("a_bytes_total{job=\"j\",layer=\"POSIX\"}"), 12);
  EXPECT_EQ(m->samples.at("a_bytes_total{job=\"j\",layer=\"HDF5\"}"), 1500);
  EXPECT_EQ(m->samples.at("b{job=\"q\"\\\n\"}"), -HUGE_VAL);
  EXPECT_EQ(m->samples.at("b"), 0.25);
  EXPECT_EQ(m->types.at("a_bytes"), "counter");
}

TEST(MetricsCheckTest, RefusesWhatEitherFormatForbids) {
  struct Case {
    const char* text;
    MetricsSyntax syntax;
    const char* why;
  };
  const Case cases[] = {
      {"# TYPE a gauge\na 1\n", MetricsSyntax::kOpenMetrics, "no \"# EOF\""},
      {"# TYPE a gauge\na 1\n# EOF\na 2\n", MetricsSyntax::kOpenMetrics, "after # EOF"},
      {"# TYPE a gauge\n\na 1\n# EOF\n", MetricsSyntax::kOpenMetrics, "empty line"},
      {"# a comment\n# EOF\n", MetricsSyntax::kOpenMetrics, "no comments"},
      {"# TYPE a counter\na 1\n# EOF\n", MetricsSyntax::kOpenMetrics, "ends in _total"},
      {"# TYPE a_total counter\na_total 1\n# EOF\n", MetricsSyntax::kOpenMetrics, "without _total"},
      {"# TYPE a counter\na_total -1\n# EOF\n", MetricsSyntax::kOpenMetrics, "below 0"},
      {"a{x=\"1\",} 1\n# EOF\n", MetricsSyntax::kOpenMetrics, "comma before }"},
      {"a 1\nb 1\na 2\n", MetricsSyntax::kPrometheus, "split in two"},
      {"a 1\na 2\n", MetricsSyntax::kPrometheus, "twice"},
      {"a{x=\"1\",x=\"2\"} 1\n", MetricsSyntax::kPrometheus, "label x twice"},
      {"a{__x=\"1\"} 1\n", MetricsSyntax::kPrometheus, "bad label name"},
      {"a{x=\"\\t\"} 1\n", MetricsSyntax::kPrometheus, "unknown escape"},
      {"a{x=1} 1\n", MetricsSyntax::kPrometheus, "unquoted"},
      {"1a 1\n", MetricsSyntax::kPrometheus, "valid name"},
      {"a 0x10\n", MetricsSyntax::kPrometheus, "bad value"},
      {"a one\n", MetricsSyntax::kPrometheus, "bad value"},
      {"a 1", MetricsSyntax::kPrometheus, "newline"},
      {"a 1\n# TYPE a gauge\n", MetricsSyntax::kPrometheus, "TYPE after"},
      {"# TYPE a gauge\n# TYPE a gauge\na 1\n", MetricsSyntax::kPrometheus, "second TYPE"},
      {"# TYPE a meter\na 1\n", MetricsSyntax::kPrometheus, "unknown type"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<ParsedMetrics> m = ParseMetrics(c.text, c.syntax);
    EXPECT_FALSE(m.ok()) << c.text;
    EXPECT_THAT(m.status().message(), HasSubstr(c.why)) << c.text;
  }
  // What the text format allows and OpenMetrics does not.
  EXPECT_TRUE(ParseMetrics("# a comment\n\na{x=\"1\",} 1\n", MetricsSyntax::kPrometheus).ok());
}

}  // namespace
}  // namespace iotap::analyzer
