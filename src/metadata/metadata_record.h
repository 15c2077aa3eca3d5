// Metadata records: the typed changes the metadata log carries — every record type of kind
// `metadata` that Apache Kafka 4.3.1 writes (brokers, controllers, topics, partitions, configs,
// producer-id blocks, features, ACLs, client quotas, SCRAM credentials, delegation tokens,
// metadata transactions, ...) — and their on-disk framing.
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
#include <optional>
#include <span>
#include <string_view>
#include <variant>

#include "base/bytes.h"
#include "base/result.h"
#include "metadata/errc.h"
#include "protocol/codec.h"
#include "protocol/gen/abort_transaction_record.h"
#include "protocol/gen/access_control_entry_record.h"
#include "protocol/gen/begin_transaction_record.h"
#include "protocol/gen/broker_registration_change_record.h"
#include "protocol/gen/clear_elr_record.h"
#include "protocol/gen/client_quota_record.h"
#include "protocol/gen/config_record.h"
#include "protocol/gen/delegation_token_record.h"
#include "protocol/gen/end_transaction_record.h"
#include "protocol/gen/feature_level_record.h"
#include "protocol/gen/fence_broker_record.h"
#include "protocol/gen/no_op_record.h"
#include "protocol/gen/partition_change_record.h"
#include "protocol/gen/partition_record.h"
#include "protocol/gen/producer_ids_record.h"
#include "protocol/gen/register_broker_record.h"
#include "protocol/gen/register_controller_record.h"
#include "protocol/gen/remove_access_control_entry_record.h"
#include "protocol/gen/remove_delegation_token_record.h"
#include "protocol/gen/remove_topic_record.h"
#include "protocol/gen/remove_user_scram_credential_record.h"
#include "protocol/gen/topic_record.h"
#include "protocol/gen/unfence_broker_record.h"
#include "protocol/gen/unregister_broker_record.h"
#include "protocol/gen/user_scram_credential_record.h"
#include "protocol/gen/zk_migration_state_record.h"

namespace weir::metadata {

using protocol::AbortTransactionRecord;
using protocol::AccessControlEntryRecord;
using protocol::BeginTransactionRecord;
using protocol::BrokerRegistrationChangeRecord;
using protocol::ClearElrRecord;
using protocol::ClientQuotaRecord;
using protocol::ConfigRecord;
using protocol::DelegationTokenRecord;
using protocol::EndTransactionRecord;
using protocol::FeatureLevelRecord;
using protocol::FenceBrokerRecord;
using protocol::NoOpRecord;
using protocol::PartitionChangeRecord;
using protocol::PartitionRecord;
using protocol::ProducerIdsRecord;
using protocol::RegisterBrokerRecord;
using protocol::RegisterControllerRecord;
using protocol::RemoveAccessControlEntryRecord;
using protocol::RemoveDelegationTokenRecord;
using protocol::RemoveTopicRecord;
using protocol::RemoveUserScramCredentialRecord;
using protocol::TopicRecord;
using protocol::UnfenceBrokerRecord;
using protocol::UnregisterBrokerRecord;
using protocol::UserScramCredentialRecord;
using protocol::ZkMigrationStateRecord;

using MetadataRecord =
    std::variant<RegisterBrokerRecord, UnregisterBrokerRecord, TopicRecord, PartitionRecord, ConfigRecord, PartitionChangeRecord, FenceBrokerRecord, UnfenceBrokerRecord, RemoveTopicRecord, DelegationTokenRecord, UserScramCredentialRecord, FeatureLevelRecord, ClientQuotaRecord, ProducerIdsRecord, BrokerRegistrationChangeRecord, AccessControlEntryRecord, RemoveAccessControlEntryRecord, NoOpRecord, ZkMigrationStateRecord, RemoveUserScramCredentialRecord, BeginTransactionRecord, EndTransactionRecord, AbortTransactionRecord, RemoveDelegationTokenRecord, RegisterControllerRecord, ClearElrRecord>;

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
inline constexpr std::int8_t kConfigResourceGroup = 32;

// The record's api key (its type in the frame).
[[nodiscard]] std::int16_t record_type(const MetadataRecord& record);
// The schema name, e.g. "TopicRecord" (for logs).
[[nodiscard]] std::string_view record_name(const MetadataRecord& record);
// The schema name of a record type (api key), or nullopt if MetadataRecord has no such type.
[[nodiscard]] std::optional<std::string_view> record_type_name(std::int16_t type) noexcept;
// The version weir writes for the record: the one Kafka 4.3.1 writes at its default
// metadata.version (4.3-IV0, feature level 30): RegisterBrokerRecord 4, PartitionRecord 2,
// PartitionChangeRecord 2 (MetadataVersion.*RecordVersion()); BrokerRegistrationChangeRecord
// as Kafka's ReplicationControlManager chooses by content — 3 when CordonedLogDirs is set, 2
// with LogDirs, 1 with InControlledShutdown, else 0; every other type 0 (its only version).
[[nodiscard]] std::int16_t default_version(const MetadataRecord& record);

// Appends the framed record at `version` (which must lie in the schema's range) to out.
void encode_record(const MetadataRecord& record, std::int16_t version, protocol::Bytes& out);
// The framed record at default_version().
[[nodiscard]] protocol::Bytes encode_record(const MetadataRecord& record);

// Decodes one framed record. The bytes are untrusted: every failure is an error value, never a
// skip — an unknown record type is unknown_record_type, a known type at a version outside its
// schema unsupported_version (both logged with the type, its name and the version).
[[nodiscard]] Result<VersionedRecord, StoreErrc> decode_record(std::span<const std::uint8_t> bytes);
[[nodiscard]] Result<VersionedRecord, StoreErrc> decode_record(ByteSpan bytes);

}  // namespace weir::metadata
