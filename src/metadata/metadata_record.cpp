#include "metadata/metadata_record.h"

#include <array>
#include <limits>
#include <utility>

#include "base/assert.h"
#include "base/log.h"

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

// Per record type (api key): the decoder of its body and its schema name.
struct Decoder {
  Result<VersionedRecord, StoreErrc> (*decode)(protocol::Reader&, std::int16_t) = nullptr;
  std::string_view name;
};

// Api keys of metadata records are small (Kafka 4.3.1's largest is 28); the table has room for
// growth and is checked at compile time.
constexpr std::size_t kTypeSlots = 64;

template <std::size_t... I>
constexpr std::array<Decoder, kTypeSlots> make_decoders(std::index_sequence<I...>) {
  std::array<Decoder, kTypeSlots> table{};
  bool unique = true;
  (
      [&] {
        using M = std::variant_alternative_t<I, MetadataRecord>;
        static_assert(M::kApiKey >= 0 && static_cast<std::size_t>(M::kApiKey) < kTypeSlots);
        auto& slot = table[static_cast<std::size_t>(M::kApiKey)];
        if (slot.decode != nullptr) unique = false;
        slot = Decoder{&decode_body<M>, M::kName};
      }(),
      ...);
  if (!unique) throw "two MetadataRecord alternatives share an api key";  // compile-time only
  return table;
}

constexpr std::array<Decoder, kTypeSlots> kDecoders =
    make_decoders(std::make_index_sequence<std::variant_size_v<MetadataRecord>>{});

}  // namespace

std::int16_t record_type(const MetadataRecord& record) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kApiKey; }, record);
}

std::string_view record_name(const MetadataRecord& record) {
  return std::visit([](const auto& r) { return std::decay_t<decltype(r)>::kName; }, record);
}

std::optional<std::string_view> record_type_name(std::int16_t type) noexcept {
  if (type < 0 || static_cast<std::size_t>(type) >= kTypeSlots) return std::nullopt;
  const Decoder& d = kDecoders[static_cast<std::size_t>(type)];
  if (d.decode == nullptr) return std::nullopt;
  return d.name;
}

std::int16_t default_version(const MetadataRecord& record) {
  return std::visit(Overloaded{
                        [](const RegisterBrokerRecord&) -> std::int16_t { return 4; },
                        [](const PartitionRecord&) -> std::int16_t { return 2; },
                        [](const PartitionChangeRecord&) -> std::int16_t { return 2; },
                        [](const BrokerRegistrationChangeRecord& r) -> std::int16_t {
                          if (r.cordoned_log_dirs) return 3;
                          if (!r.log_dirs.empty()) return 2;
                          if (r.in_controlled_shutdown != 0) return 1;
                          return 0;
                        },
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
  if (static_cast<std::size_t>(*type) >= kTypeSlots || kDecoders[static_cast<std::size_t>(*type)].decode == nullptr) {
    log::get("metadata")->error("event=metadata_record_unknown_type {}", log::kv("type", *type));
    return unexpected(StoreErrc::unknown_record_type);
  }
  const Decoder& d = kDecoders[static_cast<std::size_t>(*type)];
  auto decoded = d.decode(r, *version);
  if (!decoded && decoded.error() == StoreErrc::unsupported_version) {
    log::get("metadata")->error("event=metadata_record_unsupported_version {} {} {}", log::kv("type", *type),
                                log::kv("name", d.name), log::kv("version", *version));
  }
  return decoded;
}

Result<VersionedRecord, StoreErrc> decode_record(ByteSpan bytes) {
  return decode_record(
      std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
}

}  // namespace weir::metadata
