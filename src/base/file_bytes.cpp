#include "base/file_bytes.h"

#include <cerrno>

#include <unistd.h>

namespace weir {

bool FileBytes::read_into(std::vector<std::uint8_t>& out) const {
  const std::size_t start = out.size();
  out.resize(start + static_cast<std::size_t>(size));
  std::size_t at = start;
  for (const FileRegion& r : regions) {
    std::int64_t done = 0;
    while (done < r.size) {
      const ssize_t n = ::pread(r.fd, out.data() + at, static_cast<std::size_t>(r.size - done), r.offset + done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        out.resize(start);
        return false;
      }
      done += n;
      at += static_cast<std::size_t>(n);
    }
  }
  return true;
}

}  // namespace weir
