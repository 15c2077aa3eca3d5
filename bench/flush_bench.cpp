// How should one group-commit flush cycle make N dirty files durable on this machine's data
// disk? Measures, per cycle (append 16 KiB to each of N files, then make them all durable):
//   sequential   fdatasync each file in turn (the Flusher's original way)
//   parallel-T   fdatasync the files from T threads at once (ext4 can share one journal commit)
//   syncfs       one syncfs() of the file system holding them (also flushes unrelated dirty data)
// With UNRELATED_KIB > 0, each cycle also leaves that much unrelated data dirty in another file
// (acks=1 traffic of other partitions), which syncfs flushes too.
// Prints a Markdown table of median and p90 cycle times. Usage: flush_bench DIR [CYCLES [UNRELATED_KIB [FILE_KIB]]]
// (FILE_KIB: appended to each file per cycle, default 16)
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void check(bool ok, const char* what) {
  if (!ok) {
    std::perror(what);
    std::exit(1);
  }
}

void sync_parallel(const std::vector<int>& fds, int threads) {
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (std::size_t i = next++; i < fds.size(); i = next++) check(::fdatasync(fds[i]) == 0, "fdatasync");
    });
  }
  for (auto& t : pool) t.join();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: flush_bench DIR [CYCLES]\n");
    return 2;
  }
  const std::string dir = argv[1];
  const int cycles = argc > 2 ? std::atoi(argv[2]) : 40;
  const long unrelated_kib = argc > 3 ? std::atol(argv[3]) : 0;
  const long file_kib = argc > 4 ? std::atol(argv[4]) : 16;
  std::vector<char> block(static_cast<std::size_t>(file_kib) * 1024, 'x');
  std::vector<char> unrelated_block(1024 * 1024, 'u');
  const std::string unrelated_path = dir + "/flush-bench-unrelated.log";
  const int unrelated = ::open(unrelated_path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
  check(unrelated >= 0, "open");
  std::printf("Appended per file per cycle: %ld KiB; unrelated dirty data per cycle: %ld KiB\n\n", file_kib, unrelated_kib);
  std::printf("| dirty files | method | median ms/cycle | p90 ms/cycle |\n|---:|---|---:|---:|\n");
  for (int n : {1, 4, 16, 64, 256, 1024, 4096}) {
    std::vector<int> fds;
    for (int i = 0; i < n; ++i) {
      const std::string path = dir + "/flush-bench-" + std::to_string(i) + ".log";
      const int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_APPEND | O_CLOEXEC, 0644);
      check(fd >= 0, "open");
      fds.push_back(fd);
    }
    check(::fsync(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == 0, "fsync dir");
    struct Method {
      std::string name;
      int threads;  // 0: syncfs, 1: sequential
    };
    std::vector<Method> methods = {{"sequential", 1}, {"parallel-2", 2}, {"parallel-4", 4}, {"parallel-8", 8},
                                   {"parallel-16", 16}, {"syncfs", 0}};
    for (const auto& m : methods) {
      if (m.threads > n || (m.threads == 1 && n > 256)) continue;  // sequential: minutes at 4096
      std::vector<double> ms;
      for (int c = 0; c < cycles; ++c) {
        for (int fd : fds) check(::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size()), "write");
        for (long left = unrelated_kib * 1024; left > 0; left -= static_cast<long>(unrelated_block.size())) {
          const auto len = static_cast<std::size_t>(std::min<long>(left, static_cast<long>(unrelated_block.size())));
          check(::write(unrelated, unrelated_block.data(), len) == static_cast<ssize_t>(len), "write");
        }
        const auto t0 = Clock::now();
        if (m.threads == 0) {
          check(::syncfs(fds[0]) == 0, "syncfs");
        } else if (m.threads == 1) {
          for (int fd : fds) check(::fdatasync(fd) == 0, "fdatasync");
        } else {
          sync_parallel(fds, m.threads);
        }
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      std::printf("| %d | %s | %.2f | %.2f |\n", n, m.name.c_str(), percentile(ms, 50), percentile(ms, 90));
      std::fflush(stdout);
    }
    for (int i = 0; i < n; ++i) {
      ::close(fds[static_cast<std::size_t>(i)]);
      ::unlink((dir + "/flush-bench-" + std::to_string(i) + ".log").c_str());
    }
  }
  ::close(unrelated);
  ::unlink(unrelated_path.c_str());
  return 0;
}
