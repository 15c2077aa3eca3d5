#include "net/connection.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/sendfile.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "base/assert.h"
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

std::int64_t steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A frame's buffer starts at this size (or the frame's, if smaller) and doubles as its bytes
// arrive (the budget has counted the whole frame already).
constexpr std::size_t kFirstChunkBytes = std::size_t{1} << 20;

// A reply's shared tail (Metadata of every topic: 2.6 MB at 100,000 partitions) is written at most
// this much at a time, each piece a turn of its own on the shard's executor: a write to a
// loopback socket copies and delivers all it is given within the call, and with the OS's buffer
// autotuning that can be megabytes, while the shard's other connections wait.
constexpr std::size_t kTailWriteBytes = std::size_t{256} << 10;

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, RequestSink& sink, ClientInfo client, ConnectionSettings settings,
                       std::shared_ptr<MemoryBudget> budget, Server& server, ShardStats& stats)
    : socket_(std::move(socket)),
      sink_(sink),
      client_(std::move(client)),
      settings_(settings),
      budget_(std::move(budget)),
      memory_(std::make_shared<ConnectionMemory>()),
      server_(server),
      stats_(stats),
      writer_wake_(socket_.get_executor()),
      reader_wake_(socket_.get_executor()),
      budget_wake_(socket_.get_executor()),
      watchdog_(socket_.get_executor()),
      last_io_ms_(steady_now_ms()) {
  WEIR_ASSERT(settings_.max_request_bytes <= budget_->per_connection_bytes(),
              "a connection's share of the request memory budget must hold its largest request");
  writer_wake_.expires_at(asio::steady_timer::time_point::max());
  reader_wake_.expires_at(asio::steady_timer::time_point::max());
}

void Connection::start() {
  boost::system::error_code ec;
  socket_.native_non_blocking(true, ec);  // sendfile(2) must not block the shard
  auto self = shared_from_this();
  asio::co_spawn(socket_.get_executor(), [self]() { return self->read_loop(); }, asio::detached);
  asio::co_spawn(socket_.get_executor(), [self]() { return self->write_loop(); }, asio::detached);
  if (settings_.idle_timeout_ms >= 0 || settings_.partial_request_timeout_ms >= 0) {
    asio::co_spawn(socket_.get_executor(), [self]() { return self->watchdog(); }, asio::detached);
  }
}

void Connection::close() {
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [self]() { self->shutdown("broker shutting down"); });
}

void Connection::shutdown(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  stats_.connections_closed.inc();
  if (!reason.empty() && stats_.close_log.allow(steady_now_ms())) {
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
  budget_wake_.cancel();
  watchdog_.cancel();
  server_.unregister_connection(client_.connection_id, client_.host);
}

asio::awaitable<void> Connection::read_loop() {
  stats_.connections_opened.inc();  // here: on the connection's own executor, its single writer
  while (!closed_) {
    std::shared_ptr<Frame> frame = co_await read_frame();
    if (!frame) co_return;
    if (!closed_ && slots_.size() >= max_inflight()) stats_.inflight_limit_hits.inc();
    while (!closed_ && slots_.size() >= max_inflight()) {
      boost::system::error_code ec;
      co_await reader_wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    if (closed_) co_return;
    auto slot = std::make_shared<Slot>();
    slots_.push_back(slot);
    auto self = shared_from_this();
    server_.request_started();  // run_request reports its end
    asio::co_spawn(
        socket_.get_executor(),
        [self, slot, frame = std::shared_ptr<const Frame>(std::move(frame))]() {
          return self->run_request(slot, frame);
        },
        asio::detached);
  }
}

asio::awaitable<std::shared_ptr<Frame>> Connection::read_frame() {
  boost::system::error_code ec;
  std::array<std::uint8_t, 4> size_buf{};
  std::size_t got = 0;
  while (got < size_buf.size()) {
    if (got > 0) arm_watchdog(frame_started_ms_ + settings_.partial_request_timeout_ms);
    const std::size_t n = co_await socket_.async_read_some(asio::buffer(size_buf.data() + got, size_buf.size() - got),
                                                           asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      const bool quiet = got == 0 && (ec == asio::error::eof || ec == asio::error::operation_aborted);
      shutdown(quiet ? "" : ec == asio::error::eof ? "client closed mid-request" : ec.message());
      co_return nullptr;
    }
    last_io_ms_ = steady_now_ms();
    if (got == 0) {
      frame_started_ms_ = last_io_ms_;
      frame_size_ = -1;
      frame_read_ = 0;
    }
    got += n;
  }
  const std::int32_t size =
      static_cast<std::int32_t>((std::uint32_t{size_buf[0]} << 24) | (std::uint32_t{size_buf[1]} << 16) |
                                (std::uint32_t{size_buf[2]} << 8) | size_buf[3]);
  if (size < 0 || size > settings_.max_request_bytes) {
    stats_.oversized_frames.inc();
    shutdown(
        fmt::format("request size {} is outside 0..socket.request.max.bytes ({})", size, settings_.max_request_bytes));
    co_return nullptr;
  }
  // The whole frame is taken from the budget before its first byte is read, so a frame that got
  // its memory can always complete (frames that grew step by step could all wait for each other);
  // the buffer itself grows only as bytes arrive, so a declared size costs nothing until sent.
  MemoryLease lease(budget_, memory_);
  frame_size_ = size;
  if (!co_await acquire_memory(size)) co_return nullptr;
  lease.add(size);
  std::vector<std::uint8_t> bytes;
  const auto total = static_cast<std::size_t>(size);
  std::size_t filled = 0;
  bool first_read = true;
  while (filled < total) {
    if (filled == bytes.size()) {
      std::size_t grown = std::min(total, std::max(kFirstChunkBytes, bytes.size() * 2));
      if (grown / 2 * 3 >= total) grown = total;  // spare the last copy when it would be small
      bytes.reserve(grown);  // exactly: never beyond the frame's size, which the budget counts
      bytes.resize(grown);
    }
    if (!first_read) arm_watchdog(frame_started_ms_ + settings_.partial_request_timeout_ms);
    first_read = false;
    const std::size_t n = co_await socket_.async_read_some(asio::buffer(bytes.data() + filled, bytes.size() - filled),
                                                           asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      shutdown(ec == asio::error::eof ? "client closed mid-request" : ec.message());
      co_return nullptr;
    }
    last_io_ms_ = steady_now_ms();
    filled += n;
    frame_read_ = static_cast<std::int64_t>(filled);
  }
  frame_started_ms_ = -1;
  // The lease goes with the frame: the budget gets the bytes back when the last reference to
  // the frame (the handler's, or whatever it handed the bytes to) is gone and they are freed.
  auto* frame = new Frame{std::move(bytes), std::chrono::steady_clock::now()};
  co_return std::shared_ptr<Frame>(frame, [lease = std::move(lease)](Frame* f) mutable {
    delete f;
    lease.reset();
  });
}

asio::awaitable<bool> Connection::acquire_memory(std::int64_t n) {
  if (budget_->try_acquire(*memory_, n)) co_return true;
  stats_.memory_budget_waits.inc();
  if (stats_.budget_log.allow(steady_now_ms())) {
    spdlog::warn(
        "event=request_memory_budget_full {} {} {} {} {} {} dropped_lines={}", log::kv("id", client_.connection_id),
        log::kv("client", fmt::format("{}:{}", client_.host, client_.port)),
        log::kv("in_use_bytes", budget_->in_use_bytes()), log::kv("queued.max.request.bytes", budget_->limit_bytes()),
        log::kv("connection_bytes", budget_->held_by(*memory_)), log::kv("wanted_bytes", n),
        stats_.budget_log.take_dropped());
  }
  // Waits in steps: each one first asks the server to reclaim memory from stalled partial frames
  // (reclaim_if_stalled), since a release may otherwise not come before their deadline.
  waiting_for_memory_ = true;
  bool acquired = false;
  while (!closed_ && !acquired) {
    server_.reclaim_stalled_frames();
    if (!budget_waiter_registered_) {
      budget_waiter_registered_ = true;
      std::weak_ptr<Connection> weak = weak_from_this();
      budget_->add_waiter([weak, ex = socket_.get_executor()]() {
        asio::post(ex, [weak]() {
          if (auto c = weak.lock()) {
            c->budget_waiter_registered_ = false;
            c->budget_wake_.cancel();
          }
        });
      });
    }
    if (budget_->try_acquire(*memory_, n)) {
      acquired = true;
      break;
    }
    boost::system::error_code ec;
    budget_wake_.expires_after(std::chrono::milliseconds(kStalledFrameMs / 4));
    co_await budget_wake_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    acquired = !closed_ && budget_->try_acquire(*memory_, n);
  }
  waiting_for_memory_ = false;
  // The client was not quiet while the reader waited for memory: its stall clock starts now.
  last_io_ms_ = steady_now_ms();
  co_return acquired;
}

void Connection::reclaim_if_stalled() {
  auto self = shared_from_this();
  asio::post(socket_.get_executor(), [self]() {
    Connection& c = *self;
    if (c.closed_ || c.waiting_for_memory_ || c.frame_started_ms_ < 0 || c.frame_size_ < 0) return;
    const std::int64_t quiet_ms = steady_now_ms() - c.last_io_ms_;
    if (quiet_ms < kStalledFrameMs || c.budget_->held_by(*c.memory_) == 0) return;
    c.stats_.stalled_frame_reclaims.inc();
    c.shutdown(
        fmt::format("request memory (queued.max.request.bytes) needed by other requests: this request's {} of {} bytes "
                    "arrived and nothing more for {} ms",
                    c.frame_read_, c.frame_size_, quiet_ms));
  });
}

std::int64_t Connection::next_deadline_ms() const {
  std::int64_t at = -1;
  const auto earliest = [&at](std::int64_t t) { at = at < 0 ? t : std::min(at, t); };
  const bool reading = frame_started_ms_ >= 0;
  if (reading && settings_.partial_request_timeout_ms >= 0) {
    earliest(frame_started_ms_ + settings_.partial_request_timeout_ms);
  }
  if (settings_.idle_timeout_ms >= 0) {
    // Busy (a request arriving or being answered): look again one idle period from now.
    const bool busy = reading || !slots_.empty();
    earliest((busy ? steady_now_ms() : last_io_ms_) + settings_.idle_timeout_ms);
  }
  return at;
}

void Connection::arm_watchdog(std::int64_t deadline_ms) {
  if (settings_.partial_request_timeout_ms < 0 || closed_) return;
  if (watchdog_at_ms_ < 0 || deadline_ms < watchdog_at_ms_) {
    watchdog_at_ms_ = deadline_ms;
    watchdog_.cancel();  // the watchdog wakes and sleeps again until the earlier deadline
  }
}

asio::awaitable<void> Connection::watchdog() {
  while (!closed_) {
    const std::int64_t now = steady_now_ms();
    if (frame_started_ms_ >= 0 && settings_.partial_request_timeout_ms >= 0 &&
        now - frame_started_ms_ >= settings_.partial_request_timeout_ms) {
      stats_.partial_request_timeouts.inc();
      shutdown(frame_size_ < 0 ? fmt::format("request not received in full within weir.partial.request.timeout.ms "
                                             "({} ms): its size prefix is incomplete",
                                             settings_.partial_request_timeout_ms)
                               : fmt::format("request not received in full within weir.partial.request.timeout.ms "
                                             "({} ms): {} of {} bytes arrived",
                                             settings_.partial_request_timeout_ms, frame_read_, frame_size_));
      co_return;
    }
    if (frame_started_ms_ < 0 && slots_.empty() && settings_.idle_timeout_ms >= 0 &&
        now - last_io_ms_ >= settings_.idle_timeout_ms) {
      stats_.idle_closes.inc();
      shutdown(fmt::format("idle for connections.max.idle.ms ({} ms)", settings_.idle_timeout_ms));
      co_return;
    }
    watchdog_at_ms_ = next_deadline_ms();
    watchdog_.expires_at(watchdog_at_ms_ < 0
                             ? asio::steady_timer::time_point::max()
                             : asio::steady_timer::time_point(std::chrono::milliseconds(watchdog_at_ms_)));
    boost::system::error_code ec;
    co_await watchdog_.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

asio::awaitable<void> Connection::run_request(std::shared_ptr<Slot> slot, std::shared_ptr<const Frame> frame) {
  struct Finished {
    Server& server;
    ~Finished() { server.request_finished(); }
  } finished{server_};
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
      if (reply.kind == Reply::Kind::kNoResponse) {
        last_io_ms_ = steady_now_ms();  // the idle period starts when the request is done
        continue;
      }
      if (std::string failed = co_await send(reply); !failed.empty()) {
        shutdown(failed);
        co_return;
      }
      last_io_ms_ = steady_now_ms();
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
  const asio::const_buffer tail = reply.shared_tail ? asio::buffer(*reply.shared_tail) : asio::const_buffer();
  if (reply.splices.empty()) {
    std::array<asio::const_buffer, 3> bufs{asio::buffer(size_buf), asio::buffer(reply.bytes),
                                           asio::buffer(tail, kTailWriteBytes)};
    std::size_t sent = co_await asio::async_write(socket_, bufs, asio::redirect_error(asio::use_awaitable, ec));
    stats_.bytes_sent_from_memory.inc(sent);
    for (std::size_t from = std::min(tail.size(), kTailWriteBytes); !ec && from < tail.size(); from += sent) {
      sent = co_await asio::async_write(socket_, asio::buffer(tail + from, kTailWriteBytes),
                                        asio::redirect_error(asio::use_awaitable, ec));
      stats_.bytes_sent_from_memory.inc(sent);
    }
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
    const std::size_t sent = co_await asio::async_write(socket_, bufs, asio::redirect_error(asio::use_awaitable, ec));
    stats_.bytes_sent_from_memory.inc(sent);
    if (ec) co_return ec.message();
    for (const FileRegion& region : splice.bytes->regions) {
      if (std::string failed = co_await send_file(region); !failed.empty()) co_return failed;
    }
    from = splice.at;
  }
  std::array<asio::const_buffer, 3> bufs{asio::buffer(size_buf, first ? size_buf.size() : 0),
                                         asio::buffer(reply.bytes.data() + from, reply.bytes.size() - from), tail};
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
