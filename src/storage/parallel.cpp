#include "storage/parallel.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace weir::storage {

void parallel_for(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  const auto work = [&]() {
    for (std::size_t i = next++; i < n; i = next++) fn(i);
  };
  const std::size_t helpers = std::min(threads, n) > 1 ? std::min(threads, n) - 1 : 0;
  std::vector<std::thread> pool;
  pool.reserve(helpers);
  for (std::size_t t = 0; t < helpers; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads to be had (a process or memory limit): fewer threads do the rest
    }
  }
  work();
  for (auto& t : pool) t.join();
}

}  // namespace weir::storage
