// The interface between the connection layer and whatever answers requests (the broker).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/awaitable.hpp>

#include "base/file_bytes.h"

namespace weir::net {

// Who sent a request.
struct ClientInfo {
  std::string host;
  std::uint16_t port = 0;
  std::string listener;
  std::uint64_t connection_id = 0;
  // The executor (shard) serving the connection: handle() runs there and resumes there.
  std::size_t shard = 0;
};

// One request frame as read from the socket, without its 4-byte size prefix.
struct Frame {
  std::vector<std::uint8_t> bytes;
  // When the whole frame had been read (latency is measured from here).
  std::chrono::steady_clock::time_point received_at;
};

struct Reply {
  enum class Kind { kSend, kNoResponse, kClose };
  Kind kind = Kind::kSend;
  // Response header + body, without the size prefix (kSend only)...
  std::vector<std::uint8_t> bytes;
  // ...with file bytes to be sent between them (zero-copy record data), in order of `at`.
  std::vector<Splice> splices;
  // Why the connection is closed (kClose only), for the log line.
  std::string reason;
  // ...and after all of that, bytes shared with other replies, sent from where they are without
  // a copy (an answer kept encoded for many requests: broker/answer_cache.h); null if none.
  std::shared_ptr<const std::vector<std::uint8_t>> shared_tail;

  // The response's size on the wire, without the size prefix.
  [[nodiscard]] std::int64_t size() const noexcept {
    auto n = static_cast<std::int64_t>(bytes.size());
    for (const Splice& s : splices) n += s.bytes->size;
    if (shared_tail) n += static_cast<std::int64_t>(shared_tail->size());
    return n;
  }

  static Reply close(std::string why) { return Reply{Kind::kClose, {}, {}, std::move(why), {}}; }
  static Reply none() { return Reply{Kind::kNoResponse, {}, {}, {}, {}}; }
};

class RequestSink {
 public:
  virtual ~RequestSink() = default;
  // Answers one request. Called on the connection's executor, in the order requests arrived;
  // the implementation must begin any ordered side effect (e.g. an append) before its first
  // suspension so that pipelined requests take effect in order.
  virtual boost::asio::awaitable<Reply> handle(const ClientInfo& client, std::shared_ptr<const Frame> frame) = 0;
};

}  // namespace weir::net
