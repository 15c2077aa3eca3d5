// Bytes that stay in files until a response is written: zero-copy Fetch.
//
// The encoder writes a records field held this way as its length only and notes where the bytes
// belong (a Splice); the connection then writes the encoded parts and, in between, the file
// regions with sendfile(2), so record data goes from the page cache to the socket without being
// copied through the broker.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace weir {

// A byte range of an open file.
struct FileRegion {
  int fd = -1;
  std::int64_t offset = 0;
  std::int64_t size = 0;
};

struct FileBytes {
  std::vector<FileRegion> regions;  // in order
  std::int64_t size = 0;            // the regions' sizes added up
  std::shared_ptr<const void> owner;  // keeps the regions' files open while this lives

  // Appends the bytes to out with pread(2), for an encoder that keeps no splices. False (out as
  // it was) on a read error or when a file has become shorter than its region.
  [[nodiscard]] bool read_into(std::vector<std::uint8_t>& out) const;
};

// Where a FileBytes goes in an encoded message: before the encoded byte at index `at`.
struct Splice {
  std::size_t at = 0;
  std::shared_ptr<const FileBytes> bytes;
};

}  // namespace weir
