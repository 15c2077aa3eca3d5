#include "metrics/http_endpoint.h"

#include <charconv>
#include <chrono>
#include <unordered_set>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>

namespace weir::metrics {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::string parse_host_port(std::string_view text, std::string& host, std::uint16_t& port) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return "expected host:port, got '" + std::string(text) + "'";
  std::string_view h = text.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  const std::string_view p = text.substr(colon + 1);
  std::uint16_t value = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), value);
  if (p.empty() || ec != std::errc() || end != p.data() + p.size()) {
    return "invalid port in '" + std::string(text) + "'";
  }
  host = h.empty() ? "0.0.0.0" : std::string(h);
  port = value;
  return {};
}

HttpEndpoint::HttpEndpoint(HttpEndpointOptions options, Provider provider)
    : options_(std::move(options)), provider_(std::move(provider)) {}

HttpEndpoint::~HttpEndpoint() { stop(); }

std::string HttpEndpoint::start() {
  boost::system::error_code ec;
  auto addr = asio::ip::make_address(options_.host, ec);
  if (ec) {  // a host name
    asio::ip::tcp::resolver resolver(context_);
    auto results = resolver.resolve(options_.host, std::to_string(options_.port), ec);
    if (ec || results.empty()) return "cannot resolve metrics.listener host " + options_.host;
    addr = results.begin()->endpoint().address();
  }
  const asio::ip::tcp::endpoint ep(addr, options_.port);
  acceptor_ = std::make_unique<asio::ip::tcp::acceptor>(context_);
  acceptor_->open(ep.protocol(), ec);
  if (!ec) acceptor_->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_->bind(ep, ec);
  if (!ec) acceptor_->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return "cannot listen on metrics.listener " + options_.host + ":" + std::to_string(options_.port) + ": " + ec.message();
  bound_port_ = acceptor_->local_endpoint(ec).port();
  asio::co_spawn(context_, accept_loop(), asio::detached);
  started_ = true;
  thread_ = std::thread([this]() { context_.run(); });
  return {};
}

void HttpEndpoint::stop() {
  if (!started_) return;
  started_ = false;
  // Close the listener and every connection, then let the thread run out of work: a scrape in
  // flight still gets its shards' answers (they post back to this context, which must outlive
  // them), so call stop() while the shards run.
  asio::post(context_, [this]() {
    boost::system::error_code ignored;
    stopping_ = true;
    acceptor_->close(ignored);
    for (auto* s : sockets_) s->close(ignored);
  });
  if (thread_.joinable()) thread_.join();
  acceptor_.reset();
}

asio::awaitable<void> HttpEndpoint::accept_loop() {
  for (;;) {
    boost::system::error_code ec;
    asio::ip::tcp::socket socket = co_await acceptor_->async_accept(asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (ec == asio::error::operation_aborted || stopping_) co_return;
      // e.g. out of file descriptors: back off instead of spinning.
      asio::steady_timer pause(context_, std::chrono::milliseconds(100));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (stopping_) co_return;
    if (open_connections_ >= options_.max_connections) {
      refused_.inc();
      socket.close(ec);
      continue;
    }
    ++open_connections_;
    asio::co_spawn(context_, serve(std::move(socket)), [this](const std::exception_ptr&) { --open_connections_; });
  }
}

asio::awaitable<void> HttpEndpoint::serve(asio::ip::tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  sockets_.insert(&stream.socket());
  struct Unregister {
    std::unordered_set<asio::ip::tcp::socket*>& set;
    asio::ip::tcp::socket* s;
    ~Unregister() { set.erase(s); }
  } unregister{sockets_, &stream.socket()};
  beast::flat_buffer buffer(options_.max_request_bytes);
  const auto timeout = std::chrono::milliseconds(options_.timeout_ms);
  while (!stopping_) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options_.max_request_bytes));
    parser.body_limit(0);
    stream.expires_after(timeout);
    boost::system::error_code ec;
    co_await http::async_read(stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    if (ec == http::error::end_of_stream || ec == asio::error::eof || ec == beast::error::timeout ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted) {
      co_return;
    }
    http::response<http::string_body> res;
    res.version(11);
    res.set(http::field::server, "weir");
    bool keep_alive = false;
    if (ec) {
      bad_requests_.inc();
      res.result(http::status::bad_request);
      res.set(http::field::content_type, "text/plain; charset=utf-8");
      res.body() = "bad request\n";
    } else {
      const auto& req = parser.get();
      keep_alive = req.keep_alive();
      res.version(req.version());
      const std::string_view target(req.target().data(), req.target().size());
      const std::string_view path = target.substr(0, target.find('?'));
      if (req.method() != http::verb::get) {
        bad_requests_.inc();
        res.result(http::status::method_not_allowed);
        res.set(http::field::allow, "GET");
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "method not allowed\n";
        keep_alive = false;
      } else if (path != "/metrics") {
        bad_requests_.inc();
        res.result(http::status::not_found);
        res.set(http::field::content_type, "text/plain; charset=utf-8");
        res.body() = "not found\n";
      } else {
        res.result(http::status::ok);
        res.set(http::field::content_type, "text/plain; version=0.0.4; charset=utf-8");
        res.body() = co_await provider_();
      }
    }
    res.keep_alive(keep_alive);
    res.prepare_payload();
    stream.expires_after(timeout);
    co_await http::async_write(stream, res, asio::redirect_error(asio::use_awaitable, ec));
    if (ec || !keep_alive) break;
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace weir::metrics
