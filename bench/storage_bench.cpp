// Storage benchmark (issue: storage): weir's partition log and group-commit flusher against the raw
// bandwidth of the same disk, in one run. No network, no broker: PartitionLog and Flusher as the
// broker drives them. Prints a Markdown table and, with --json FILE, writes the numbers.
//
//   weir_storage_bench DIR [--bytes N] [--seconds S] [--json FILE]
//
//   raw write          N bytes in 1 MiB blocks, one fdatasync at the end
//   raw fsync 16 KiB   16 KiB writes with fdatasync after each, for S seconds
//   append             16 KiB batches (16 records of 1 KiB) to 1 and to 16 partitions, N bytes, no fsync
//   durable append     W writers (1, 4, 16), each appending 16 KiB batches to its own partition and
//                      waiting for the group-commit flusher before the next, for S seconds
//   read               a partition's batches from the page cache with PartitionLog::read and
//                      sendfile(2) of its slices to a socket, against sendfile of the raw segment file
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "protocol/record/record_batch_builder.h"
#include "storage/file.h"
#include "storage/flusher.h"
#include "storage/partition_log.h"

namespace fs = std::filesystem;
using namespace weir;

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kMiB = 1024.0 * 1024.0;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "weir_storage_bench: %s\n", what.c_str());
  std::exit(1);
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<std::byte> make_batch() {
  record::RecordBatchBuilder builder;
  std::string value(1024, 'v');
  const auto now = SystemClock::instance().wall_ms();
  for (int i = 0; i < 16; ++i) {
    const std::string key = "key-" + std::to_string(i);
    builder.append(now, std::as_bytes(std::span(key)), std::as_bytes(std::span(value)));
  }
  return builder.build();
}

std::unique_ptr<storage::PartitionLog> open_log(const fs::path& dir) {
  storage::LogConfig config;
  config.segment_bytes = 1LL << 30;
  config.retention_ms = -1;
  auto log = storage::PartitionLog::open(storage::PosixFileSystem::instance(), dir, config, SystemClock::instance(),
                                         {.clean_shutdown = true});
  if (!log) die("cannot open a log in " + dir.string());
  return std::move(*log);
}

void append(storage::PartitionLog& log, const std::vector<std::byte>& batch, std::vector<std::byte>& scratch) {
  scratch = batch;  // the log stamps offsets in place, as into a request buffer
  if (!log.append_as_leader(scratch, 0)) die("append failed");
}

double raw_write(const fs::path& dir, std::int64_t bytes) {
  const fs::path path = dir / "raw-write";
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) die("open raw-write");
  std::vector<char> block(1 << 20, 'r');
  const auto t0 = Clock::now();
  for (std::int64_t done = 0; done < bytes; done += static_cast<std::int64_t>(block.size())) {
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) die("write");
  }
  if (::fdatasync(fd) != 0) die("fdatasync");
  const double mbps = static_cast<double>(bytes) / kMiB / seconds_since(t0);
  ::close(fd);
  fs::remove(path);
  return mbps;
}

double raw_fsync_16k(const fs::path& dir, double seconds) {
  const fs::path path = dir / "raw-fsync";
  const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) die("open raw-fsync");
  std::vector<char> block(16 << 10, 'f');
  std::int64_t written = 0;
  const auto t0 = Clock::now();
  while (seconds_since(t0) < seconds) {
    if (::write(fd, block.data(), block.size()) != static_cast<ssize_t>(block.size())) die("write");
    if (::fdatasync(fd) != 0) die("fdatasync");
    written += static_cast<std::int64_t>(block.size());
  }
  const double mbps = static_cast<double>(written) / kMiB / seconds_since(t0);
  ::close(fd);
  fs::remove(path);
  return mbps;
}

double append_nofsync(const fs::path& dir, int partitions, std::int64_t bytes, const std::vector<std::byte>& batch) {
  std::vector<std::unique_ptr<storage::PartitionLog>> logs;
  for (int p = 0; p < partitions; ++p) logs.push_back(open_log(dir / ("append-" + std::to_string(partitions) + "-" + std::to_string(p))));
  std::vector<std::byte> scratch;
  const auto t0 = Clock::now();
  std::int64_t done = 0;
  for (std::int64_t i = 0; done < bytes; ++i) {
    append(*logs[static_cast<std::size_t>(i % partitions)], batch, scratch);
    done += static_cast<std::int64_t>(batch.size());
  }
  const double mbps = static_cast<double>(done) / kMiB / seconds_since(t0);
  for (auto& log : logs) (void)log->close();
  return mbps;
}

double durable_append(const fs::path& dir, int writers, double seconds, const std::vector<std::byte>& batch) {
  storage::Flusher flusher(storage::PosixFileSystem::instance());
  flusher.start();
  std::atomic<std::int64_t> written{0};
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (int w = 0; w < writers; ++w) {
    threads.emplace_back([&, w] {
      auto log = open_log(dir / ("durable-" + std::to_string(writers) + "-" + std::to_string(w)));
      std::vector<std::byte> scratch;
      while (seconds_since(t0) < seconds) {
        append(*log, batch, scratch);
        storage::SyncToken token = log->prepare_sync();
        std::promise<bool> done;
        if (!flusher.submit(token, [&](Status<storage::Errc> r) { done.set_value(r.has_value()); })) die("flusher refused");
        if (!done.get_future().get()) die("sync failed");
        log->mark_synced(token);  // this thread owns the log, as a broker shard does
        written += static_cast<std::int64_t>(batch.size());
      }
      (void)log->close();
    });
  }
  for (auto& t : threads) t.join();
  const double mbps = static_cast<double>(written.load()) / kMiB / seconds_since(t0);
  flusher.stop();
  return mbps;
}

// A socket whose other end a thread drains, so sendfile has somewhere realistic to go.
struct Drain {
  int fds[2] = {-1, -1};
  std::thread reader;
  Drain() {
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) die("socketpair");
    reader = std::thread([fd = fds[1]] {
      std::vector<char> buf(1 << 20);
      while (::read(fd, buf.data(), buf.size()) > 0) {
      }
    });
  }
  ~Drain() {
    ::shutdown(fds[0], SHUT_WR);
    reader.join();
    ::close(fds[0]);
    ::close(fds[1]);
  }
  void send(int fd, std::int64_t position, std::int64_t size) const {
    off_t off = static_cast<off_t>(position);
    while (size > 0) {
      const ssize_t n = ::sendfile(fds[0], fd, &off, static_cast<std::size_t>(size));
      if (n <= 0) die("sendfile");
      size -= n;
    }
  }
};

std::pair<double, double> read_vs_sendfile(const fs::path& dir, std::int64_t bytes, const std::vector<std::byte>& batch) {
  auto log = open_log(dir / "read-0");
  std::vector<std::byte> scratch;
  for (std::int64_t done = 0; done < bytes; done += static_cast<std::int64_t>(batch.size())) append(*log, batch, scratch);
  const std::int64_t end = log->log_end_offset();
  Drain drain;
  double weir_mbps = 0;
  {
    const auto t0 = Clock::now();
    std::int64_t offset = 0;
    std::int64_t sent = 0;
    while (offset < end) {  // 1 MiB fetches, as a consumer with max.partition.fetch.bytes=1 MiB
      auto r = log->read(offset, 1 << 20, end, true);
      if (!r || r->slices.empty()) die("read failed");
      for (const auto& s : r->slices) drain.send(s.fd(), s.position, s.size);
      sent += r->size_bytes;
      // The next offset: one past the last batch returned (batches of 16 records).
      offset += (r->size_bytes / static_cast<std::int64_t>(batch.size())) * 16;
    }
    weir_mbps = static_cast<double>(sent) / kMiB / seconds_since(t0);
  }
  double raw_mbps = 0;
  {
    const fs::path segment = dir / "read-0" / "00000000000000000000.log";
    const int fd = ::open(segment.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) die("open segment");
    const std::int64_t size = static_cast<std::int64_t>(fs::file_size(segment));
    const auto t0 = Clock::now();
    for (std::int64_t pos = 0; pos < size; pos += 1 << 20) drain.send(fd, pos, std::min<std::int64_t>(1 << 20, size - pos));
    raw_mbps = static_cast<double>(size) / kMiB / seconds_since(t0);
    ::close(fd);
  }
  (void)log->close();
  return {weir_mbps, raw_mbps};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die("usage: weir_storage_bench DIR [--bytes N] [--seconds S] [--json FILE]");
  const fs::path dir = fs::path(argv[1]) / "weir-storage-bench";
  std::int64_t bytes = 4LL << 30;
  double seconds = 5;
  std::string json;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--bytes") bytes = std::atoll(argv[i + 1]);
    else if (k == "--seconds") seconds = std::atof(argv[i + 1]);
    else if (k == "--json") json = argv[i + 1];
    else die("unknown option " + k);
  }
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto batch = make_batch();
  struct Row {
    std::string key, label;
    double mbps;
  };
  std::vector<Row> rows;
  auto add = [&](std::string key, std::string label, double mbps) {
    std::fprintf(stderr, "%s: %.1f MiB/s\n", label.c_str(), mbps);
    rows.push_back({std::move(key), std::move(label), mbps});
  };
  const double raw = raw_write(dir, bytes);
  add("raw_write_1m", "raw write, 1 MiB blocks, one fdatasync", raw);
  const double raw_sync = raw_fsync_16k(dir, seconds);
  add("raw_fsync_16k", "raw write, 16 KiB blocks, fdatasync each", raw_sync);
  add("append_p1", "append 16 KiB batches, 1 partition, no fsync", append_nofsync(dir, 1, bytes, batch));
  fs::remove_all(dir / "append-1-0");
  add("append_p16", "append 16 KiB batches, 16 partitions, no fsync", append_nofsync(dir, 16, bytes, batch));
  for (int p = 0; p < 16; ++p) fs::remove_all(dir / ("append-16-" + std::to_string(p)));
  for (int w : {1, 4, 16}) {
    add("durable_w" + std::to_string(w), "durable append (group commit), " + std::to_string(w) + " writers",
        durable_append(dir, w, seconds, batch));
  }
  const auto [weir_read, raw_read] = read_vs_sendfile(dir, std::min<std::int64_t>(bytes, 1LL << 30), batch);
  add("read_weir", "read from page cache: PartitionLog::read + sendfile, 1 MiB fetches", weir_read);
  add("read_raw", "raw sendfile of the same segment file, 1 MiB chunks", raw_read);
  fs::remove_all(dir);

  std::printf("| measurement | MiB/s | of raw |\n|---|---:|---:|\n");
  for (const auto& r : rows) {
    double base = raw;
    if (r.key.starts_with("durable")) base = raw_sync;
    if (r.key.starts_with("read")) base = raw_read;
    std::printf("| %s | %.1f | %s |\n", r.label.c_str(), r.mbps,
                r.key.starts_with("raw") || r.key == "read_raw" ? "" : (std::to_string(static_cast<int>(r.mbps / base * 100)) + " %").c_str());
  }
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{";
    for (std::size_t i = 0; i < rows.size(); ++i) out << (i ? ", " : "") << "\"" << rows[i].key << "_mbps\": " << rows[i].mbps;
    out << ", \"bytes\": " << bytes << ", \"seconds\": " << seconds << "}\n";
  }
  return 0;
}
