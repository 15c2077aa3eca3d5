#include "metadata/snapshot.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

#include "protocol/codec.h"
#include "protocol/gen/snapshot_header_record.h"
#include "protocol/record/batch_splitter.h"
#include "protocol/record/compression.h"
#include "protocol/record/control_record.h"
#include "protocol/record/record.h"

namespace weir::metadata {
namespace {

// A records section may not decompress to more than this (Kafka's controllers cut metadata
// batches far smaller; the bound only stops a decompression bomb).
constexpr std::size_t kMaxDecompressedBytes = 64u << 20;

Result<MetadataReadStats, MetadataReadError> fail(StoreErrc code, std::int64_t offset, std::string detail) {
  return unexpected(MetadataReadError{code, offset, std::move(detail)});
}

std::span<const std::uint8_t> as_u8(ByteSpan bytes) {
  return {reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()};
}

// What a control batch starts with: the type of its first record (-1 if it has none).
struct ControlSummary {
  std::int16_t first_type = -1;
  std::optional<std::int64_t> header_timestamp_ms;  // when the first record is a SnapshotHeader
  bool has_footer = false;
};

using Walk = Result<MetadataReadStats, MetadataReadError>;

// The walk over batches shared by both readers; on_control is called per control batch.
template <class OnControl>
Walk walk(ByteSpan bytes, const MetadataRecordFn& fn, OnControl&& on_control) {
  MetadataReadStats stats;
  record::BatchSplitter splitter(bytes);
  std::int64_t expected = -1;  // the next batch must start at or after this
  for (;;) {
    const std::int64_t at = stats.next_offset;
    auto next = splitter.next();
    if (!next) return fail(StoreErrc::corrupt_log, at, "a batch header claims fewer than 49 bytes");
    if (!*next) break;
    const record::RecordBatchView& batch = **next;
    if (auto ok = batch.validate(record::BatchOrigin::log); !ok) {
      return fail(StoreErrc::corrupt_log, batch.base_offset(),
                  fmt::format("invalid batch: {}", record::to_string(ok.error())));
    }
    if (batch.base_offset() < expected) {
      return fail(StoreErrc::corrupt_log, batch.base_offset(),
                  fmt::format("batch offsets go backwards (expected at least {})", expected));
    }
    auto section = record::read_records_section(batch, kMaxDecompressedBytes);
    if (!section) {
      return fail(StoreErrc::corrupt_log, batch.base_offset(),
                  fmt::format("records cannot be decompressed: {}", record::to_string(section.error())));
    }
    std::optional<MetadataReadError> failure;
    ControlSummary control;
    auto status = record::for_each_record(section->reader(), [&](const record::RecordView& r) {
      if (failure) return;
      const std::int64_t offset = batch.base_offset() + r.offset_delta;
      if (batch.is_control()) {
        Result<record::ControlRecordKey, record::Errc> key = unexpected(record::Errc::truncated);
        if (r.key) key = record::parse_control_key(*r.key);
        if (!key) {
          failure = MetadataReadError{StoreErrc::corrupt_log, offset, "control record without a valid key"};
          return;
        }
        if (control.first_type == -1) {
          control.first_type = key->type;
          if (key->is(record::ControlRecordType::snapshot_header) && r.value) {
            // Value: SnapshotHeaderRecord at version 0, with no version prefix (Kafka's
            // ControlRecordUtils reads it at its current version, 0).
            protocol::Reader reader(as_u8(*r.value));
            protocol::SnapshotHeaderRecord header;
            header.decode(reader, 0);
            if (reader.ok() && reader.remaining() == 0) control.header_timestamp_ms = header.last_contained_log_timestamp;
          }
        }
        if (key->is(record::ControlRecordType::snapshot_footer)) control.has_footer = true;
        return;
      }
      if (!r.value) {
        failure = MetadataReadError{StoreErrc::corrupt_log, offset, "metadata record without a value"};
        return;
      }
      auto decoded = decode_record(*r.value);
      if (!decoded) {
        std::string what = fmt::format("undecodable metadata record: {}", to_string(decoded.error()));
        if (decoded.error() == StoreErrc::unknown_record_type || decoded.error() == StoreErrc::unsupported_version) {
          // Name the type: the frame header is intact in these cases.
          protocol::Reader header(as_u8(*r.value));
          (void)header.uvarint();
          const auto type = static_cast<std::int32_t>(header.uvarint());
          const auto version = static_cast<std::int32_t>(header.uvarint());
          const auto name = record_type_name(static_cast<std::int16_t>(type));
          what = fmt::format("{} (record type {}{}{}, version {})", what, type, name ? " " : "",
                             name ? *name : std::string_view{}, version);
        }
        failure = MetadataReadError{decoded.error(), offset, std::move(what)};
        return;
      }
      ++stats.records;
      if (auto ok = fn(offset, *decoded); !ok) failure = std::move(ok.error());
    });
    if (failure) return unexpected(std::move(*failure));
    if (!status) {
      return fail(StoreErrc::corrupt_log, batch.base_offset(),
                  fmt::format("malformed records: {}", record::to_string(status.error())));
    }
    ++stats.batches;
    if (batch.is_control()) {
      ++stats.control_batches;
      if (auto ok = on_control(batch.base_offset(), control, stats); !ok) return unexpected(std::move(ok.error()));
    }
    expected = batch.next_offset();
    stats.next_offset = batch.next_offset();
  }
  stats.trailing_bytes = splitter.remaining().size();
  return stats;
}

}  // namespace

Result<MetadataReadStats, MetadataReadError> for_each_metadata_record(ByteSpan bytes, const MetadataRecordFn& fn) {
  return walk(bytes, fn, [](std::int64_t, const ControlSummary&, const MetadataReadStats&) -> Status<MetadataReadError> {
    return {};
  });
}

Result<MetadataReadStats, MetadataReadError> replay_metadata_batches(ByteSpan bytes, MetadataImage& image) {
  return for_each_metadata_record(bytes, [&](std::int64_t offset, const VersionedRecord& r) -> Status<MetadataReadError> {
    if (auto ok = image.replay(r.record); !ok) {
      return unexpected(MetadataReadError{ok.error(), offset,
                                          fmt::format("{} contradicts the image", record_name(r.record))});
    }
    return {};
  });
}

Result<LoadedSnapshot, MetadataReadError> load_snapshot(ByteSpan bytes) {
  LoadedSnapshot out;
  bool header_seen = false;
  bool footer_seen = false;
  std::int64_t footer_batches = 0;
  auto stats = walk(
      bytes,
      [&](std::int64_t offset, const VersionedRecord& r) -> Status<MetadataReadError> {
        if (!header_seen) {
          return unexpected(
              MetadataReadError{StoreErrc::corrupt_log, offset, "the snapshot does not start with a SnapshotHeaderRecord"});
        }
        if (footer_seen) {
          return unexpected(MetadataReadError{StoreErrc::corrupt_log, offset, "records after the snapshot footer"});
        }
        if (auto ok = out.image.replay(r.record); !ok) {
          return unexpected(MetadataReadError{ok.error(), offset,
                                              fmt::format("{} contradicts the image", record_name(r.record))});
        }
        return {};
      },
      [&](std::int64_t offset, const ControlSummary& control, const MetadataReadStats& so_far) -> Status<MetadataReadError> {
        if (footer_seen) {
          return unexpected(MetadataReadError{StoreErrc::corrupt_log, offset, "batches after the snapshot footer"});
        }
        if (so_far.batches == 1) {
          if (control.first_type != static_cast<std::int16_t>(record::ControlRecordType::snapshot_header) ||
              !control.header_timestamp_ms) {
            return unexpected(
                MetadataReadError{StoreErrc::corrupt_log, offset, "the snapshot does not start with a SnapshotHeaderRecord"});
          }
          out.last_contained_log_timestamp_ms = *control.header_timestamp_ms;
          header_seen = true;
        }
        if (control.has_footer) {
          footer_seen = true;
          footer_batches = so_far.batches;
        }
        return {};
      });
  if (!stats) return unexpected(std::move(stats.error()));
  if (!header_seen) {
    return unexpected(MetadataReadError{StoreErrc::corrupt_log, 0, "the snapshot does not start with a SnapshotHeaderRecord"});
  }
  if (!footer_seen || footer_batches != stats->batches || stats->trailing_bytes != 0) {
    return unexpected(MetadataReadError{StoreErrc::corrupt_log, stats->next_offset,
                                        "the snapshot does not end with a SnapshotFooterRecord"});
  }
  if (out.image.in_transaction()) {
    return unexpected(MetadataReadError{StoreErrc::inconsistent_record, stats->next_offset,
                                        "the snapshot ends inside a metadata transaction"});
  }
  out.stats = *stats;
  return out;
}

}  // namespace weir::metadata
