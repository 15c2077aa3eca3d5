// The process's file descriptor limit (RLIMIT_NOFILE).
#pragma once

#include <cstdint>

namespace weir::net {

struct FdLimit {
  std::uint64_t soft = 0;
  std::uint64_t hard = 0;
  bool raised = false;  // the soft limit was raised by raise_fd_limit()
};

// Raises the soft RLIMIT_NOFILE to the hard limit (to fs.nr_open when the hard limit is
// unlimited) and returns the limits in force afterwards.
FdLimit raise_fd_limit();

}  // namespace weir::net
