#include "client/bootstrap.h"

#include <gtest/gtest.h>

namespace weir::client {
namespace {

TEST(BootstrapTest, ParsesCommaSeparatedHostPorts) {
  auto r = parse_bootstrap("localhost:9092,10.0.0.2:19092");
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(*r, (std::vector<Endpoint>{{"localhost", 9092}, {"10.0.0.2", 19092}}));
}

TEST(BootstrapTest, IgnoresWhitespaceAndEmptyEntries) {
  auto r = parse_bootstrap(" a:1 , ,b:2,");
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (std::vector<Endpoint>{{"a", 1}, {"b", 2}}));
}

TEST(BootstrapTest, BracketedIpv6HostLosesItsBrackets) {
  auto r = parse_bootstrap("[::1]:9092");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ(r->front().host, "::1");
  EXPECT_EQ(r->front().to_string(), "[::1]:9092");
}

TEST(BootstrapTest, EntriesWithoutAValidPortAreRejectedWithKafkasMessage) {
  for (const char* bad :
       {"localhost", "localhost:", ":9092", "host:0", "host:65536", "host:12ab", "::1:9092", "h st:1"}) {
    auto r = parse_bootstrap(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().kind, ErrorKind::kInvalidArgument);
    EXPECT_EQ(r.error().message, std::string("Invalid url in bootstrap.servers: ") + bad);
  }
}

TEST(BootstrapTest, AnEmptyListIsAnError) {
  auto r = parse_bootstrap(" , ");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "No resolvable bootstrap urls given in bootstrap.servers");
}

}  // namespace
}  // namespace weir::client
