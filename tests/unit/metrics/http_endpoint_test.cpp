#include "metrics/http_endpoint.h"

#include <atomic>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <gtest/gtest.h>

namespace weir::metrics {
namespace {

namespace asio = boost::asio;

class HttpEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    HttpEndpointOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.max_connections = 2;
    o.max_request_bytes = 1024;
    endpoint_ = std::make_unique<HttpEndpoint>(o, [this]() -> asio::awaitable<std::string> {
      ++scrapes_;
      co_return std::string("weir_up 1\n");
    });
    ASSERT_EQ(endpoint_->start(), "");
  }

  asio::ip::tcp::socket connect() {
    asio::ip::tcp::socket s(io_);
    s.connect({asio::ip::make_address("127.0.0.1"), endpoint_->port()});
    return s;
  }

  // Sends raw bytes and reads until the server closes the connection.
  std::string exchange(const std::string& request) {
    auto s = connect();
    asio::write(s, asio::buffer(request));
    std::string out;
    boost::system::error_code ec;
    asio::read(s, asio::dynamic_buffer(out), ec);
    return out;
  }

  asio::io_context io_;
  std::atomic<int> scrapes_{0};
  std::unique_ptr<HttpEndpoint> endpoint_;
};

TEST_F(HttpEndpointTest, GetMetricsReturnsTheProvidersText) {
  const std::string r = exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << r;
  EXPECT_NE(r.find("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Content-Length: 10\r\n"), std::string::npos) << r;
  EXPECT_EQ(r.substr(r.size() - 10), "weir_up 1\n");
  EXPECT_EQ(scrapes_.load(), 1);
}

TEST_F(HttpEndpointTest, KeepAliveServesSeveralScrapesOnOneConnection) {
  auto s = connect();
  const std::string req = "GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\n\r\n";
  asio::write(s, asio::buffer(req + req));
  std::string out;
  while (scrapes_.load() < 2 || out.find("weir_up 1\n", out.find("weir_up 1\n") + 1) == std::string::npos) {
    char buf[512];
    const std::size_t n = s.read_some(asio::buffer(buf));
    out.append(buf, n);
  }
  EXPECT_EQ(scrapes_.load(), 2);
}

TEST_F(HttpEndpointTest, OtherPathsAre404) {
  const std::string r = exchange("GET /metricsx HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 404 Not Found\r\n", 0), 0u) << r;
  EXPECT_EQ(scrapes_.load(), 0);
  EXPECT_EQ(endpoint_->bad_requests(), 1u);
}

TEST_F(HttpEndpointTest, OtherMethodsAre405) {
  const std::string r = exchange("DELETE /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 405 Method Not Allowed\r\n", 0), 0u) << r;
}

TEST_F(HttpEndpointTest, GarbageIs400AndTheEndpointKeepsServing) {
  const std::string r = exchange("\x01\x02 not http at all\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << r;
  const std::string ok = exchange("GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << ok;
}

TEST_F(HttpEndpointTest, OversizedHeadIs400) {
  const std::string r =
      exchange("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Pad: " + std::string(4096, 'a') + "\r\n\r\n");
  EXPECT_EQ(r.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << r;
  EXPECT_EQ(scrapes_.load(), 0);
}

TEST_F(HttpEndpointTest, RequestWithABodyIs400) {
  const std::string r = exchange("POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
  EXPECT_EQ(r.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << r;
}

TEST_F(HttpEndpointTest, ConnectionsBeyondTheLimitAreClosed) {
  auto a = connect();
  auto b = connect();
  // Both held open (idle); a third is closed at once without an answer.
  auto c = connect();
  std::string out;
  boost::system::error_code ec;
  asio::read(c, asio::dynamic_buffer(out), ec);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(endpoint_->refused_connections(), 1u);
}

TEST(HttpEndpointStartTest, AHostNameIsResolvedAndAnUnknownOneRefused) {
  HttpEndpointOptions o;
  o.host = "localhost";
  HttpEndpoint ok(o, []() -> asio::awaitable<std::string> { co_return std::string(); });
  EXPECT_EQ(ok.start(), "");
  EXPECT_NE(ok.port(), 0);
  o.host = "no-such-host.invalid";
  HttpEndpoint bad(o, []() -> asio::awaitable<std::string> { co_return std::string(); });
  EXPECT_NE(bad.start(), "");
}

TEST(ParseHostPortTest, AcceptsHostPortAndBracketedV6) {
  std::string host;
  std::uint16_t port = 0;
  EXPECT_EQ(parse_host_port("127.0.0.1:9464", host, port), "");
  EXPECT_EQ(host, "127.0.0.1");
  EXPECT_EQ(port, 9464);
  EXPECT_EQ(parse_host_port("[::1]:80", host, port), "");
  EXPECT_EQ(host, "::1");
  EXPECT_EQ(port, 80);
  EXPECT_EQ(parse_host_port(":9464", host, port), "");
  EXPECT_EQ(host, "0.0.0.0");
  EXPECT_NE(parse_host_port("localhost", host, port), "");
  EXPECT_NE(parse_host_port("h:99999", host, port), "");
  EXPECT_NE(parse_host_port("h:", host, port), "");
}

}  // namespace
}  // namespace weir::metrics
