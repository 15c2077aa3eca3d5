#include "net/fd_limit.h"

#include <sys/resource.h>

#include <charconv>
#include <fstream>
#include <string>

namespace weir::net {

namespace {

// Linux refuses a soft limit above fs.nr_open, whatever the hard limit says.
std::uint64_t nr_open() {
  std::ifstream in("/proc/sys/fs/nr_open");
  std::string text;
  std::uint64_t v = 0;
  if (in >> text) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc()) v = 0;
  }
  return v > 0 ? v : 1048576;
}

}  // namespace

FdLimit raise_fd_limit() {
  FdLimit out;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return out;
  const rlim_t before = rl.rlim_cur;
  rlim_t target = rl.rlim_max;
  if (target == RLIM_INFINITY) target = static_cast<rlim_t>(nr_open());
  if (rl.rlim_cur < target) {
    rlimit want = rl;
    want.rlim_cur = target;
    if (::setrlimit(RLIMIT_NOFILE, &want) == 0) rl = want;
  }
  out.soft = rl.rlim_cur == RLIM_INFINITY ? nr_open() : static_cast<std::uint64_t>(rl.rlim_cur);
  out.hard = rl.rlim_max == RLIM_INFINITY ? nr_open() : static_cast<std::uint64_t>(rl.rlim_max);
  out.raised = rl.rlim_cur != before;
  return out;
}

}  // namespace weir::net
