#include "metrics/exposition.h"

#include <gtest/gtest.h>

namespace weir::metrics {
namespace {

TEST(ExpositionTest, FamilyThenSamplesInTextFormat) {
  Exposition x;
  x.family("weir_requests_total", Type::kCounter, "Requests received.");
  x.sample("weir_requests_total", {{"api", "Produce"}}, std::uint64_t{12});
  x.sample("weir_requests_total", {{"api", "Fetch"}, {"shard", "1"}}, std::uint64_t{0});
  x.family("weir_shards", Type::kGauge, "Shards.");
  x.sample("weir_shards", {}, std::int64_t{-2});
  x.sample("weir_shards", {}, 0.25);
  EXPECT_EQ(x.text(),
            "# HELP weir_requests_total Requests received.\n"
            "# TYPE weir_requests_total counter\n"
            "weir_requests_total{api=\"Produce\"} 12\n"
            "weir_requests_total{api=\"Fetch\",shard=\"1\"} 0\n"
            "# HELP weir_shards Shards.\n"
            "# TYPE weir_shards gauge\n"
            "weir_shards -2\n"
            "weir_shards 0.25\n");
}

TEST(ExpositionTest, LabelValuesAndHelpAreEscaped) {
  Exposition x;
  x.family("m", Type::kGauge, "a \\ b\nc");
  x.sample("m", {{"topic", "a\"b\\c\nd"}}, std::int64_t{1});
  EXPECT_EQ(x.text(),
            "# HELP m a \\\\ b\\nc\n"
            "# TYPE m gauge\n"
            "m{topic=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(ExpositionTest, HistogramBucketsAreCumulativeAndScaled) {
  Histogram h;
  h.observe(1);
  h.observe(2);
  h.observe(2);
  h.observe(90000000);  // overflow
  Exposition x;
  x.histogram("lat", {{"api", "Fetch"}}, h.snapshot(), 0.5);
  const std::string& t = x.text();
  EXPECT_NE(t.find("lat_bucket{api=\"Fetch\",le=\"0.5\"} 1\n"), std::string::npos) << t;
  EXPECT_NE(t.find("lat_bucket{api=\"Fetch\",le=\"1\"} 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("lat_bucket{api=\"Fetch\",le=\"25000000\"} 3\n"), std::string::npos) << t;
  EXPECT_NE(t.find("lat_bucket{api=\"Fetch\",le=\"+Inf\"} 4\n"), std::string::npos) << t;
  EXPECT_NE(t.find("lat_sum{api=\"Fetch\"} 45000002.5\n"), std::string::npos) << t;
  EXPECT_NE(t.find("lat_count{api=\"Fetch\"} 4\n"), std::string::npos) << t;
}

}  // namespace
}  // namespace weir::metrics
