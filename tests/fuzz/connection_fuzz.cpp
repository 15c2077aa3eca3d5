// libFuzzer target: a byte stream sent to a real net::Server over loopback, in pieces.
//
// Input: byte 0 picks how the stream is cut into writes (partial reads on the broker side);
// the rest is the stream itself: any number of frames (4-byte size prefix + body), pipelined,
// possibly ending in a partial frame or a frame whose size is out of range.
//
// The sink echoes each frame's bytes as its response, or closes the connection for a frame whose
// body starts with 0xFE. Properties checked beyond "no crash, no leak, no hang":
//   - responses arrive in request order, each equal to its request's bytes;
//   - after an out-of-range size or a closing frame, nothing more is answered;
//   - once the client has gone, every byte of the request memory budget has been given back.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include "net/server.h"

namespace wn = weir::net;

namespace {

constexpr std::int32_t kMaxRequestBytes = 1 << 16;

class EchoSink final : public wn::RequestSink {
 public:
  boost::asio::awaitable<wn::Reply> handle(const wn::ClientInfo&, std::shared_ptr<const wn::Frame> frame) override {
    if (!frame->bytes.empty() && frame->bytes[0] == 0xFE) co_return wn::Reply::close("fuzz: closing frame");
    wn::Reply r;
    r.bytes = frame->bytes;
    co_return r;
  }
};

wn::Server& server() {
  static EchoSink sink;
  static wn::Server* s = [] {
    spdlog::set_level(spdlog::level::off);
    wn::ServerOptions o;
    o.listeners.push_back({"PLAINTEXT", "127.0.0.1", 0});
    o.threads = 2;
    o.socket_request_max_bytes = kMaxRequestBytes;
    o.queued_max_request_bytes = 2 * kMaxRequestBytes;  // small: pipelined frames wait for memory
    o.max_inflight_requests_per_connection = 4;
    auto* srv = new wn::Server(o, sink);
    if (!srv->start().empty()) std::abort();
    // libFuzzer ends a timed run with exit(): the server's threads must be gone before static
    // destruction frees what they use (spdlog's registry, the sink). Registered after both were
    // built, so it runs before their destructors.
    std::atexit([] { server().stop(); });
    return srv;
  }();
  return *s;
}

struct Expected {
  std::vector<std::vector<std::uint8_t>> answers;  // in order
  bool closes = false;  // a bad size or a closing frame follows them: the broker may close early
};

// What the broker must answer for `stream`, by the framing rules.
Expected expected_answers(std::span<const std::uint8_t> stream) {
  Expected e;
  std::size_t at = 0;
  while (stream.size() - at >= 4) {
    const std::int32_t size =
        static_cast<std::int32_t>((std::uint32_t{stream[at]} << 24) | (std::uint32_t{stream[at + 1]} << 16) |
                                  (std::uint32_t{stream[at + 2]} << 8) | stream[at + 3]);
    if (size < 0 || size > kMaxRequestBytes) {
      e.closes = true;
      break;
    }
    if (stream.size() - at - 4 < static_cast<std::size_t>(size)) break;
    auto body = stream.subspan(at + 4, static_cast<std::size_t>(size));
    if (!body.empty() && body[0] == 0xFE) {
      e.closes = true;
      break;
    }
    e.answers.emplace_back(body.begin(), body.end());
    at += 4 + static_cast<std::size_t>(size);
  }
  return e;
}

// libFuzzer's -timeout timer (SIGALRM) interrupts blocking calls in this thread: EINTR is
// retried everywhere below, or an interrupted call would look like a broker that did not answer.
bool read_exact(int fd, std::uint8_t* out, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::recv(fd, out, n, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    out += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

bool send_all(int fd, const std::uint8_t* data, std::size_t n) {
  while (n > 0) {
    const ssize_t r = ::send(fd, data, n, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    data += r;
    n -= static_cast<std::size_t>(r);
  }
  return true;
}

// connect(2) interrupted by a signal goes on in the background: wait for it and take its result.
bool connect_to(int fd, const sockaddr_in& addr) {
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0) return true;
  if (errno != EINTR) return false;
  pollfd p{fd, POLLOUT, 0};
  while (true) {
    const int r = ::poll(&p, 1, 5000);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    break;
  }
  int err = 0;
  socklen_t len = sizeof err;
  return ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  wn::Server& srv = server();
  const std::size_t piece = 1 + data[0] % 64;  // bytes per write
  std::span<const std::uint8_t> stream(data + 1, size - 1);
  const Expected want = expected_answers(stream);

  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) std::abort();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(srv.bound_ports().front());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!connect_to(fd, addr)) std::abort();
  const int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{5, 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  // The broker may close early (bad size): a failed send is not a failure of the property.
  for (std::size_t at = 0; at < stream.size(); at += piece) {
    const std::size_t n = std::min(piece, stream.size() - at);
    if (!send_all(fd, stream.data() + at, n)) break;
  }
  for (const auto& answer : want.answers) {
    std::uint8_t prefix[4];
    if (!read_exact(fd, prefix, 4)) {
      if (!want.closes) std::abort();  // an answer owed was never sent
      break;
    }
    const std::uint32_t n = (std::uint32_t{prefix[0]} << 24) | (std::uint32_t{prefix[1]} << 16) |
                            (std::uint32_t{prefix[2]} << 8) | prefix[3];
    if (n != answer.size()) std::abort();
    std::vector<std::uint8_t> got(n);
    if (n > 0 && !read_exact(fd, got.data(), n)) {
      if (!want.closes) std::abort();
      break;
    }
    if (got != answer) std::abort();
  }
  ::close(fd);
  // Every frame is released once its request is done and its connection gone, and the
  // connection gives its slot back.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (srv.memory_budget().in_use_bytes() != 0 || srv.open_connections() != 0) {
    if (std::chrono::steady_clock::now() > deadline) std::abort();
    std::this_thread::yield();
  }
  return 0;
}
