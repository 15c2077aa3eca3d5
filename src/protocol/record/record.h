// Records inside a v2 batch, read as zero-copy views.
//
// Record layout (after the batch header, or after decompressing the records section):
//
//   length          varint   bytes of the record after this field
//   attributes      int8     unused, 0
//   timestampDelta  varlong  timestamp minus the batch's baseTimestamp
//   offsetDelta     varint   offset minus the batch's baseOffset
//   keyLength       varint   -1 for a null key
//   key             bytes
//   valueLength     varint   -1 for a null value
//   value           bytes
//   headerCount     varint
//   headers         headerCount x { keyLength varint, key (UTF-8, never null),
//                                   valueLength varint (-1 = null), value }
//
// RecordReader parses untrusted bytes: every length is checked against what remains, nothing is
// allocated, and a record must use exactly its declared length. Stricter than Kafka in one way:
// a key or value length below -1 is rejected rather than read as null.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

#include "base/bytes.h"
#include "base/result.h"
#include "protocol/record/errc.h"
#include "protocol/record/record_batch.h"

namespace weir::record {

// A record header, used both for reading (views into the batch) and for building.
struct Header {
  std::string_view key = {};
  std::optional<ByteSpan> value = std::nullopt;
};

// The headers of one record. Iterating re-reads bytes RecordReader has already checked.
class HeaderRange {
 public:
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Header;
    using difference_type = std::ptrdiff_t;
    using pointer = const Header*;
    using reference = const Header&;

    Iterator() = default;
    Iterator(ByteSpan bytes, std::int32_t count) noexcept : reader_(bytes), left_(count) {
      advance();
    }

    const Header& operator*() const noexcept { return current_; }
    const Header* operator->() const noexcept { return &current_; }
    Iterator& operator++() noexcept {
      advance();
      return *this;
    }
    void operator++(int) noexcept { advance(); }
    bool operator==(std::default_sentinel_t) const noexcept { return done_; }

   private:
    void advance() noexcept;

    ByteReader reader_;
    std::int32_t left_ = 0;
    Header current_;
    bool done_ = true;
  };

  HeaderRange() = default;
  HeaderRange(ByteSpan bytes, std::int32_t count) noexcept : bytes_(bytes), count_(count) {}

  [[nodiscard]] Iterator begin() const noexcept { return Iterator(bytes_, count_); }
  [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }
  [[nodiscard]] std::int32_t size() const noexcept { return count_; }
  [[nodiscard]] bool empty() const noexcept { return count_ == 0; }

 private:
  ByteSpan bytes_{};
  std::int32_t count_ = 0;
};

// One record, as views into the batch bytes.
struct RecordView {
  std::int8_t attributes = 0;
  std::int64_t timestamp_delta = 0;
  std::int32_t offset_delta = 0;
  std::optional<ByteSpan> key = std::nullopt;
  std::optional<ByteSpan> value = std::nullopt;
  HeaderRange headers = {};
  ByteSpan bytes = {};  // the whole record, length prefix included
};

// Reads the records of an uncompressed batch, or of a decompressed records section, one by one.
//
//   auto reader = RecordReader::of(batch);          // Errc::compressed for compressed batches
//   while (true) {
//     auto next = reader->next();
//     if (!next) return unexpected(next.error());   // malformed
//     if (!*next) break;                            // all records read
//     use(**next);
//   }
//
// Besides each record's own structure it checks that there are exactly `count` records, that
// offset deltas strictly increase and stay within [0, lastOffsetDelta], and that no bytes follow
// the last record. After an error, next() keeps returning that error.
class RecordReader {
 public:
  // The records of an uncompressed batch.
  [[nodiscard]] static Result<RecordReader, Errc> of(const RecordBatchView& batch) noexcept;

  // Records held in `records` (e.g. after decompression), with the batch's count and
  // lastOffsetDelta.
  RecordReader(ByteSpan records, std::int32_t count, std::int32_t last_offset_delta) noexcept
      : reader_(records), left_(count), last_offset_delta_(last_offset_delta) {}

  // The next record; nullopt once all records are read.
  [[nodiscard]] Result<std::optional<RecordView>, Errc> next() noexcept;

 private:
  ByteReader reader_;
  std::int32_t left_;
  std::int32_t last_offset_delta_;
  std::int64_t previous_offset_delta_ = -1;
  std::optional<Errc> error_;
};

// Parses the one record at the front of `r` (its length prefix included), checking its structure
// and that its offset delta lies in (previous_offset_delta, last_offset_delta]; the views point
// into r's bytes. RecordReader and StreamingRecordReader (record_stream.h) both parse with it.
[[nodiscard]] Result<RecordView, Errc> parse_record(ByteReader& r, std::int64_t previous_offset_delta,
                                                    std::int32_t last_offset_delta) noexcept;

// Calls fn(const RecordView&) for every record; stops at the first malformed one.
template <class Fn>
[[nodiscard]] Status<Errc> for_each_record(RecordReader reader, Fn&& fn) {
  for (;;) {
    auto next = reader.next();
    if (!next) return unexpected(next.error());
    if (!*next) return {};
    fn(**next);
  }
}

template <class Fn>
[[nodiscard]] Status<Errc> for_each_record(const RecordBatchView& batch, Fn&& fn) {
  auto reader = RecordReader::of(batch);
  if (!reader) return unexpected(reader.error());
  return for_each_record(*reader, std::forward<Fn>(fn));
}

// Parses every record of an uncompressed batch (see RecordReader for what is checked).
// Errc::compressed for a compressed batch. Call after RecordBatchView::validate().
[[nodiscard]] Status<Errc> validate_records(const RecordBatchView& batch) noexcept;

}  // namespace weir::record
