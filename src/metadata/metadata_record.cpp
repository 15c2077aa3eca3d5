#include "metadata/metadata_record.h"

#include <limits>

#include "base/assert.h"

namespace weir::metadata {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

// Decodes the body of a record of type M at `version` into a VersionedRecord.
template <class M>
Result<VersionedRecord, StoreErrc> decode_body(protocol::Reader& r, std::int16_t version) {
  if (version < M::kMinVersion || version > M::kMaxVersion) {
    return unexpected(StoreErrc::unsupported_version);
  }
  M message;
  message.decode(r, version);
  if (!r.ok()) return unexpected(StoreErrc::truncated_record);
  if (r.remaining() != 0) return unexpected(StoreErrc::trailing_bytes);
  return VersionedRecord{MetadataRecord(std::move(message)), version};
}

// Reads one frame header field: an unsigned varint that must fit a non-negative int16.
std::optional<std::int16_t> read_short(protocol::Reader& r) {
  const std::uint32_t v = r.uvarint();
  if (!r.ok() || v > static_cast<std::uint32_t>(std::numeric_limits<std::int16_t>::max())) {
    return std::nullopt;
  }
  return static_cast<std::int16_t>(v);
}

}  // namespace

std::int16_t record_type(const MetadataRecord& record) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kApiKey; }, record);
}

std::string_view record_name(const MetadataRecord& record) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kName; }, record);
}

std::int16_t default_version(const MetadataRecord& record) {
  return std::visit(Overloaded{
                        [](const RegisterBrokerRecord&) -> std::int16_t { return 4; },
                        [](const PartitionRecord&) -> std::int16_t { return 2; },
                        [](const PartitionChangeRecord&) -> std::int16_t { return 2; },
                        [](const auto&) -> std::int16_t { return 0; },
                    },
                    record);
}

void encode_record(const MetadataRecord& record, std::int16_t version, protocol::Bytes& out) {
  std::visit(
      [&](const auto& r) {
        using M = std::decay_t<decltype(r)>;
        WEIR_ASSERT(version >= M::kMinVersion && version <= M::kMaxVersion, "{} has no version {}", M::kName, version);
        protocol::Writer w(out);
        w.uvarint(kMetadataFrameVersion);
        w.uvarint(static_cast<std::uint32_t>(M::kApiKey));
        w.uvarint(static_cast<std::uint32_t>(version));
        r.encode(w, version);
      },
      record);
}

protocol::Bytes encode_record(const MetadataRecord& record) {
  protocol::Bytes out;
  encode_record(record, default_version(record), out);
  return out;
}

Result<VersionedRecord, StoreErrc> decode_record(std::span<const std::uint8_t> bytes) {
  protocol::Reader r(bytes);
  const auto frame = read_short(r);
  if (!frame) return unexpected(StoreErrc::truncated_record);
  if (*frame != static_cast<std::int16_t>(kMetadataFrameVersion)) {
    return unexpected(StoreErrc::unsupported_frame);
  }
  const auto type = read_short(r);
  const auto version = read_short(r);
  if (!type || !version) return unexpected(StoreErrc::truncated_record);
  switch (*type) {
    case RegisterBrokerRecord::kApiKey:
      return decode_body<RegisterBrokerRecord>(r, *version);
    case TopicRecord::kApiKey:
      return decode_body<TopicRecord>(r, *version);
    case PartitionRecord::kApiKey:
      return decode_body<PartitionRecord>(r, *version);
    case ConfigRecord::kApiKey:
      return decode_body<ConfigRecord>(r, *version);
    case PartitionChangeRecord::kApiKey:
      return decode_body<PartitionChangeRecord>(r, *version);
    case RemoveTopicRecord::kApiKey:
      return decode_body<RemoveTopicRecord>(r, *version);
    case FeatureLevelRecord::kApiKey:
      return decode_body<FeatureLevelRecord>(r, *version);
    case ProducerIdsRecord::kApiKey:
      return decode_body<ProducerIdsRecord>(r, *version);
    case NoOpRecord::kApiKey:
      return decode_body<NoOpRecord>(r, *version);
    default:
      return unexpected(StoreErrc::unknown_record_type);
  }
}

Result<VersionedRecord, StoreErrc> decode_record(ByteSpan bytes) {
  return decode_record(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

}  // namespace weir::metadata
