// Helpers shared by the storage tests: temporary directories, batches, and reading a whole log.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/record.h"
#include "protocol/record/record_batch_builder.h"
#include "storage/errc.h"
#include "storage/file.h"
#include "storage/partition_log.h"

namespace weir::storage {
inline std::ostream& operator<<(std::ostream& os, Errc e) { return os << to_string(e); }
}  // namespace weir::storage

namespace weir::storage::testing {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr ? base : "/tmp") + "/weir-storage-XXXXXX";
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A client batch of `count` records with timestamps first_ts, first_ts + 1, ... and values of
// value_bytes bytes that name the record ("v<i>-" then filler).
inline std::vector<std::byte> make_batch(int count, std::int64_t first_ts, std::size_t value_bytes = 16,
                                         record::BatchOptions options = {}) {
  record::RecordBatchBuilder builder(options);
  for (int i = 0; i < count; ++i) {
    std::string value = "v" + std::to_string(i) + "-";
    value.resize(std::max(value_bytes, value.size()), 'x');
    const std::string key = "k" + std::to_string(i);
    builder.append(first_ts + i, as_bytes(key), as_bytes(value));
  }
  return builder.build();
}

inline std::vector<std::byte> concat(std::initializer_list<std::vector<std::byte>> parts) {
  std::vector<std::byte> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct StoredBatch {
  std::int64_t base_offset;
  std::int64_t last_offset;
  std::vector<std::byte> bytes;
};

// Splits fetched bytes into batches (asserting they are whole, valid batches).
inline std::vector<StoredBatch> split(const std::vector<std::uint8_t>& data) {
  std::vector<StoredBatch> out;
  record::BatchSplitter splitter(std::as_bytes(std::span(data)));
  for (;;) {
    auto next = splitter.next();
    EXPECT_TRUE(next.has_value());
    if (!next || !*next) break;
    EXPECT_TRUE((*next)->validate(record::BatchOrigin::log).has_value());
    const ByteSpan b = (*next)->bytes();
    out.push_back(StoredBatch{(*next)->base_offset(), (*next)->last_offset(), {b.begin(), b.end()}});
  }
  EXPECT_TRUE(splitter.remaining().empty()) << "a partial batch in a read";
  return out;
}

inline Result<std::vector<StoredBatch>, Errc> read_batches(const PartitionLog& log, std::int64_t offset,
                                                           std::int32_t max_bytes = 1 << 30,
                                                           std::int64_t max_offset = INT64_MAX, bool min_one = true) {
  auto read = log.read(offset, max_bytes, max_offset, min_one);
  if (!read) return unexpected(read.error());
  std::vector<std::uint8_t> data;
  if (auto ok = read->append_to(data); !ok) return unexpected(ok.error());
  EXPECT_EQ(static_cast<std::int64_t>(data.size()), read->size_bytes);
  return split(data);
}

// Every batch from the log start to the end.
inline std::vector<StoredBatch> read_all(const PartitionLog& log) {
  std::vector<StoredBatch> all;
  std::int64_t next = log.log_start_offset();
  while (next < log.log_end_offset()) {
    auto batches = read_batches(log, next, 1 << 20);
    EXPECT_TRUE(batches.has_value());
    if (!batches || batches->empty()) break;
    for (auto& b : *batches) {
      next = b.last_offset + 1;
      all.push_back(std::move(b));
    }
  }
  return all;
}

// The record values of a batch, in order.
inline std::vector<std::string> values(const std::vector<std::byte>& batch) {
  std::vector<std::string> out;
  auto view = record::RecordBatchView::from(batch);
  EXPECT_TRUE(view.has_value());
  auto ok = record::for_each_record(
      *view, [&](const record::RecordView& r) { out.emplace_back(r.value ? as_string_view(*r.value) : "<null>"); });
  EXPECT_TRUE(ok.has_value());
  return out;
}

inline std::vector<std::byte> file_bytes(const std::filesystem::path& path) {
  auto text = read_file(PosixFileSystem::instance(), path, 1 << 30);
  EXPECT_TRUE(text.has_value()) << path;
  if (!text) return {};
  const ByteSpan b = as_bytes(*text);
  return {b.begin(), b.end()};
}

inline void write_bytes_at(const std::filesystem::path& path, std::int64_t position, ByteSpan data) {
  auto file = PosixFileSystem::instance().open(path, OpenMode::kCreate);
  ASSERT_TRUE(file.has_value()) << path;
  std::size_t written = 0;
  ASSERT_TRUE(detail::pwrite_fd((*file)->fd(), position, data, &written).has_value());
}

inline std::string hex(ByteSpan bytes) {
  std::string out;
  for (std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

}  // namespace weir::storage::testing
