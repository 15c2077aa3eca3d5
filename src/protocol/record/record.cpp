#include "protocol/record/record.h"

#include <iterator>
#include <ranges>

#include "base/assert.h"
#include "base/varint.h"

namespace weir::record {

static_assert(std::input_iterator<HeaderRange::Iterator>);
static_assert(std::ranges::input_range<HeaderRange>);

namespace {

// Reads a varint length-prefixed byte string where -1 means null; shorter than -1 is malformed.
Result<std::optional<ByteSpan>, Errc> read_nullable_bytes(ByteReader& r) noexcept {
  auto length = read_varint(r);
  if (!length || *length < -1) return unexpected(Errc::malformed_record);
  if (*length == -1) return std::optional<ByteSpan>();
  auto bytes = r.read_bytes(static_cast<std::size_t>(*length));
  if (!bytes) return unexpected(Errc::malformed_record);
  return std::optional<ByteSpan>(*bytes);
}

// Skips over `count` headers, checking each.
Status<Errc> skip_headers(ByteReader& r, std::int32_t count) noexcept {
  for (std::int32_t i = 0; i < count; ++i) {
    auto key_length = read_varint(r);
    if (!key_length || *key_length < 0) return unexpected(Errc::malformed_record);
    if (!r.skip(static_cast<std::size_t>(*key_length))) return unexpected(Errc::malformed_record);
    auto value = read_nullable_bytes(r);
    if (!value) return unexpected(value.error());
  }
  return {};
}

}  // namespace

void HeaderRange::Iterator::advance() noexcept {
  if (left_ <= 0) {
    done_ = true;
    return;
  }
  --left_;
  done_ = false;
  // RecordReader has checked these bytes; failing here is a bug, not bad input.
  auto key_length = read_varint(reader_);
  WEIR_ASSERT(key_length && *key_length >= 0);
  auto key = reader_.read_bytes(static_cast<std::size_t>(*key_length));
  WEIR_ASSERT(key.has_value());
  auto value = read_nullable_bytes(reader_);
  WEIR_ASSERT(value.has_value());
  current_ = Header{as_string_view(*key), *value};
}

Result<RecordReader, Errc> RecordReader::of(const RecordBatchView& batch) noexcept {
  if (batch.is_compressed()) return unexpected(Errc::compressed);
  return RecordReader(batch.records_bytes(), batch.records_count(), batch.last_offset_delta());
}

Result<std::optional<RecordView>, Errc> RecordReader::next() noexcept {
  if (error_) return unexpected(*error_);
  if (left_ <= 0) {
    if (left_ < 0)
      error_ = Errc::invalid_record_count;
    else if (!reader_.empty())
      error_ = Errc::trailing_bytes;
    if (error_) return unexpected(*error_);
    return std::optional<RecordView>();
  }
  auto record = parse_record(reader_, previous_offset_delta_, last_offset_delta_);
  if (!record) {
    error_ = record.error();
    return unexpected(*error_);
  }
  --left_;
  previous_offset_delta_ = record->offset_delta;
  return std::optional<RecordView>(*record);
}

Result<RecordView, Errc> parse_record(ByteReader& reader, std::int64_t previous_offset_delta,
                                      std::int32_t last_offset_delta) noexcept {
  const ByteSpan start = reader.rest();
  auto length = read_varint(reader);
  if (!length || *length < 0) return unexpected(Errc::malformed_record);
  auto body_bytes = reader.read_bytes(static_cast<std::size_t>(*length));
  if (!body_bytes) return unexpected(Errc::malformed_record);

  ByteReader body(*body_bytes);
  RecordView rec;
  rec.bytes = start.first(static_cast<std::size_t>(reader.rest().data() - start.data()));
  auto attributes = body.read_be<std::int8_t>();
  auto timestamp_delta = read_varlong(body);
  auto offset_delta = read_varint(body);
  if (!attributes || !timestamp_delta || !offset_delta) return unexpected(Errc::malformed_record);
  rec.attributes = *attributes;
  rec.timestamp_delta = *timestamp_delta;
  rec.offset_delta = *offset_delta;
  if (rec.offset_delta <= previous_offset_delta || rec.offset_delta > last_offset_delta) {
    return unexpected(Errc::record_offset_out_of_order);
  }

  auto key = read_nullable_bytes(body);
  if (!key) return unexpected(key.error());
  auto value = read_nullable_bytes(body);
  if (!value) return unexpected(value.error());
  rec.key = *key;
  rec.value = *value;

  auto header_count = read_varint(body);
  if (!header_count || *header_count < 0) return unexpected(Errc::malformed_record);
  const ByteSpan header_start = body.rest();
  if (auto headers = skip_headers(body, *header_count); !headers) {
    return unexpected(headers.error());
  }
  rec.headers =
      HeaderRange(header_start.first(header_start.size() - body.remaining()), *header_count);
  if (!body.empty()) return unexpected(Errc::malformed_record);
  return rec;
}

Status<Errc> validate_records(const RecordBatchView& batch) noexcept {
  return for_each_record(batch, [](const RecordView&) noexcept {});
}

}  // namespace weir::record
