#include "net/connection.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <spdlog/spdlog.h>

#include "base/log.h"
#include "net/server.h"

namespace weir::net {

namespace asio = boost::asio;

namespace {

// TCP_CORK for the lifetime of the object: partial segments are held back until it ends.
class Cork {
 public:
  explicit Cork(asio::ip::tcp::socket& socket) : socket_(socket) { set(1); }
  ~Cork() { set(0); }
  Cork(const Cork&) = delete;
  Cork& operator=(const Cork&) = delete;

 private:
  void set(int on) const {
    if (socket_.is_open()) (void)::setsockopt(socket_.native_handle(), IPPROTO_TCP, TCP_CORK, &on, sizeof on);
  }
  asio::ip::tcp::socket& socket_;
};

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, RequestSink& sink, ClientInfo client,
                       std::int32_t max_request_bytes, std::int32_t max_inflight, Server& server,
                       ShardStats& stats)
    : socket_(std::move(socket)),
      sink_(sink),
      client_(std::move(client)),
      max_request_bytes_(max_request_bytes),
      max_inflight_(static_cast<std::size_t>(max_inflight)),
      server_(server),
      stats_(stats),
      writer_wake_(socket_.get_executor()),
      reader_wake_(socket_.get_executor()) {
  writer_wake_.expires_at(asio::steady_timer::time_point::max());
  reader_wake_.expires_at(asio::steady_timer::time_point::max());
}

void Connection::start() {
  boost::system::error_code ec;
  socket_.native_non_blocking(true, ec);  // sendfile(2) must not block the shard
  auto self = shared_from_this();
  asio::co_spawn(socket_.get_executor(), [self]() { return self->read_loop(); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [self]() { return self->write_loop(); }, asio::detached);
}

void Connection::close() {
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [self]() { self->shutdown("broker shutting down"); });
}

void Connection::shutdown(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  stats_.connections_closed.inc();
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now().time_since_epoch()).count();
  if (!reason.empty() && stats_.close_log.allow(now_ms)) {
    spdlog::info("event=connection_closed {} {} {} {} {} dropped_lines={}", log::kv("id", client_.connection_id),
                 log::kv("client", fmt::format("{}:{}", client_.host, client_.port)),
                 log::kv("listener", client_.listener), log::kv("shard", client_.shard), log::kv("reason", reason),
                 stats_.close_log.take_dropped());
  }
  boost::system::error_code ignored;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  socket_.close(ignored);
  writer_wake_.cancel();
  reader_wake_.cancel();
  server_.unregister_connection(client_.connection_id);
}

asio::awaitable<void> Connection::read_loop() {
  stats_.connections_opened.inc();  // here: on the connection's own executor, its single writer
  std::array<std::uint8_t, 4> size_buf{};
  while (!closed_) {
    boost::system::error_code ec;
    co_await asio::async_read(socket_, asio::buffer(size_buf), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      shutdown(ec == asio::error::eof || ec == asio::error::operation_aborted ? "" : ec.message());
      co_return;
    }
    const std::int32_t size = static_cast<std::int32_t>((std::uint32_t{size_buf[0]} << 24) |
                                                        (std::uint32_t{size_buf[1]} << 16) |
                                                        (std::uint32_t{size_buf[2]} << 8) | size_buf[3]);
    if (size < 0 || size > max_request_bytes_) {
      stats_.oversized_frames.inc();
      shutdown(fmt::format("request size {} is outside 0..socket.request.max.bytes ({})", size,
                           max_request_bytes_));
      co_return;
    }
    auto frame = std::make_shared<Frame>();
    frame->bytes.resize(static_cast<std::size_t>(size));
    co_await asio::async_read(socket_, asio::buffer(frame->bytes), asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      shutdown(ec == asio::error::eof ? "client closed mid-request" : ec.message());
      co_return;
    }
    frame->received_at = std::chrono::steady_clock::now();
    if (!closed_ && slots_.size() >= max_inflight_) stats_.inflight_limit_hits.inc();
    while (!closed_ && slots_.size() >= max_inflight_) {
      co_await reader_wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (closed_) co_return;
    auto slot = std::make_shared<Slot>();
    slots_.push_back(slot);
    auto self = shared_from_this();
    asio::co_spawn(
        socket_.get_executor(),
        [self, slot, frame = std::shared_ptr<const Frame>(frame)]() { return self->run_request(slot, frame); },
        asio::detached);
  }
}

asio::awaitable<void> Connection::run_request(std::shared_ptr<Slot> slot, std::shared_ptr<const Frame> frame) {
  Reply reply;
  try {
    reply = co_await sink_.handle(client_, std::move(frame));
  } catch (const std::exception& e) {
    reply = Reply::close(std::string("internal error: ") + e.what());
  }
  slot->reply = std::move(reply);
  writer_wake_.cancel_one();
}

asio::awaitable<void> Connection::write_loop() {
  while (!closed_) {
    while (!closed_ && !slots_.empty() && slots_.front()->reply) {
      Reply reply = std::move(*slots_.front()->reply);
      slots_.pop_front();
      reader_wake_.cancel_one();
      if (reply.kind == Reply::Kind::kClose) {
        shutdown(reply.reason);
        co_return;
      }
      if (reply.kind == Reply::Kind::kNoResponse) continue;
      if (std::string failed = co_await send(reply); !failed.empty()) {
        shutdown(failed);
        co_return;
      }
    }
    if (closed_) co_return;
    boost::system::error_code ec;
    co_await writer_wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<std::string> Connection::send(const Reply& reply) {
  const auto n = static_cast<std::uint32_t>(reply.size());
  std::array<std::uint8_t, 4> size_buf{static_cast<std::uint8_t>(n >> 24), static_cast<std::uint8_t>(n >> 16),
                                       static_cast<std::uint8_t>(n >> 8), static_cast<std::uint8_t>(n)};
  boost::system::error_code ec;
  if (reply.splices.empty()) {
    std::array<asio::const_buffer, 2> bufs{asio::buffer(size_buf), asio::buffer(reply.bytes)};
    const std::size_t sent =
        co_await asio::async_write(socket_, bufs, asio::redirect_error(asio::use_awaitable, ec));
    stats_.bytes_sent_from_memory.inc(sent);
    co_return ec ? ec.message() : std::string();
  }
  // Encoded parts and file regions in turn. Corked, so that the small parts between regions go
  // out in full segments with the record data instead of as packets of their own.
  Cork cork(socket_);
  std::size_t from = 0;
  bool first = true;
  for (const Splice& splice : reply.splices) {
    std::array<asio::const_buffer, 2> bufs{asio::buffer(size_buf, first ? size_buf.size() : 0),
                                           asio::buffer(reply.bytes.data() + from, splice.at - from)};
    first = false;
    const std::size_t sent =
        co_await asio::async_write(socket_, bufs, asio::redirect_error(asio::use_awaitable, ec));
    stats_.bytes_sent_from_memory.inc(sent);
    if (ec) co_return ec.message();
    for (const FileRegion& region : splice.bytes->regions) {
      if (std::string failed = co_await send_file(region); !failed.empty()) co_return failed;
    }
    from = splice.at;
  }
  std::array<asio::const_buffer, 2> bufs{asio::buffer(size_buf, first ? size_buf.size() : 0),
                                         asio::buffer(reply.bytes.data() + from, reply.bytes.size() - from)};
  const std::size_t sent = co_await asio::async_write(socket_, bufs, asio::redirect_error(asio::use_awaitable, ec));
  stats_.bytes_sent_from_memory.inc(sent);
  co_return ec ? ec.message() : std::string();
}

asio::awaitable<std::string> Connection::send_file(const FileRegion& region) {
  off_t offset = region.offset;
  std::int64_t left = region.size;
  while (left > 0 && !closed_) {
    const auto chunk = static_cast<std::size_t>(std::min<std::int64_t>(left, std::int64_t{1} << 30));
    const ssize_t n = ::sendfile(socket_.native_handle(), region.fd, &offset, chunk);
    if (n > 0) {
      left -= n;
      stats_.bytes_sent_from_files.inc(static_cast<std::uint64_t>(n));
      continue;
    }
    if (n == 0) co_return "a segment file is shorter than the record data being sent";
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) co_return std::string("sendfile: ") + std::strerror(errno);
    boost::system::error_code ec;
    co_await socket_.async_wait(asio::ip::tcp::socket::wait_write, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return ec.message();
  }
  co_return closed_ ? "closed while sending" : std::string();
}

}  // namespace weir::net
