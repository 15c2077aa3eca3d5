#include "storage/producer_snapshot.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "base/crc32c.h"

namespace weir::storage {

namespace {

// The first sequence of a batch from its last one and its offset delta, wrapping below 0 to
// Int32.MAX as sequences do.
std::int32_t first_sequence(std::int32_t last_seq, std::int32_t delta) {
  const std::int64_t first = static_cast<std::int64_t>(last_seq) - delta;
  if (first >= 0) return static_cast<std::int32_t>(first);
  return static_cast<std::int32_t>(first + std::int64_t{std::numeric_limits<std::int32_t>::max()} + 1);
}

}  // namespace

std::string snapshot_file_name(std::int64_t offset) { return fmt::format("{:020}{}", offset, kSnapshotSuffix); }

std::optional<std::int64_t> parse_snapshot_file_name(std::string_view name) {
  if (!name.ends_with(kSnapshotSuffix) || name.size() == kSnapshotSuffix.size()) return std::nullopt;
  const std::string_view digits = name.substr(0, name.size() - kSnapshotSuffix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::string_view to_string(SnapshotError e) noexcept {
  switch (e) {
    case SnapshotError::kTruncated:
      return "truncated";
    case SnapshotError::kVersion:
      return "unknown version";
    case SnapshotError::kCrc:
      return "crc mismatch";
    case SnapshotError::kInvalid:
      return "invalid";
  }
  return "unknown";
}

std::vector<std::byte> encode_snapshot(const ProducerStateTable& table) {
  std::vector<std::int64_t> ids;
  ids.reserve(table.size());
  for (const auto& [id, entry] : table.entries()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());

  ByteBuffer out(kSnapshotHeaderSize + ids.size() * kSnapshotEntrySize);
  out.append_be<std::int16_t>(kSnapshotVersion);
  const std::size_t crc_at = out.append_zeros(4);
  out.append_be<std::int32_t>(static_cast<std::int32_t>(ids.size()));
  for (std::int64_t id : ids) {
    const ProducerEntry& e = *table.find(id);
    const BatchMetadata* last = e.batches.empty() ? nullptr : &e.batches.back();
    out.append_be<std::int64_t>(id);
    out.append_be<std::int16_t>(e.epoch);
    out.append_be<std::int32_t>(last != nullptr ? last->last_seq : -1);
    out.append_be<std::int64_t>(last != nullptr ? last->last_offset : -1);
    const auto delta = last != nullptr ? static_cast<std::int32_t>(last->last_offset - last->first_offset) : 0;
    out.append_be<std::int32_t>(delta);
    out.append_be<std::int64_t>(e.last_timestamp_ms);
    out.append_be<std::int32_t>(e.coordinator_epoch);
    out.append_be<std::int64_t>(e.current_txn_first_offset.value_or(-1));
  }
  out.patch_be<std::uint32_t>(crc_at, crc32c(out.span().subspan(crc_at + 4)));
  return out.release();
}

Result<SnapshotEntries, SnapshotError> decode_snapshot(ByteSpan bytes) {
  ByteReader in(bytes);
  auto version = in.read_be<std::int16_t>();
  auto crc = in.read_be<std::uint32_t>();
  if (!version || !crc) return unexpected(SnapshotError::kTruncated);
  if (*version != kSnapshotVersion) return unexpected(SnapshotError::kVersion);
  if (crc32c(in.rest()) != *crc) return unexpected(SnapshotError::kCrc);
  auto count = in.read_be<std::int32_t>();
  if (!count) return unexpected(SnapshotError::kTruncated);
  if (*count < 0) return unexpected(SnapshotError::kInvalid);
  if (in.remaining() / kSnapshotEntrySize < static_cast<std::size_t>(*count)) {
    return unexpected(SnapshotError::kTruncated);
  }
  SnapshotEntries out;
  out.reserve(static_cast<std::size_t>(*count));
  for (std::int32_t i = 0; i < *count; ++i) {
    const std::int64_t id = *in.read_be<std::int64_t>();
    ProducerEntry e;
    e.epoch = *in.read_be<std::int16_t>();
    const std::int32_t last_seq = *in.read_be<std::int32_t>();
    const std::int64_t last_offset = *in.read_be<std::int64_t>();
    const std::int32_t delta = *in.read_be<std::int32_t>();
    e.last_timestamp_ms = *in.read_be<std::int64_t>();
    e.coordinator_epoch = *in.read_be<std::int32_t>();
    const std::int64_t txn_first = *in.read_be<std::int64_t>();
    if (txn_first >= 0) e.current_txn_first_offset = txn_first;
    if (last_offset >= 0) {
      e.batches.push_back(BatchMetadata{first_sequence(last_seq, delta), last_seq, last_offset - delta, last_offset,
                                        e.last_timestamp_ms});
    }
    out.emplace_back(id, std::move(e));
  }
  return out;
}

}  // namespace weir::storage
