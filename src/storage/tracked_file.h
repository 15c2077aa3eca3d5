// A File plus the bookkeeping group commit needs: how many writes it has seen and up to which of
// them a sync is known to have completed. Owner thread only (the flusher sees only the File).
#pragma once

#include <cstdint>
#include <memory>

#include "storage/file.h"

namespace weir::storage {

class TrackedFile {
 public:
  TrackedFile() = default;
  explicit TrackedFile(std::shared_ptr<File> file) noexcept : file_(std::move(file)) {}

  [[nodiscard]] File& file() const noexcept { return *file_; }
  [[nodiscard]] const std::shared_ptr<File>& shared() const noexcept { return file_; }
  [[nodiscard]] explicit operator bool() const noexcept { return file_ != nullptr; }

  [[nodiscard]] Status<IoError> append(ByteSpan data) {
    ++written_;  // counted even on failure: some bytes may have reached the file
    return file_->append(data);
  }
  [[nodiscard]] Status<IoError> truncate(std::int64_t size) {
    ++written_;
    return file_->truncate(size);
  }
  [[nodiscard]] Status<IoError> sync() {
    const std::uint64_t generation = written_;
    auto ok = file_->sync();
    if (ok) mark_synced(generation);
    return ok;
  }

  // Writes so far; a sync started after the write with this number makes it durable.
  [[nodiscard]] std::uint64_t write_generation() const noexcept { return written_; }
  [[nodiscard]] bool dirty() const noexcept { return written_ > synced_; }
  void mark_synced(std::uint64_t generation) noexcept {
    if (generation > synced_) synced_ = generation;
  }

 private:
  std::shared_ptr<File> file_;
  std::uint64_t written_ = 0;
  std::uint64_t synced_ = 0;
};

}  // namespace weir::storage
