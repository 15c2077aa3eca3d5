// Metadata records: the typed changes the metadata log carries (topics, partitions, configs,
// producer-id blocks, brokers, features), and their on-disk framing.
//
// Each record is the value of one record in a RecordBatch v2 of the metadata log; the record key
// is null. The value is Kafka's metadata-log framing (AbstractApiMessageSerde in Kafka):
//
//   frame version   unsigned varint   always 1 (version 0 was the 2.8 preview and is refused)
//   record type     unsigned varint   the record's api key (TopicRecord = 2, ...), <= 32767
//   record version  unsigned varint   <= 32767, within the schema's versions
//   body            the record encoded at that version (protocol/schema/records/*.wsc; all
//                   metadata records are flexible from version 0, so they end in tagged fields)
//
// Nothing may follow the body. This is what `kafka-dump-log --cluster-metadata-decoder` reads.
//
// Thread safety: free functions over values; no shared state.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <variant>

#include "base/bytes.h"
#include "base/result.h"
#include "metadata/errc.h"
#include "protocol/codec.h"
#include "protocol/gen/config_record.h"
#include "protocol/gen/feature_level_record.h"
#include "protocol/gen/no_op_record.h"
#include "protocol/gen/partition_change_record.h"
#include "protocol/gen/partition_record.h"
#include "protocol/gen/producer_ids_record.h"
#include "protocol/gen/register_broker_record.h"
#include "protocol/gen/remove_topic_record.h"
#include "protocol/gen/topic_record.h"

namespace weir::metadata {

using protocol::ConfigRecord;
using protocol::FeatureLevelRecord;
using protocol::NoOpRecord;
using protocol::PartitionChangeRecord;
using protocol::PartitionRecord;
using protocol::ProducerIdsRecord;
using protocol::RegisterBrokerRecord;
using protocol::RemoveTopicRecord;
using protocol::TopicRecord;

using MetadataRecord =
    std::variant<RegisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord, PartitionChangeRecord,
                 RemoveTopicRecord, FeatureLevelRecord, ProducerIdsRecord, NoOpRecord>;

// A decoded record with the version it was written at (Kafka's ApiMessageAndVersion).
struct VersionedRecord {
  MetadataRecord record;
  std::int16_t version = 0;
  bool operator==(const VersionedRecord&) const = default;
};

inline constexpr std::uint32_t kMetadataFrameVersion = 1;

// ConfigRecord resource types (Kafka's ConfigResource.Type ids).
inline constexpr std::int8_t kConfigResourceTopic = 2;
inline constexpr std::int8_t kConfigResourceBroker = 4;

// The record's api key (its type in the frame).
[[nodiscard]] std::int16_t record_type(const MetadataRecord& record);
// The schema name, e.g. "TopicRecord" (for logs).
[[nodiscard]] std::string_view record_name(const MetadataRecord& record);
// The version weir writes for the record's type: the one Kafka 4.3.1 writes at its default
// metadata.version (RegisterBrokerRecord 4, PartitionRecord 2, PartitionChangeRecord 2, else 0).
[[nodiscard]] std::int16_t default_version(const MetadataRecord& record);

// Appends the framed record at `version` (which must lie in the schema's range) to out.
void encode_record(const MetadataRecord& record, std::int16_t version, protocol::Bytes& out);
// The framed record at default_version().
[[nodiscard]] protocol::Bytes encode_record(const MetadataRecord& record);

// Decodes one framed record. The bytes are untrusted: every failure is an error value.
[[nodiscard]] Result<VersionedRecord, StoreErrc> decode_record(std::span<const std::uint8_t> bytes);
[[nodiscard]] Result<VersionedRecord, StoreErrc> decode_record(ByteSpan bytes);

}  // namespace weir::metadata
