// What one large Fetch costs on loopback, apart from any client's own work (issue 18, consume):
//
//   weir_fetch_floor fetch PORT TOPIC PARTITIONS REPS
//     Raw Fetch v4 requests on one connection, one at a time: every partition 0..PARTITIONS-1 at
//     offset (rep % 60) * 1000, 1 MiB each (max_bytes 50 MiB, max_wait 500 ms, min_bytes 1).
//     Prints the medians of request-to-first-response-byte and request-to-last-byte.
//   weir_fetch_floor floor FILE SNDBUF REPS [ANSWER_BYTES]
//     The same shape without a broker: a thread sendfile()s all of FILE per 4-byte request over a
//     loopback connection (SO_SNDBUF = SNDBUF unless 0); the client times request to last byte.
//     The floor under any broker's answer of that size on this machine. With ANSWER_BYTES, each
//     answer is the next window of that size in FILE (wrapping): a page-cached FILE larger than
//     the CPU's caches makes every copy read memory, as a broker's answers of new records do; the
//     same 16.7 MB sent again and again stays in the cache and reads ~1.5 ms faster.
//
// Each prints medians, including recvs: the reads one answer took (a reader that keeps up with
// the sender takes many small ones, and the receive work then runs on the sender's thread).
//
// Both read the answer with recv() into one buffer, as a client reading a whole response does.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

[[noreturn]] void die(const std::string& msg) {
  std::fprintf(stderr, "weir_fetch_floor: %s\n", msg.c_str());
  std::exit(1);
}

int connect_loopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) die("connect failed");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void write_all(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) die("write failed");
    done += static_cast<std::size_t>(n);
  }
}

struct Timing {
  double first_ms = 0;
  double all_ms = 0;
  std::size_t bytes = 0;
  int recvs = 0;  // how the answer arrived: few large reads, or many small ones
};

// Reads one size-prefixed response (or `expect` bytes when given) into buf.
Timing read_answer(int fd, std::vector<char>& buf, Clock::time_point t0, std::size_t expect) {
  Timing t;
  std::size_t need = expect > 0 ? expect : 4;
  bool sized = expect > 0;
  while (t.bytes < need) {
    if (buf.size() < need) buf.resize(need);
    const ssize_t n = ::recv(fd, buf.data() + t.bytes, buf.size() - t.bytes, 0);
    if (n <= 0) die("connection closed");
    ++t.recvs;
    if (t.bytes == 0) t.first_ms = ms_since(t0);
    t.bytes += static_cast<std::size_t>(n);
    if (!sized && t.bytes >= 4) {
      std::uint32_t size = 0;
      std::memcpy(&size, buf.data(), 4);
      need = 4 + ntohl(size);
      sized = true;
    }
  }
  t.all_ms = ms_since(t0);
  return t;
}

void be16(std::string& s, int v) {
  s.push_back(static_cast<char>((v >> 8) & 0xff));
  s.push_back(static_cast<char>(v & 0xff));
}
void be32(std::string& s, std::int64_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}
void be64(std::string& s, std::int64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) s.push_back(static_cast<char>((v >> shift) & 0xff));
}
void str16(std::string& s, const std::string& v) {
  be16(s, static_cast<int>(v.size()));
  s += v;
}

std::string fetch_v4(int correlation_id, const std::string& topic, int partitions, std::int64_t offset) {
  std::string b;
  be16(b, 1);  // Fetch
  be16(b, 4);
  be32(b, correlation_id);
  str16(b, "weir-fetch-floor");
  be32(b, -1);        // replica id
  be32(b, 500);       // max wait ms
  be32(b, 1);         // min bytes
  be32(b, 52428800);  // max bytes
  b.push_back(0);     // read_uncommitted
  be32(b, 1);
  str16(b, topic);
  be32(b, partitions);
  for (int p = 0; p < partitions; ++p) {
    be32(b, p);
    be64(b, offset);
    be32(b, 1048576);
  }
  std::string framed;
  be32(framed, static_cast<std::int64_t>(b.size()));
  return framed + b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int fetch(std::uint16_t port, const std::string& topic, int partitions, int reps) {
  const int fd = connect_loopback(port);
  std::vector<char> buf;
  std::vector<double> first, all, recvs;
  std::size_t bytes = 0;
  for (int r = 0; r < reps; ++r) {
    const std::string req = fetch_v4(r + 1, topic, partitions, static_cast<std::int64_t>(r % 60) * 1000);
    const auto t0 = Clock::now();
    write_all(fd, req);
    const Timing t = read_answer(fd, buf, t0, 0);
    first.push_back(t.first_ms);
    all.push_back(t.all_ms);
    recvs.push_back(t.recvs);
    bytes += t.bytes;
  }
  ::close(fd);
  const double mb = static_cast<double>(bytes) / 1e6 / reps;
  std::printf(
      "{\"fetches\": %d, \"mb_per_answer\": %.2f, \"first_byte_ms\": %.3f, \"all_ms\": %.3f, \"recvs\": %.0f}\n", reps,
      mb, median(first), median(all), median(recvs));
  return 0;
}

int loopback_floor(const char* file, int sndbuf, int reps, std::size_t answer_bytes) {
  const int data = ::open(file, O_RDONLY);
  struct stat st{};
  if (data < 0 || ::fstat(data, &st) != 0 || st.st_size <= 0) die(std::string("cannot read ") + file);
  const auto file_size = static_cast<std::size_t>(st.st_size);
  const std::size_t size = answer_bytes > 0 ? std::min(answer_bytes, file_size) : file_size;
  const std::size_t windows = file_size / size;
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listener, 1) != 0 ||
      ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    die("listen failed");
  }
  std::thread server([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd < 0) return;
    if (sndbuf > 0) ::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof sndbuf);
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    char request[4];
    for (std::size_t answer = 0;; ++answer) {
      std::size_t got = 0;
      while (got < sizeof request) {
        const ssize_t n = ::read(fd, request + got, sizeof request - got);
        if (n <= 0) {
          ::close(fd);
          return;
        }
        got += static_cast<std::size_t>(n);
      }
      auto offset = static_cast<off_t>((answer % windows) * size);
      const auto end = offset + static_cast<off_t>(size);
      while (offset < end) {
        if (::sendfile(fd, data, &offset, static_cast<std::size_t>(end - offset)) <= 0) {
          ::close(fd);
          return;
        }
      }
    }
  });
  const int fd = connect_loopback(ntohs(addr.sin_port));
  std::vector<char> buf(size);
  std::vector<double> all, recvs;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    write_all(fd, "next");
    const Timing t = read_answer(fd, buf, t0, size);
    all.push_back(t.all_ms);
    recvs.push_back(t.recvs);
  }
  ::close(fd);
  server.join();
  ::close(listener);
  ::close(data);
  std::printf("{\"transfers\": %d, \"mb_per_transfer\": %.2f, \"sndbuf\": %d, \"all_ms\": %.3f, \"recvs\": %.0f}\n",
              reps, static_cast<double>(size) / 1e6, sndbuf, median(all), median(recvs));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "fetch" && argc == 6) {
    return fetch(static_cast<std::uint16_t>(std::atoi(argv[2])), argv[3], std::atoi(argv[4]),
                 std::max(1, std::atoi(argv[5])));
  }
  if (mode == "floor" && (argc == 5 || argc == 6)) {
    const std::size_t answer_bytes = argc == 6 ? std::strtoull(argv[5], nullptr, 10) : 0;
    return loopback_floor(argv[2], std::atoi(argv[3]), std::max(1, std::atoi(argv[4])), answer_bytes);
  }
  die("usage: weir_fetch_floor fetch PORT TOPIC PARTITIONS REPS | floor FILE SNDBUF REPS [ANSWER_BYTES]");
}
